#if canImport(Glibc)
import Glibc
#endif
import TapedeckCore

/// Starts and joins one thread outside Swift concurrency: the audio thread (SCHED_FIFO
/// when allowed) or a disk thread (normal scheduling, optionally a better nice value).
/// Public for the backends in TapedeckDevices that run a thread of their own (the ALSA
/// sequencer's MIDI thread).
public final class RealtimeThread: @unchecked Sendable {
    private var thread: pthread_t?
    private let name: String
    private let body: (Bool) -> Void
    private var wantRealtime = false
    private var wantPriority: Int32 = 0
    private var wantNice: Int32 = 0

    /// Creates a thread that will run `body` once started; `body` learns whether SCHED_FIFO
    /// was granted. Control thread.
    public init(name: String, body: @escaping (Bool) -> Void) {
        self.name = name
        self.body = body
    }

    /// Starts the thread; with `realtime`, asks for SCHED_FIFO at `priority` and keeps normal
    /// scheduling when that is refused (the body is told). `nice` is tried for normal threads
    /// (a negative value needs privilege and is skipped quietly without it). Control thread.
    public func start(priority: Int32 = 0, realtime: Bool = false, nice: Int32 = 0) -> Bool {
        wantRealtime = realtime
        wantPriority = priority
        wantNice = nice
        let box = Unmanaged.passRetained(self)
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        var handle = pthread_t()
        let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { arg in
            let me = Unmanaged<RealtimeThread>.fromOpaque(arg!).takeRetainedValue()
            // Named, so `top -H` tells the audio thread from the disk's and the writer's.
            ThreadName.setCurrent(me.name)
            var realtime = false
            if me.wantRealtime {
                var param = sched_param()
                param.sched_priority = me.wantPriority
                realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
            } else if me.wantNice != 0 {
                // Linux keeps the nice value per thread; 0 names the calling one.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, me.wantNice)
            }
            me.body(realtime)
            return nil
        }
        if pthread_create(&handle, &attr, entry, box.toOpaque()) != 0 {
            box.release()
            return false
        }
        thread = handle
        return true
    }

    /// Waits for the body to return. Control thread.
    public func join() {
        if let t = thread { pthread_join(t, nil) }
        thread = nil
    }
}

/// Sleeps `nanoseconds` without touching the allocator. Audio or disk thread, or the control
/// thread waiting on one (public for TapedeckDevices' latency calibration, which does).
@inline(__always)
public func sleepNanoseconds(_ nanoseconds: Int64) {
    var ts = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    var rest = timespec()
    while nanosleep(&ts, &rest) != 0 && errno == EINTR { ts = rest }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock MIDI stamps and device period times are on.
/// Any thread, the audio thread included (a vDSO call). Public for the device backends
/// (TapedeckDevices), which stamp with it.
@inline(__always)
public func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// A counting semaphore a disk thread sleeps on and the audio thread signals. `signal` is one
/// atomic increment (and a futex wake only when someone sleeps): no allocation, no lock the
/// audio thread could wait on.
final class WakeSignal: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    /// Control thread.
    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Wakes the sleeper (or lets its next wait return at once). Any thread, the audio thread
    /// included.
    @inline(__always)
    func signal() { sem_post(semaphore) }

    /// Sleeps until signalled or `timeoutNanoseconds` pass, then swallows any further signals
    /// already counted (one wake-up serves them all). Disk thread.
    func wait(timeoutNanoseconds: Int64) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var total = Int64(now.tv_nsec) + timeoutNanoseconds
        var deadline = timespec(tv_sec: now.tv_sec + Int(total / 1_000_000_000), tv_nsec: 0)
        total %= 1_000_000_000
        deadline.tv_nsec = Int(total)
        while sem_timedwait(semaphore, &deadline) != 0 && errno == EINTR {}
        while sem_trywait(semaphore) == 0 {}
    }
}
