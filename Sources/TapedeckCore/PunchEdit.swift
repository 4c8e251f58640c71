/// Placing a punched-in take over what a track already has.
extension Session {
    /// The crossfade at a punch's edges: 5 ms, short enough to keep the timing, long enough
    /// not to click.
    public static let punchCrossfadeSeconds = 0.005

    /// ``punchCrossfadeSeconds`` in frames at this session's rate.
    public var punchCrossfadeFrames: Int64 { Int64((Session.punchCrossfadeSeconds * Double(sampleRate)).rounded()) }

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

extension Region {
    /// A take recorded while the transport ran at `speed` spans speed × its frames of
    /// timeline: it is placed over exactly that span, played at rate 1/speed (pitch kept), so
    /// a part practised at 70 % plays in time at 100 %, and it is marked with its speed.
    public mutating func scale(recordedSpeed speed: Double) {
        guard speed != 1, speed.isFinite, speed > 0 else { return }
        let sourceFrames = lengthFrames
        lengthFrames = max(1, Int64((Double(sourceFrames) * speed).rounded()))
        rate = Double(sourceFrames) / Double(lengthFrames)
        recordedSpeed = speed
    }

    /// The passes of a loop recording held back to back in one file: one region per pass,
    /// each on `loop`'s start and the loop's length (the last one shorter when recording
    /// stopped mid-pass). The first pass starts at `firstSourceFrame` (the round trip skipped);
    /// the file holds `fileFrames` frames in all.
    public static func loopPasses(file: String, loop: FrameRange, firstSourceFrame: Int64, fileFrames: Int64) -> [Region] {
        guard loop.frameCount > 0 else { return [] }
        var passes: [Region] = []
        var offset = firstSourceFrame
        while offset < fileFrames {
            passes.append(Region(file: file, timelineStartFrame: loop.startFrame, sourceOffsetFrame: offset,
                                 lengthFrames: min(loop.frameCount, fileFrames - offset)))
            offset += loop.frameCount
        }
        return passes
    }
}
