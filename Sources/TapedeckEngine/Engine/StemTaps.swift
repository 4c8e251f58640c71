/// Where a freewheeling export takes each strip's own output for its stem: the strip after its
/// chain, fader and pan, as it leaves for the master, a bus or device outputs (panned to a
/// stereo pair whatever its destination), held back by what its path lacks of the output's
/// latency, so every stem lines up with the mix the same render makes. One stereo pair of
/// period buffers per tapped strip.
///
/// Made, read and released by the exporting thread; written by the render it drives (which
/// runs on that thread, or on the helpers it waits for).
final class StemTaps: @unchecked Sendable {
    /// Frames each buffer holds (a period).
    let frames: Int
    /// Taps taken before the fader, in the strip's own channels (a freeze), rather than its
    /// output panned to a pair (a stem).
    let preFader: Bool
    let trackCount: Int
    /// For each track, its pair (a table of two buffers), or nil when it has no stem.
    private let pairs: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<Float>>?>
    /// For each tapped strip with a delay, its delay (kept alive by ``lines``).
    private let delays: UnsafeMutablePointer<Unmanaged<DelayLine>?>
    private var lines: [DelayLine] = []

    /// Pairs for `tracks` (indices into the session's tracks, below `trackCount`); each
    /// strip's stem is held back by `delayFrames[strip]` (none when absent).
    init(tracks: [Int], trackCount: Int, frames: Int, delayFrames: [Int] = [], preFader: Bool = false) {
        self.frames = frames
        self.preFader = preFader
        self.trackCount = trackCount
        pairs = .allocate(capacity: max(trackCount, 1))
        pairs.initialize(repeating: nil, count: max(trackCount, 1))
        for t in tracks where t >= 0 && t < trackCount && pairs[t] == nil {
            let pair = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
            for c in 0..<2 {
                (pair + c).initialize(to: .allocate(capacity: frames))
                pair[c].initialize(repeating: 0, count: frames)
            }
            pairs[t] = pair
        }
        delays = .allocate(capacity: max(trackCount, 1))
        delays.initialize(repeating: nil, count: max(trackCount, 1))
        for t in tracks where t >= 0 && t < trackCount && t < delayFrames.count && delayFrames[t] > 0 && delays[t] == nil {
            let line = DelayLine(delayFrames: delayFrames[t], channelCount: 2, maxFrames: frames)
            lines.append(line)
            delays[t] = Unmanaged.passUnretained(line)
        }
    }

    deinit {
        for t in 0..<trackCount {
            guard let pair = pairs[t] else { continue }
            pair[0].deallocate()
            pair[1].deallocate()
            pair.deallocate()
        }
        pairs.deallocate()
        delays.deallocate()
    }

    /// Holds track `track`'s pair back by its delay (after it was written this period).
    /// Render thread: copies only.
    @inline(__always)
    func delay(track: Int, frameCount n: Int) {
        guard track < trackCount, let line = delays[track], let pair = pairs[track] else { return }
        line._withUnsafeGuaranteedRef { $0.process(UnsafePointer(pair), channelCount: 2, frameCount: n) }
    }

    /// Track `track`'s pair, or nil. Render thread: a load.
    @inline(__always)
    func pair(track: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>>? {
        track < trackCount ? pairs[track] : nil
    }
}
