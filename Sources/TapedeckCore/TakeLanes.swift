/// Take lanes: several takes stacked over one range of a track (loop recording, repeated
/// punches), of which exactly one plays.
///
/// A take is an ordinary ``Region`` with a ``Region/takeGroup`` and a ``Region/takeNumber``;
/// the track remembers the chosen take of each group in ``Track/activeTakes``. Keeping the
/// takes as regions means every tool that edits, validates or draws regions handles takes
/// too, and a session saved by an older Tapedeck (no such fields) simply has no groups.

/// Why a take-lane edit could not be made; the description is one line for the user.
public enum TakeLaneError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The track index is outside the session.
    case noSuchTrack(index: Int, trackCount: Int)
    /// The track has no take group with that id.
    case noSuchGroup(track: Int, group: Int)
    /// The group has no take with that number.
    case noSuchTake(track: Int, group: Int, take: Int)

    public var description: String {
        switch self {
        case let .noSuchTrack(i, n): "track \(i + 1) does not exist (the session has \(n) track\(n == 1 ? "" : "s"))"
        case let .noSuchGroup(t, g): "track \(t + 1) has no take group \(g)"
        case let .noSuchTake(t, g, k): "track \(t + 1), take group \(g) has no take \(k)"
        }
    }
}

extension Track {
    /// The ids of the take groups on this track, ascending.
    public var takeGroups: [Int] {
        Array(Set(regions.compactMap { $0.takeNumber == nil ? nil : $0.takeGroup })).sorted()
    }

    /// Indices into ``regions`` of the takes of `group`, by take number.
    public func takeIndices(group: Int) -> [Int] {
        regions.indices.filter { regions[$0].takeGroup == group && regions[$0].takeNumber != nil }
            .sorted { regions[$0].takeNumber! < regions[$1].takeNumber! }
    }

    /// The take number that plays in `group`: the chosen one while it exists, else the
    /// highest (the newest). Nil when the group has no takes.
    public func activeTakeNumber(group: Int) -> Int? {
        let numbers = takeIndices(group: group).compactMap { regions[$0].takeNumber }
        if let chosen = activeTakes.last(where: { $0.group == group })?.take, numbers.contains(chosen) { return chosen }
        return numbers.last
    }

    /// Whether `region` is heard: an ordinary region always, a take only when it is its
    /// group's active take. Playback and export filter regions with this.
    public func isActive(_ region: Region) -> Bool {
        guard let group = region.takeGroup, let number = region.takeNumber else { return true }
        return activeTakeNumber(group: group) == number
    }

    /// The regions that play: ordinary regions and the active take of each group.
    public var activeRegions: [Region] {
        // Work the active number out once per group, not once per region.
        var active: [Int: Int] = [:]
        for g in takeGroups { active[g] = activeTakeNumber(group: g) }
        return regions.filter { r in
            guard let g = r.takeGroup, let n = r.takeNumber else { return true }
            return active[g] == n
        }
    }

    /// Makes `take` the one that plays in `group` (no check that it exists).
    mutating func choose(group: Int, take: Int) {
        activeTakes.removeAll { $0.group == group }
        activeTakes.append(TakeChoice(group: group, take: take))
        activeTakes.sort { $0.group < $1.group }
    }
}

/// Where a new take went.
public struct TakeSlot: Equatable, Sendable {
    /// Its group.
    public var group: Int
    /// Its number inside the group.
    public var take: Int
}

extension Session {
    private func checkTrack(_ track: Int) throws(TakeLaneError) {
        guard tracks.indices.contains(track) else { throw .noSuchTrack(index: track, trackCount: tracks.count) }
    }

    /// Stacks `region` as a new take on `track`: into `group`, or into a new group when
    /// `group` is nil. The take gets the next number in its group and becomes the active one
    /// (the pass just recorded is the one you want to hear). Returns where it went.
    @discardableResult
    public mutating func addTake(track: Int, region: Region, group: Int? = nil) throws(TakeLaneError) -> TakeSlot {
        try checkTrack(track)
        let g = group ?? ((tracks[track].takeGroups.last ?? 0) + 1)
        let number = (tracks[track].takeIndices(group: g).compactMap { tracks[track].regions[$0].takeNumber }.max() ?? 0) + 1
        var take = region
        take.takeGroup = g
        take.takeNumber = number
        tracks[track].regions.append(take)
        tracks[track].choose(group: g, take: number)
        return TakeSlot(group: g, take: number)
    }

