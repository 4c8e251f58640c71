/// Layering of overlapping regions on one track.
///
/// A track's regions are layers, bottom first (``Track/regions``). Where regions overlap, the
/// upper one plays over what lies under it — never a sum — with a short crossfade at its
/// edges. The crossfade is the upper region's own fade: at an edge that lies over another
/// region the fade is at least ``Session/layerCrossfadeSeconds`` long, and what lies under it
/// fades out by exactly as much as the upper region fades in (`1 − gain`). An edge over
/// nothing keeps the fade the user set (often none), so a region alone on its track sounds as
/// it always did. Export and live playback both read regions through this, so they render the
/// same samples.
extension Session {
    /// The crossfade at the edges of a region that lies over another: 5 ms, like a punch's.
    public static let layerCrossfadeSeconds = punchCrossfadeSeconds

    /// ``layerCrossfadeSeconds`` in frames at `sampleRate` (players may know only their
    /// files' rate, which is the session's).
    public static func layerCrossfadeFrames(sampleRate: Int) -> Int64 {
        Int64((layerCrossfadeSeconds * Double(sampleRate)).rounded())
    }
}

extension Region {
    /// `regions` (layer order, bottom first) with the fades they play with: a fade at an
    /// edge that overlaps a lower region is lengthened to at least `crossfadeFrames` (at most
    /// half the region), others stay as set. The renderer gives each region its fade envelope
    /// as gain and lowers everything beneath it by `1 − envelope`.
    public static func layered(_ regions: [Region], crossfadeFrames: Int64) -> [Region] {
        var out = regions
        guard regions.count > 1, crossfadeFrames > 0 else { return out }
        for i in 1..<regions.count {
            let r = regions[i]
            let ramp = min(crossfadeFrames, r.lengthFrames / 2)
            guard ramp > 0 else { continue }
            let start = r.timelineStartFrame, end = r.timelineEndFrame
            let inSpan = max(r.fadeInFrames, ramp), outSpan = max(r.fadeOutFrames, ramp)
            var overAtStart = false, overAtEnd = false
            for j in 0..<i {
                let lower = regions[j]
                if lower.timelineStartFrame < start + inSpan && lower.timelineEndFrame > start { overAtStart = true }
                if lower.timelineStartFrame < end && lower.timelineEndFrame > end - outSpan { overAtEnd = true }
                if overAtStart && overAtEnd { break }
            }
            if overAtStart { out[i].fadeInFrames = min(r.lengthFrames, max(r.fadeInFrames, ramp)) }
            if overAtEnd { out[i].fadeOutFrames = min(r.lengthFrames, max(r.fadeOutFrames, ramp)) }
        }
        return out
    }

    /// The fade envelope at `position` frames into the region: linear fade-in times linear
    /// fade-out, 1 between them.
    @inline(__always)
    public func envelope(atPosition position: Int64) -> Double {
        var g = 1.0
        if fadeInFrames > 0 && position < fadeInFrames { g *= Double(position) / Double(fadeInFrames) }
        if fadeOutFrames > 0 && position >= lengthFrames - fadeOutFrames { g *= Double(lengthFrames - position) / Double(fadeOutFrames) }
        return g
    }
}

extension Track {
    /// The index into ``regions`` of the topmost region that plays at `frame`, if any.
    public func topRegionIndex(at frame: Int64) -> Int? {
        regions.indices.reversed().first { i in
            let r = regions[i]
            return r.timelineStartFrame <= frame && frame < r.timelineEndFrame && isActive(r)
        }
    }
}
