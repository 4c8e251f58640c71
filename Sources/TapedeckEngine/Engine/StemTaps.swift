/// Where a freewheeling export takes each track's own output for its stem: the track after its
/// chain, fader and pan, just before it is summed onto the bus, so the stems add up to the mix
/// the same render makes. One stereo pair of period buffers per tapped track.
///
/// Made, read and released by the exporting thread; written by the render it drives (which
/// runs on that thread, or on the helpers it waits for).
final class StemTaps: @unchecked Sendable {
    /// Frames each buffer holds (a period).
    let frames: Int
    let trackCount: Int
    /// For each track, its pair (a table of two buffers), or nil when it has no stem.
    private let pairs: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<Float>>?>

    /// Pairs for `tracks` (indices into the session's tracks, below `trackCount`).
    init(tracks: [Int], trackCount: Int, frames: Int) {
        self.frames = frames
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
    }

    deinit {
        for t in 0..<trackCount {
            guard let pair = pairs[t] else { continue }
            pair[0].deallocate()
            pair[1].deallocate()
            pair.deallocate()
        }
        pairs.deallocate()
    }

    /// Track `track`'s pair, or nil. Render thread: a load.
    @inline(__always)
    func pair(track: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>>? {
        track < trackCount ? pairs[track] : nil
    }
}
