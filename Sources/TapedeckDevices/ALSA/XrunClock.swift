/// How much device time an xrun cost a device that cannot count its frames across one (an
/// ALSA PCM stops at an xrun and starts again from zero): the device's frames are compared
/// with CLOCK_MONOTONIC around the gap.
///
/// Each period that moves (was read, or written, by the device) gives the moment its
/// device clock would have started at had it run at its nominal rate ever since: the moment
/// it moved less the frames moved so far. A thread that wakes late only makes that moment
/// later, so the earliest of the last few periods' is the device's (a moment a period or
/// two old: a device whose clock stopped a while — the JACK dummy server starved of CPU does
/// — is followed within ``window`` periods, and its stop is not taken for frames an xrun lost
/// later). When the restarted device moves its first frames, the device time since then that
/// no frame accounts for is what the xrun cost.
///
/// Measured on `jacktap` (ALSA's JACK plugin on the dummy server) with the audio thread stalled
/// 100 ms: the restart taken at its request and the refused period counted twice put
/// everything after the xrun 449 frames late on the timeline; a JACK server stopped for 100 ms
/// two seconds earlier was counted as 3900 frames lost at the next xrun.
///
/// Audio thread, once made: arithmetic on memory it owns.
final class XrunClock: @unchecked Sendable {
    /// Periods whose moments are kept.
    static let window = 8

    private let sampleRate: Int64
    private let moments: UnsafeMutablePointer<Int64>
    private var count = 0
    private var next = 0
    /// Device frames accounted for: moved, or lost to xruns.
    private(set) var accountedFrames: Int64 = 0

    /// A clock for a device at `sampleRate`. Control thread.
    init(sampleRate: Int) {
        self.sampleRate = Int64(max(sampleRate, 1))
        moments = .allocate(capacity: XrunClock.window)
        moments.initialize(repeating: 0, count: XrunClock.window)
    }

    deinit { moments.deallocate() }

    /// Whether a period has moved since ``reset()`` (before that, nothing can be measured:
    /// the start itself — JACK connecting, a card waking up — is not device time).
    var isAnchored: Bool { count > 0 }

    /// Forgets everything (the streams start). Audio or control thread, not both.
    func reset() {
        count = 0
        next = 0
        accountedFrames = 0
    }

    /// `frames` moved, seen `nanoseconds` (CLOCK_MONOTONIC).
    func moved(_ frames: Int, atNanoseconds nanoseconds: Int64) {
        accountedFrames += Int64(frames)
        moments[next] = nanoseconds - accountedFrames * 1_000_000_000 / sampleRate
        next = (next + 1) % XrunClock.window
        count = min(count + 1, XrunClock.window)
    }

    /// `frames` the client went through that the device did not take (a period refused by
    /// an xrun): accounted for, not lost, but with no moment of their own.
    func passed(_ frames: Int) { accountedFrames += Int64(frames) }

    /// The restarted device moved its first `frames`, seen `nanoseconds`: the frames the xrun
    /// lost, now accounted for (0 before any period moved).
    func restarted(movedFrames frames: Int, atNanoseconds nanoseconds: Int64) -> Int64 {
        guard count > 0 else { return 0 }
        var start = moments[0]
        for i in 1..<count { start = min(start, moments[i]) }
        let due = ((nanoseconds - start) * sampleRate + 500_000_000) / 1_000_000_000
        let lost = max(0, due - accountedFrames - Int64(frames))
        accountedFrames += lost
        return lost
    }
}
