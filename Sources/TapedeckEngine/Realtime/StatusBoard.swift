import Synchronization

/// What the engine is doing.
public enum EngineState: Int, Sendable {
    /// Created, not started.
    case idle = 0
    /// The audio thread is running.
    case running = 1
    /// Finished normally (stop command, duration reached, end of playback).
    case finished = 2
    /// Stopped by a device or disk failure; see ``EngineStatus/lastError``.
    case failed = 3
}

/// One xrun: where on the timeline it happened and how much device time it swallowed.
public struct XrunEvent: Sendable, Equatable, BitwiseCopyable {
    /// Take frame (frames recorded so far) or, without a take, timeline frame where it hit.
    public var frame: Int64
    /// Device frames lost, filled with silence in the take.
    public var lostFrames: Int64
}

/// A snapshot of the engine for the UI or the headless banner.
public struct EngineStatus: Sendable {
    /// Running, finished or failed.
    public var state: EngineState
    /// Transport position on the timeline, in frames.
    public var positionFrame: Int64
    /// Frames in the take so far (including silence for xruns).
    public var recordedFrames: Int64
    /// Peak of each recorded channel over the last meter window (linear, 0…1).
    public var peaks: [Float]
    /// RMS of each recorded channel over the last meter window (linear).
    public var rms: [Float]
    /// Peak of the stereo output over the last meter window.
    public var outputPeaks: [Float]
    /// Xruns so far.
    public var xrunCount: Int
    /// Capture ring fill, 0…1 (how far the disk lags).
    public var captureRingFill: Double
    /// The most the capture ring has held, in frames, since the start.
    public var captureRingHighWaterFrames: Int = 0
    /// DSP load: the busiest recent period's processing time ÷ its duration (1 = a whole
    /// period; above 1 the device runs dry).
    public var dspLoad: Double = 0
    /// Playback ring fill, 0…1 (the smallest over the tracks; low means the disk is late).
    public var playbackRingFill: Double
    /// Free bytes on the disk holding the take (-1 when unknown).
    public var diskFreeBytes: Int64
    /// The failure, when ``state`` is ``EngineState/failed``.
    public var lastError: String?
}

/// The atomics the audio thread publishes into; the control thread reads them into an
/// ``EngineStatus``. Per-channel meters are arrays of atomics allocated once.
final class StatusBoard: @unchecked Sendable {
    let state = Atomic<Int>(EngineState.idle.rawValue)
    let positionFrame = Atomic<Int64>(0)
    let recordedFrames = Atomic<Int64>(0)
    let xrunCount = Atomic<Int>(0)
    let deviceErrorCode = Atomic<Int32>(0)
    let diskFreeBytes = Atomic<Int64>(-1)
    let playbackFillPermille = Atomic<Int>(1000)
    /// The most frames the capture ring has held at once (how close the disk came to losing).
    let captureHighWaterFrames = Atomic<Int>(0)
    /// The busiest period of the last tenth of a second: processing time ÷ period time, ‰.
    let dspLoadPermille = Atomic<Int>(0)
    let meterCount: Int
    let peakBits: UnsafeMutablePointer<Atomic<UInt32>>
    let rmsBits: UnsafeMutablePointer<Atomic<UInt32>>
    let outputPeakBits: UnsafeMutablePointer<Atomic<UInt32>>
    /// Text errors come from the disk and control threads, which may lock.
    let errorText = Mutex<String?>(nil)

    init(meterCount: Int) {
        self.meterCount = meterCount
        peakBits = .allocate(capacity: max(meterCount, 1))
        rmsBits = .allocate(capacity: max(meterCount, 1))
        outputPeakBits = .allocate(capacity: 2)
        for i in 0..<max(meterCount, 1) {
            (peakBits + i).initialize(to: Atomic(0))
            (rmsBits + i).initialize(to: Atomic(0))
        }
        for i in 0..<2 { (outputPeakBits + i).initialize(to: Atomic(0)) }
    }

    deinit {
        peakBits.deinitialize(count: max(meterCount, 1)); peakBits.deallocate()
        rmsBits.deinitialize(count: max(meterCount, 1)); rmsBits.deallocate()
        outputPeakBits.deinitialize(count: 2); outputPeakBits.deallocate()
    }

    /// Publishes a meter value. Audio thread: no allocation, no locks.
    @inline(__always)
    func setMeter(_ index: Int, peak: Float, rms: Float) {
        peakBits[index].store(peak.bitPattern, ordering: .relaxed)
        rmsBits[index].store(rms.bitPattern, ordering: .relaxed)
    }

    /// Records a disk/control-side failure (first one wins). Not the audio thread.
    func fail(_ text: String) {
        errorText.withLock { if $0 == nil { $0 = text } }
    }
}
