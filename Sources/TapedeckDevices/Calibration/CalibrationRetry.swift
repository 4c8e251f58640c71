/// When xruns disturb a calibration: which ones spoil the run under way, and whether another
/// run may start or the measurement gives up.
///
/// A run is the click train played and recorded once (~2.3 s at the default settings). An
/// xrun that cost frames (device time passed unheard: on ALSA the two streams slipped, on JACK
/// a client of the loop may have missed a cycle) can move the round trip, so the run it falls
/// in starts over. One that cost nothing (JACK tells every client of any client's xrun, and
/// of every change of its graph) leaves the stream unbroken and the run stands; the
/// analysis still demands every click line up at one lag.
///
/// A busy machine or server xruns now and then, and a user who asked for a measurement
/// expects one: runs start over for as long as the device has run for `budgetFrames` (heard
/// and lost frames both, so a stalled server uses it up too), not a fixed number of times. A
/// run started within the budget is let finish; an xrun that spoils a run after it gives up.
///
/// Audio thread: a value type, arithmetic only.
struct CalibrationRetry: Equatable {
    /// Device time after which no run starts over.
    let budgetFrames: Int64
    /// Device time since the measurement began: frames heard plus frames lost.
    private(set) var elapsedFrames: Int64 = 0
    /// Xruns that spoiled a run (the last one, when it gave up, included).
    private(set) var spoilingXruns = 0
    /// Xruns told that cost nothing (the stream unbroken): no run starts over for them.
    private(set) var harmlessXruns = 0
    /// Runs begun, the first included.
    private(set) var runs = 1

    /// What the client does about one xrun.
    enum Decision: Equatable {
        /// Nothing: the run under way stands (or none is under way).
        case carryOn
        /// The run under way is spoiled; start another.
        case startOver
        /// The run under way is spoiled and the budget is spent: the measurement fails.
        case giveUp
    }

    init(budgetFrames: Int64) { self.budgetFrames = max(budgetFrames, 0) }

    /// Frames the device moved in one cycle.
    mutating func heard(frames: Int64) { elapsedFrames += max(frames, 0) }

    /// An xrun, or a part of one a device tells late: `lostFrames` is what it cost (0: the
    /// stream is unbroken), `skippedNow` the frames of device time skipped with this call
    /// (what it told before was counted then). `runUnderWay`: the current run has recorded a
    /// frame and is not already spoiled (a run starting over records nothing an xrun could
    /// spoil until its settling time is over, and the rest of an xrun already counted finds
    /// none under way).
    mutating func xrun(lostFrames: Int64, skippedNow: Int64, runUnderWay: Bool) -> Decision {
        elapsedFrames += max(skippedNow, 0)
        guard lostFrames > 0 || skippedNow > 0 else {
            harmlessXruns += 1
            return .carryOn
        }
        guard runUnderWay else { return .carryOn }
        spoilingXruns += 1
        guard elapsedFrames < budgetFrames else { return .giveUp }
        runs += 1
        return .startOver
    }
}
