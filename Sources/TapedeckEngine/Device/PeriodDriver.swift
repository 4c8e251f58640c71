import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A backend whose streams are moved by blocking reads and writes of one period (ALSA, the
/// offline clock, test loopbacks). ``PeriodDriver`` turns such a device into a callback-shaped
/// ``AudioDevice``: it owns the audio thread and calls the client once per period.
public protocol PeriodDevice: AudioDevice {
    /// The thread that moves this device's periods.
    var driver: PeriodDriver { get }

    /// Prefills playback and starts the streams together. Control thread, before the driver's
    /// thread runs.
    func startStreams() throws(DeviceError)

    /// Reads exactly `frameCount` frames (one period) into one buffer per capture channel,
    /// blocking until the device has them.
    ///
    /// Audio thread: no allocation, no locks, no logging, no throwing.
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult

    /// Writes exactly `frameCount` frames (one period) from one buffer per playback channel,
    /// blocking while the device's buffer is full.
    ///
    /// Audio thread: no allocation, no locks, no logging, no throwing.
    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult

    /// Where the period about to render began on the device's clock (see
    /// ``DevicePeriodTime``): asked after the period was read (a capturing device) or, for
    /// playback only, before it is written. Nil when the device cannot tell.
    ///
    /// Audio thread: no allocation, no locks, no logging, no throwing.
    func periodTime(frameCount: Int) -> DevicePeriodTime?

    /// Stops the streams, dropping what is queued. Control thread, after the driver's thread ended.
    func stopStreams()
}

extension PeriodDevice {
    /// Starts the streams and the driver's thread. Control thread.
    public func start(client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError) {
        try driver.start(device: self, client: client, realtimePriority: realtimePriority)
    }

    /// Ends the driver's thread (within a period, or the device's stall timeout when it hangs),
    /// then stops the streams. Control thread.
    public func stop() { driver.stop(device: self) }
}

/// The audio thread of a ``PeriodDevice``: read a period, let the client render it, write a
/// period; xruns and failures are handed to the client between cycles.
public final class PeriodDriver: @unchecked Sendable {
    private var thread: RealtimeThread?
    private let stopRequested = Atomic<Bool>(false)
    private var input: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    private var output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    private var inputCount = 0
    private var outputCount = 0
    private var streamsRunning = false

    /// A driver; buffers are made when it starts. Control thread.
    public init() {}

    deinit { freeBuffers() }

    /// Whether the thread is running. Control thread.
    public var isRunning: Bool { thread != nil }

    /// Allocates the period buffers, starts the streams, then the thread. Control thread.
    func start(device: some PeriodDevice, client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError) {
        guard thread == nil else { throw DeviceError(device: device.configuration.name, reason: "it is already running") }
        let config = device.configuration
        freeBuffers()
        inputCount = config.captureChannels
        outputCount = max(config.playbackChannels, 2)
        input = Self.buffers(inputCount, frames: config.periodFrames)
        output = Self.buffers(outputCount, frames: config.periodFrames)
        stopRequested.store(false, ordering: .relaxed)
        try device.startStreams()
        streamsRunning = true
        // Unowned inside the thread: the device and the client outlive it (stop joins it),
        // and no reference count moves per period.
        let loop = Loop(device: device, client: client, input: input!, output: output!,
                        frames: config.periodFrames, captures: inputCount > 0,
                        plays: config.playbackChannels > 0, paced: config.isPaced,
                        periodNanoseconds: Int64(config.periodFrames) * 1_000_000_000 / Int64(max(config.sampleRate, 1)),
                        stop: self)
        let t = RealtimeThread(name: "tapedeck-audio") { realtime in loop.run(realtime: realtime) }
        guard t.start(priority: 70, realtime: realtimePriority) else {
            device.stopStreams()
            streamsRunning = false
            throw DeviceError(device: config.name, reason: "cannot start the audio thread")
        }
        thread = t
    }

    /// Asks the thread to end after its cycle, waits for it, stops the streams. Public for
    /// backends in other modules, whose `deinit` ends a driver still running. Control thread.
    public func stop(device: some PeriodDevice) {
        stopRequested.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
        if streamsRunning {
            device.stopStreams()
            streamsRunning = false
        }
    }

    /// Audio thread: a relaxed load.
    @inline(__always)
    fileprivate var shouldStop: Bool { stopRequested.load(ordering: .acquiring) }

    private static func buffers(_ count: Int, frames: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
        let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: max(count, 1))
        for c in 0..<max(count, 1) {
            let b = UnsafeMutablePointer<Float>.allocate(capacity: max(frames, 1))
            b.initialize(repeating: 0, count: max(frames, 1))
            (table + c).initialize(to: b)
        }
        return table
    }

    private func freeBuffers() {
        if let input {
            for c in 0..<max(inputCount, 1) { input[c].deallocate() }
            input.deallocate()
        }
        if let output {
            for c in 0..<max(outputCount, 1) { output[c].deallocate() }
            output.deallocate()
        }
        input = nil
        output = nil
    }

    /// What the thread runs: everything it needs held without reference counting.
    private struct Loop: @unchecked Sendable {
        unowned(unsafe) let device: any PeriodDevice
        unowned(unsafe) let client: any AudioDeviceClient
        let input: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
        let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
        let frames: Int
        let captures: Bool
        let plays: Bool
        /// Whether the device keeps time itself; if not, idle cycles are skipped a period apart.
        let paced: Bool
        let periodNanoseconds: Int64
        unowned(unsafe) let stop: PeriodDriver

        /// Audio thread: no allocation, no locks, no logging.
        func run(realtime: Bool) {
            client.audioThreadBegins(realtime: realtime)
            cycle: while !stop.shouldStop {
                if !client.beginCycle() && !paced {
                    sleepNanoseconds(periodNanoseconds)
                    continue cycle
                }
                if captures {
                    switch device.read(into: input, frameCount: frames) {
                    case .ok: break
                    case .xrun(let lost):
                        client.deviceDidXrun(lostFrames: lost)
                        continue cycle
                    case .failed(let code):
                        client.deviceDidFail(code: code)
                        break cycle
                    }
                }
                if let time = device.periodTime(frameCount: frames) { client.devicePeriodBegan(time) }
                client.renderCycle(input: input, output: output, frameCount: frames)
                if plays {
                    switch device.write(from: output, frameCount: frames) {
                    case .ok: break
                    case .xrun(let lost): client.deviceDidXrun(lostFrames: lost)
                    case .failed(let code):
                        client.deviceDidFail(code: code)
                        break cycle
                    }
                }
            }
            client.audioThreadEnds()
        }
    }
}
