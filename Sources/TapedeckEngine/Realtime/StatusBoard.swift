import Synchronization

/// The atomics the audio thread publishes into and the control thread reads into an
/// ``EngineStatus``; allocated once with the engine.
final class StatusBoard: @unchecked Sendable {
    let transport = Atomic<Int>(EngineTransportState.stopped.rawValue)
    let positionFrame = Atomic<Int64>(0)
    let deviceFrame = Atomic<Int64>(0)
    let xrunCount = Atomic<Int>(0)
    let underrunFrames = Atomic<Int64>(0)
    let droppedFrames = Atomic<Int64>(0)
    let deviceErrorCode = Atomic<Int32>(0)
    let deviceRunning = Atomic<Bool>(false)
    /// -1 unknown, 0 refused, 1 granted.
    let realtime = Atomic<Int>(-1)
    let diskFreeBytes = Atomic<Int64>(-1)
    /// Recording time left on the disk that fills first, while takes are written (-1: none).
    let diskMillisecondsLeft = Atomic<Int64>(-1)
    let playbackFillPermille = Atomic<Int>(1000)
    /// The most frames any capture ring has held at once.
    let captureHighWaterFrames = Atomic<Int>(0)
    /// NaN and infinite samples the mix bus turned into silence.
    let busNonFiniteSamples = Atomic<Int64>(0)
    /// The busiest period of the last tenth of a second: processing time ÷ period time, ‰.
    let dspLoadPermille = Atomic<Int>(0)
    /// The generation of the graph the audio thread renders.
    let installedGeneration = Atomic<Int>(0)
    /// The serial of the last command the audio thread applied.
    let appliedSerial = Atomic<UInt64>(0)
    /// Text errors come from the disk and control threads, which may lock.
    let errorText = Mutex<String?>(nil)

    /// Records a disk/control-side failure (first one wins). Not the audio thread.
    func fail(_ text: String) {
        errorText.withLock { if $0 == nil { $0 = text } }
    }
}
