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
    ///
    /// O(n log n): the lower regions seen so far sit in a tree keyed by start frame holding
    /// the latest end among starts up to each key, so "does any lower region start before x
    /// and end after y" is one prefix query (a session at the region limit, 100,000 regions
    /// on one track, asked that of every pair before).
    public static func layered(_ regions: [Region], crossfadeFrames: Int64) -> [Region] {
        var out = regions
        guard regions.count > 1, crossfadeFrames > 0 else { return out }
        let starts = Array(Set(regions.map(\.timelineStartFrame))).sorted()
        // Fenwick tree of the maximum end frame, over the sorted distinct start frames.
        var tree = [Int64](repeating: .min, count: starts.count + 1)
        func insert(_ r: Region) {
            var k = lowerBound(starts, r.timelineStartFrame) + 1
            while k < tree.count { tree[k] = max(tree[k], r.timelineEndFrame); k += k & -k }
        }
        /// Whether a region inserted so far starts before `x` and ends after `y`.
        func anyLower(startingBefore x: Int64, endingAfter y: Int64) -> Bool {
            var k = lowerBound(starts, x)
            var best = Int64.min
            while k > 0 { best = max(best, tree[k]); k -= k & -k }
            return best > y
        }
        insert(regions[0])
        for i in 1..<regions.count {
            let r = regions[i]
            defer { insert(r) }
            let ramp = min(crossfadeFrames, r.lengthFrames / 2)
            guard ramp > 0 else { continue }
            let start = r.timelineStartFrame, end = r.timelineEndFrame
            let inSpan = max(r.fadeInFrames, ramp), outSpan = max(r.fadeOutFrames, ramp)
            if anyLower(startingBefore: start + inSpan, endingAfter: start) {
                out[i].fadeInFrames = min(r.lengthFrames, max(r.fadeInFrames, ramp))
            }
            if anyLower(startingBefore: end, endingAfter: end - outSpan) {
                out[i].fadeOutFrames = min(r.lengthFrames, max(r.fadeOutFrames, ramp))
            }
        }
        return out
    }

    /// The index of the first element of sorted `values` not below `x`.
    private static func lowerBound(_ values: [Int64], _ x: Int64) -> Int {
        var lo = 0, hi = values.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if values[mid] < x { lo = mid + 1 } else { hi = mid }
        }
        return lo
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
