extension Session {
    /// Gives every region without one an id (``Region/id``), and a new id to a region that
    /// shares one with another: a copy (a duplicate, a paste, the right half of a split)
    /// starts with its original's id. Which of two keeps the id: the one on the track that
    /// held it in `previous` (the session before the edit), else the first in the track's
    /// list — the original before its copy, the left half before the right. New ids count up
    /// from the highest in use, so an id is never given twice while the region holding it
    /// stays.
    public mutating func identifyRegions(keeping previous: Session? = nil) {
        struct Held: Hashable { var track: Int; var id: Int }
        /// An id from a file may be anything: one outside 1…2³¹−1 is renumbered.
        func valid(_ id: Int?) -> Int? { id.flatMap { $0 >= 1 && $0 <= Int(Int32.max) ? $0 : nil } }
        var before = Set<Held>()
        if let previous {
            for (t, track) in previous.tracks.enumerated() {
                for r in track.regions { if let id = valid(r.id) { before.insert(Held(track: t, id: id)) } }
            }
        }
        var highest = 0
        var needs = false
        var seen = Set<Int>()
        for track in tracks {
            for r in track.regions {
                guard let id = valid(r.id) else { needs = true; continue }
                highest = max(highest, id)
                if !seen.insert(id).inserted { needs = true }
            }
        }
        guard needs else { return }
        // Keepers first: a region whose id its track held before the edit.
        var owner: [Int: (track: Int, region: Int)] = [:]
        for t in tracks.indices {
            for i in tracks[t].regions.indices {
                guard let id = valid(tracks[t].regions[i].id), before.contains(Held(track: t, id: id)), owner[id] == nil else { continue }
                owner[id] = (t, i)
            }
        }
        for t in tracks.indices {
            for i in tracks[t].regions.indices {
                if let id = valid(tracks[t].regions[i].id) {
                    if let o = owner[id] {
                        if o.track == t && o.region == i { continue }
                    } else {
                        owner[id] = (t, i)
                        continue
                    }
                }
                // (Past 2³¹−1 ids, the lowest free one: a session never holds that many regions.)
                if highest < Int(Int32.max) { highest += 1 } else { highest = (1...).first { owner[$0] == nil }! }
                tracks[t].regions[i].id = highest
                owner[highest] = (t, i)
            }
        }
    }

    /// The region called `#id`, if the session has it.
    public func regionRef(id: Int) -> RegionRef? {
        for t in tracks.indices {
            if let i = tracks[t].regions.firstIndex(where: { $0.id == id }) { return RegionRef(track: t, region: i) }
        }
        return nil
    }
}
