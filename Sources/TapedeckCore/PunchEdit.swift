/// Placing a punched-in take over what a track already has.
extension Session {
    /// Puts `take` on track `track` in place of what lies under it: every region overlapping
    /// the take is cut back so it ends `crossfadeFrames` into the take (fading out there) and
    /// resumes `crossfadeFrames` before the take's end (fading in), and the take fades in and
    /// out over the same frames — short crossfades at both edges, no gap and no doubling.
    public mutating func punchIn(track: Int, take: Region, crossfadeFrames: Int64) {
        guard tracks.indices.contains(track) else { return }
        let a = take.timelineStartFrame, b = take.timelineEndFrame
        let x = max(0, min(crossfadeFrames, take.lengthFrames / 2))
        var kept: [Region] = []
        for r in tracks[track].regions {
            let start = r.timelineStartFrame, end = r.timelineEndFrame
            guard end > a && start < b else { kept.append(r); continue }
            if start < a {
                var left = r
                left.lengthFrames = min(end, a + x) - start
                left.fadeOutFrames = min(left.lengthFrames, max(x, min(left.fadeOutFrames, left.lengthFrames)))
                left.fadeInFrames = min(left.fadeInFrames, left.lengthFrames - left.fadeOutFrames)
                kept.append(left)
            }
            if end > b {
                var right = r
                let cut = max(start, b - x) - start
                right.timelineStartFrame = start + cut
                right.sourceOffsetFrame += Int64((Double(cut) * r.rate).rounded())
                right.lengthFrames = end - right.timelineStartFrame
                right.fadeInFrames = min(right.lengthFrames, max(x, 0))
                right.fadeOutFrames = min(right.fadeOutFrames, right.lengthFrames - right.fadeInFrames)
                kept.append(right)
            }
        }
        var placed = take
        placed.fadeInFrames = x
        placed.fadeOutFrames = x
        kept.append(placed)
        tracks[track].regions = kept
    }
}
