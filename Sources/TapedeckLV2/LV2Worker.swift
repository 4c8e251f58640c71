import CLV2
import Synchronization
import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// The host side of the LV2 worker extension for one plugin instance: `run()` schedules slow
/// work (loading a file), a thread of ours does it, and the answer goes back to the plugin on
/// the audio thread after its next `run()`.
///
/// Realtime rendering queues requests in a ring and wakes the worker thread with a
/// semaphore (both realtime-safe). Offline rendering (`isRealtime` false) does the work at
/// once, inside `schedule`, so an export sounds the same however busy the machine is.
final class LV2Worker: @unchecked Sendable {
    /// Largest request or response the rings carry.
    static let packetCapacity = 8192

    private let isRealtime: Bool
    private let requests = ByteRing(minimumCapacity: 4 * LV2Worker.packetCapacity)
    private let responses = ByteRing(minimumCapacity: 4 * LV2Worker.packetCapacity)
    private let requestBuffer = UnsafeMutableRawPointer.allocate(byteCount: LV2Worker.packetCapacity, alignment: 16)
    private let responseBuffer = UnsafeMutableRawPointer.allocate(byteCount: LV2Worker.packetCapacity, alignment: 16)
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private let stopping = Atomic<Bool>(false)
    private var thread: pthread_t?
    private var interface: UnsafePointer<LV2_Worker_Interface>?
    private var handle: LV2_Handle?

    /// The `LV2_Worker_Schedule` passed to the plugin as worker:schedule.
    let scheduleFeatureData = UnsafeMutablePointer<LV2_Worker_Schedule>.allocate(capacity: 1)

    /// A worker for an instance that renders in real time or not. Off the audio thread.
    init(isRealtime: Bool) {
        self.isRealtime = isRealtime
        sem_init(semaphore, 0, 0)
        scheduleFeatureData.initialize(to: LV2_Worker_Schedule(handle: nil, schedule_work: { handle, size, data in
            guard let handle else { return LV2_WORKER_ERR_UNKNOWN }
            return Unmanaged<LV2Worker>.fromOpaque(handle).takeUnretainedValue().schedule(size: size, data: data)
        }))
        scheduleFeatureData.pointee.handle = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        stop()
        sem_destroy(semaphore)
        semaphore.deallocate()
        requestBuffer.deallocate()
        responseBuffer.deallocate()
        scheduleFeatureData.deallocate()
    }

    /// Connects the plugin's worker interface once it is instantiated and starts the thread
    /// (realtime only). Requests made before this (during instantiation) are served now.
    /// Off the audio thread.
    func attach(_ interface: UnsafePointer<LV2_Worker_Interface>, handle: LV2_Handle?) {
        self.interface = interface
        self.handle = handle
        if isRealtime {
            let retained = Unmanaged.passRetained(self).toOpaque()
            var id = pthread_t()
            if pthread_create(&id, nil, { argument in
                ThreadName.setCurrent("tapedeck-lv2")
                let worker = Unmanaged<LV2Worker>.fromOpaque(argument!).takeRetainedValue()
                worker.serve()
                return nil
            }, retained) == 0 {
                thread = id
            } else {
                Unmanaged<LV2Worker>.fromOpaque(retained).release()
            }
        } else {
            while let size = requests.read(into: requestBuffer, bufferCapacity: Self.packetCapacity) {
                work(size: size, data: requestBuffer)
            }
        }
    }

    /// Ends the thread (after the work in hand) and waits for it. Off the audio thread.
    func stop() {
        guard let id = thread else { return }
        thread = nil
        stopping.store(true, ordering: .releasing)
        sem_post(semaphore)
        pthread_join(id, nil)
    }

    /// worker:schedule. Audio thread (from the plugin's `run`), or the preparing thread
    /// during a state restore. Realtime: copies the request into the ring and wakes the thread
    /// (no allocation, no lock). Offline: does the work here.
    private func schedule(size: UInt32, data: UnsafeRawPointer?) -> LV2_Worker_Status {
        if !isRealtime && interface != nil {
            work(size: Int(size), data: data)
            return LV2_WORKER_SUCCESS
        }
        guard requests.write(size: size, data: data) else { return LV2_WORKER_ERR_NO_SPACE }
        if isRealtime { sem_post(semaphore) }
        return LV2_WORKER_SUCCESS
    }

    /// The worker thread: waits for requests and hands each to the plugin's `work`.
    private func serve() {
        while true {
            sem_wait(semaphore)
            if stopping.load(ordering: .acquiring) { return }
            guard let size = requests.read(into: requestBuffer, bufferCapacity: Self.packetCapacity) else { continue }
            if size <= Self.packetCapacity { work(size: size, data: requestBuffer) }
        }
    }

    private func work(size: Int, data: UnsafeRawPointer?) {
        guard let work = interface?.pointee.work else { return }
        _ = work(handle, { respondHandle, size, data in
            guard let respondHandle else { return LV2_WORKER_ERR_UNKNOWN }
            let worker = Unmanaged<LV2Worker>.fromOpaque(respondHandle).takeUnretainedValue()
            return worker.responses.write(size: size, data: data) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
        }, Unmanaged.passUnretained(self).toOpaque(), UInt32(size), data)
    }

    /// Audio thread, after the plugin's `run`: delivers every response waiting, then tells the
    /// plugin the cycle's responses are done. Realtime-safe (reads a preallocated ring).
    func deliverResponses() {
        guard let interface = interface?.pointee else { return }
        while let size = responses.read(into: responseBuffer, bufferCapacity: Self.packetCapacity) {
            if size <= Self.packetCapacity { _ = interface.work_response?(handle, UInt32(size), responseBuffer) }
        }
        _ = interface.end_run?(handle)
    }
}