    /// Stacks the passes of one loop recording (in the order they were played, each over the
    /// loop) as the takes of one group: into `group`, or a new group when nil. The last
    /// complete pass plays, as in Reaper and Ardour: a pass cut short by the stop (shorter
    /// than the passes before it) is kept as the take after it, heard only when chosen. A
    /// recording stopped in its first pass has only that one, and it plays. Returns the group
    /// (nil when there were no passes).
    @discardableResult
    public mutating func addLoopPasses(track: Int, passes: [Region], group: Int? = nil) throws(TakeLaneError) -> Int? {
        try checkTrack(track)
        guard let full = passes.map(\.lengthFrames).max() else { return group }
        var g = group
        var chosen: TakeSlot?
        for pass in passes {
            let slot = try addTake(track: track, region: pass, group: g)
            g = slot.group
            if pass.lengthFrames == full { chosen = slot }
        }
        if let chosen { tracks[track].choose(group: chosen.group, take: chosen.take) }
        return g
    }

    /// Makes the next take of `group` active (after the last comes the first); returns its
    /// number.
    @discardableResult
    public mutating func cycleTake(track: Int, group: Int) throws(TakeLaneError) -> Int {
        try checkTrack(track)
        let t = tracks[track]
        let numbers = t.takeIndices(group: group).compactMap { t.regions[$0].takeNumber }
        guard let current = t.activeTakeNumber(group: group), let at = numbers.firstIndex(of: current) else {
            throw .noSuchGroup(track: track, group: group)
        }
        let next = numbers[(at + 1) % numbers.count]
        tracks[track].choose(group: group, take: next)
        return next
    }

    /// Makes take `take` of `group` the active one.
    public mutating func chooseTake(track: Int, group: Int, take: Int) throws(TakeLaneError) {
        try checkTrack(track)
        let t = tracks[track]
        let indices = t.takeIndices(group: group)
        guard !indices.isEmpty else { throw .noSuchGroup(track: track, group: group) }
        guard indices.contains(where: { t.regions[$0].takeNumber == take }) else {
            throw .noSuchTake(track: track, group: group, take: take)
        }
        tracks[track].choose(group: group, take: take)
    }

    /// The region that plays in `group` on `track`, or nil when there is no such group.
    public func activeTake(track: Int, group: Int) -> Region? {
        guard tracks.indices.contains(track) else { return nil }
        let t = tracks[track]
        guard let n = t.activeTakeNumber(group: group) else { return nil }
        return t.regions.first { $0.takeGroup == group && $0.takeNumber == n }
    }
}

extension SessionDocument {
    /// ``Session/addTake(track:region:group:)`` as one undoable edit.
    @discardableResult
    public mutating func addTake(track: Int, region: Region, group: Int? = nil) throws(TakeLaneError) -> TakeSlot {
        var slot = TakeSlot(group: 0, take: 0)
        try edit("Add take") { (s: inout Session) throws(TakeLaneError) in slot = try s.addTake(track: track, region: region, group: group) }
        return slot
    }

    /// ``Session/cycleTake(track:group:)`` as one undoable edit.
    @discardableResult
    public mutating func cycleTake(track: Int, group: Int) throws(TakeLaneError) -> Int {
        var next = 0
        try edit("Cycle take") { (s: inout Session) throws(TakeLaneError) in next = try s.cycleTake(track: track, group: group) }
        return next
    }

    /// ``Session/chooseTake(track:group:take:)`` as one undoable edit.
    public mutating func chooseTake(track: Int, group: Int, take: Int) throws(TakeLaneError) {
        try edit("Choose take") { (s: inout Session) throws(TakeLaneError) in try s.chooseTake(track: track, group: group, take: take) }
    }

    /// The region that plays in `group` on `track`.
    public func activeTake(track: Int, group: Int) -> Region? { session.activeTake(track: track, group: group) }
}
