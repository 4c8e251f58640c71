import Foundation

/// Editing regions on the timeline: move, trim, split, fades, gain, stretch, delete,
/// duplicate, paste and raise. Each is a mutation of ``Session`` that checks everything first
/// and changes nothing when it throws; ``SessionDocument`` wraps them as undoable edits.

/// Why a region edit could not be made; the description is one line for the user.
public struct RegionEditError: EditRefusal, Equatable, Sendable {
    /// The whole message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// Where a region is: its track and its index in the track's ``Track/regions``.
public struct RegionRef: Equatable, Hashable, Sendable {
    /// 0-based track index.
    public var track: Int
    /// Index into that track's regions (its layer: higher is on top).
    public var region: Int

    /// Creates a reference.
    public init(track: Int, region: Int) {
        self.track = track
        self.region = region
    }
}

extension Session {
    /// The largest timeline position an edit may produce: the timeline's end,
    /// ``SessionLimits/maximumTimelineFrames`` (2^40), so an edit is refused as the user's
    /// mistake before the session's own check would refuse to save it (a move past 2^40 was
    /// reported as "not saved", exit 65), and sums of positions and lengths never overflow.
    public static let maximumTimelineFrame: Int64 = SessionLimits.maximumTimelineFrames

    /// `m:ss.mmm` of a frame at this session's rate, for messages.
    public func clockText(_ frame: Int64) -> String { TimeText.clock(frames: frame, sampleRate: sampleRate) }

    /// The region `ref` points at, or an error naming what is missing.
    public func region(_ ref: RegionRef) throws(RegionEditError) -> Region {
        guard tracks.indices.contains(ref.track) else {
            throw RegionEditError("track \(ref.track + 1) does not exist (the session has \(tracks.count) track\(tracks.count == 1 ? "" : "s"))")
        }
        let regions = tracks[ref.track].regions
        guard regions.indices.contains(ref.region) else {
            throw RegionEditError("track \(ref.track + 1) (\(tracks[ref.track].name)) has no region \(ref.region + 1) (it has \(regions.count))")
        }
        return regions[ref.region]
    }

    /// The region `ref` points at, when its track may be edited: a frozen track's regions
    /// stay as they were rendered until it is unfrozen.
    private func editable(_ ref: RegionRef) throws(RegionEditError) -> Region {
        let r = try region(ref)
        try checkNotFrozen(ref.track)
        return r
    }

    /// Refuses edits to a frozen track, naming the way out.
    public func checkNotFrozen(_ track: Int) throws(RegionEditError) {
        guard tracks.indices.contains(track), tracks[track].frozen != nil else { return }
        throw RegionEditError("\(tracks[track].name.terminalSafe) is frozen: unfreeze it first (its regions and chain stay as they were rendered)")
    }

    /// Refuses what a MIDI region does not have (fades, gain, a rate).
    private static func checkAudio(_ r: Region, _ what: String) throws(RegionEditError) {
        guard r.isMIDI else { return }
        throw RegionEditError("a MIDI region has no \(what) (its notes play at their velocities; quantise or move them instead)")
    }

    private func checkPosition(_ frame: Int64, _ what: String) throws(RegionEditError) {
        guard frame >= 0 else { throw RegionEditError("\(what) cannot lie before the session start") }
        guard frame <= Session.maximumTimelineFrame else { throw RegionEditError("\(what) lies too far out (beyond \(clockText(Session.maximumTimelineFrame)))") }
    }

    /// Keeps fades inside a region whose length changed.
    private static func clampFades(_ r: inout Region) {
        r.fadeOutFrames = min(r.fadeOutFrames, r.lengthFrames)
        r.fadeInFrames = min(r.fadeInFrames, r.lengthFrames - r.fadeOutFrames)
    }

    /// Source frames `timelineFrames` of `region` span.
    private static func sourceFrames(_ timelineFrames: Int64, of region: Region) -> Int64 {
        Int64((Double(timelineFrames) * region.rate).rounded())
    }

    /// Moves the region so it starts at `startFrame`; `carryingAutomation`: the track's
    /// automation points under the region go with it (replacing those where it lands), as
    /// Ardour's "automation follows region moves".
    public mutating func moveRegion(_ ref: RegionRef, toStartFrame startFrame: Int64, carryingAutomation: Bool = false) throws(RegionEditError) {
        let r = try editable(ref)
        try checkPosition(startFrame, "the region's start")
        try checkPosition(startFrame + r.lengthFrames, "the region's end")
        tracks[ref.track].regions[ref.region].timelineStartFrame = startFrame
        let delta = startFrame - r.timelineStartFrame
        guard carryingAutomation, delta != 0 else { return }
        let under = FrameRange(startFrame: r.timelineStartFrame, endFrame: r.timelineEndFrame)
        let landing = FrameRange(startFrame: startFrame, endFrame: startFrame + r.lengthFrames)
        for k in tracks[ref.track].automation.indices {
            var lane = tracks[ref.track].automation[k]
            let moving = lane.points.filter { $0.frame >= under.startFrame && $0.frame < under.endFrame }
            guard !moving.isEmpty else { continue }
            lane.clear(under)
            lane.clear(landing)
            lane.add(contentsOf: moving.map { AutomationPoint(frame: $0.frame + delta, value: $0.value, curve: $0.curve) })
            tracks[ref.track].automation[k] = lane
        }
    }

    /// Moves the region's start to `frame`, keeping its end: later shortens it, earlier
    /// uncovers audio before it (as far as its file holds).
    public mutating func trimRegionStart(_ ref: RegionRef, toFrame frame: Int64) throws(RegionEditError) {
        var r = try editable(ref)
        try checkPosition(frame, "the new start")
        guard frame < r.timelineEndFrame else {
            throw RegionEditError("the new start \(clockText(frame)) must come before the region's end \(clockText(r.timelineEndFrame))")
        }
        let offset = r.sourceOffsetFrame + Session.sourceFrames(frame - r.timelineStartFrame, of: r)
        guard offset >= 0 else {
            throw RegionEditError("the region's audio begins at \(clockText(r.timelineStartFrame - Int64(Double(r.sourceOffsetFrame) / r.rate))); it cannot start earlier")
        }
        r.lengthFrames = r.timelineEndFrame - frame
        r.timelineStartFrame = frame
        r.sourceOffsetFrame = offset
        Session.clampFades(&r)
        tracks[ref.track].regions[ref.region] = r
    }

    /// Moves the region's end to `frame`, keeping its start. Lengthening is limited to what
    /// the file holds when `sourceFrameCount` (the file's length) is given.
    public mutating func trimRegionEnd(_ ref: RegionRef, toFrame frame: Int64, sourceFrameCount: Int64? = nil) throws(RegionEditError) {
        var r = try editable(ref)
        try checkPosition(frame, "the new end")
        guard frame > r.timelineStartFrame else {
            throw RegionEditError("the new end \(clockText(frame)) must come after the region's start \(clockText(r.timelineStartFrame))")
        }
        let length = frame - r.timelineStartFrame
        if let total = sourceFrameCount, length > r.lengthFrames, r.sourceOffsetFrame + Session.sourceFrames(length, of: r) > total {
            let most = Int64(Double(max(0, total - r.sourceOffsetFrame)) / r.rate)
            throw RegionEditError("the region's audio ends at \(clockText(r.timelineStartFrame + most)); it cannot end later")
        }
        r.lengthFrames = length
        Session.clampFades(&r)
        tracks[ref.track].regions[ref.region] = r
    }

    /// Splits the region at `frame` (strictly inside it) into two regions on the same layer;
    /// returns the right part's index. A take splits its whole stack (see
    /// ``splitTakeStack(track:group:atFrame:)``), so each part can play a different take.
    @discardableResult
    public mutating func splitRegion(_ ref: RegionRef, atFrame frame: Int64) throws(RegionEditError) -> Int {
        let r = try editable(ref)
        guard frame > r.timelineStartFrame && frame < r.timelineEndFrame else {
            throw RegionEditError("the split point \(clockText(frame)) is not inside the region (\(clockText(r.timelineStartFrame))-\(clockText(r.timelineEndFrame)))")
        }
        if let group = r.takeGroup, r.takeNumber != nil {
            let newGroup = try splitTakeStack(track: ref.track, group: group, atFrame: frame)
            let regions = tracks[ref.track].regions
            return regions.firstIndex { $0.takeGroup == newGroup && $0.takeNumber == r.takeNumber } ?? ref.region
        }
        let (left, right) = Session.halves(of: r, at: frame)
        tracks[ref.track].regions[ref.region] = left
        tracks[ref.track].regions.insert(right, at: ref.region + 1)
        return ref.region + 1
    }

    /// `r` cut at `frame`: the left keeps its fade-in, the right its fade-out; no fade at the cut.
    private static func halves(of r: Region, at frame: Int64) -> (Region, Region) {
        var left = r, right = r
        left.lengthFrames = frame - r.timelineStartFrame
        left.fadeOutFrames = 0
        clampFades(&left)
        right.timelineStartFrame = frame
        right.sourceOffsetFrame = r.sourceOffsetFrame + sourceFrames(left.lengthFrames, of: r)
        right.lengthFrames = r.timelineEndFrame - frame
        right.fadeInFrames = 0
        clampFades(&right)
        return (left, right)
    }

    /// Comping: splits every take of `group` on `track` at `frame`. The parts after it form a
    /// new group (same take numbers, the same take chosen), so a different take can play on
    /// each side. Takes wholly after `frame` move to the new group; returns its id.
    @discardableResult
    public mutating func splitTakeStack(track: Int, group: Int, atFrame frame: Int64) throws(RegionEditError) -> Int {
        guard tracks.indices.contains(track) else { throw RegionEditError("track \(track + 1) does not exist") }
        var t = tracks[track]
        let indices = t.takeIndices(group: group)
        guard !indices.isEmpty else { throw RegionEditError("track \(track + 1) has no take group \(group)") }
        guard indices.contains(where: { t.regions[$0].timelineStartFrame < frame && frame < t.regions[$0].timelineEndFrame }) else {
            throw RegionEditError("no take of group \(group) spans \(clockText(frame))")
        }
        let newGroup = (t.takeGroups.last ?? 0) + 1
        let active = t.activeTakeNumber(group: group)
        // From the last index down, so inserting a right part never shifts one still to visit.
        for at in indices.sorted(by: >) {
            let r = t.regions[at]
            if r.timelineStartFrame >= frame {
                t.regions[at].takeGroup = newGroup
            } else if r.timelineEndFrame > frame {
                let (left, right0) = Session.halves(of: r, at: frame)
                var right = right0
                right.takeGroup = newGroup
                t.regions[at] = left
                t.regions.insert(right, at: at + 1)
            }
        }
        if let active { t.choose(group: newGroup, take: active) }
        tracks[track] = t
        return newGroup
    }

    /// Sets the fade lengths (nil leaves one as it is); each lies within the region.
    public mutating func setRegionFades(_ ref: RegionRef, fadeInFrames: Int64?, fadeOutFrames: Int64?) throws(RegionEditError) {
        var r = try editable(ref)
        try Session.checkAudio(r, "fades")
        for (name, value) in [("fade-in", fadeInFrames), ("fade-out", fadeOutFrames)] {
            guard let v = value else { continue }
            guard v >= 0, v <= r.lengthFrames else {
                throw RegionEditError("a \(name) of \(clockText(max(0, v))) does not fit the region (\(clockText(r.lengthFrames)) long)")
            }
        }
        if let v = fadeInFrames { r.fadeInFrames = v }
        if let v = fadeOutFrames { r.fadeOutFrames = v }
        tracks[ref.track].regions[ref.region] = r
    }

    /// Sets the region's gain in dB (−∞ … +24; ``Fader/silentDecibels`` or below is −∞).
    public mutating func setRegionGain(_ ref: RegionRef, decibels: Double) throws(RegionEditError) {
        try Session.checkAudio(try editable(ref), "gain")
        guard decibels.isFinite || decibels == -.infinity, decibels <= 24 else {
            throw RegionEditError("region gain \(decibels) dB is outside -inf...+24 dB")
        }
        tracks[ref.track].regions[ref.region].gainDecibels = Fader.stored(decibels)
    }

    /// Stretches the region (pitch kept) to last `lengthFrames` on the timeline, playing the
    /// same audio: its rate scales by the inverse. Rates stay within 1/32…32.
    public mutating func stretchRegion(_ ref: RegionRef, toLengthFrames lengthFrames: Int64) throws(RegionEditError) {
        var r = try editable(ref)
        try Session.checkAudio(r, "rate to stretch")
        guard lengthFrames > 0 else { throw RegionEditError("a region must last at least one frame") }
        try checkPosition(r.timelineStartFrame + lengthFrames, "the stretched region's end")
        let rate = r.rate * Double(r.lengthFrames) / Double(lengthFrames)
        guard rate >= 1.0 / 32 && rate <= 32 else {
            throw RegionEditError("stretching to \(clockText(lengthFrames)) needs rate \(Region.rateText(rate)), outside 1/32...32")
        }
        let scale = Double(lengthFrames) / Double(r.lengthFrames)
        r.fadeInFrames = Int64((Double(r.fadeInFrames) * scale).rounded())
        r.fadeOutFrames = Int64((Double(r.fadeOutFrames) * scale).rounded())
        r.lengthFrames = lengthFrames
        r.rate = rate
        Session.clampFades(&r)
        tracks[ref.track].regions[ref.region] = r
    }

    /// Stretches the region by `factor` (2 lasts twice as long).
    public mutating func stretchRegion(_ ref: RegionRef, byFactor factor: Double) throws(RegionEditError) {
        let r = try editable(ref)
        guard factor.isFinite, factor > 0 else { throw RegionEditError("a stretch factor is a positive number") }
        // The rate first: a factor far out of range is refused for that, not for the length
        // it would give (1e9x is 14e15 frames, which says nothing to the user).
        let rate = r.rate / factor
        guard rate >= 1.0 / 32 && rate <= 32 else {
            throw RegionEditError("stretching by \(Region.rateText(factor))x needs rate \(Region.rateText(rate)), outside 1/32...32")
        }
        let length = (Double(r.lengthFrames) * factor).rounded()
        guard length >= 1, length <= Double(Session.maximumTimelineFrame) else {
            throw RegionEditError("stretching by \(Region.rateText(factor))x gives a region of \(Int64(min(length, 9e18))) frames, which the timeline cannot hold")
        }
        try stretchRegion(ref, toLengthFrames: Int64(length))
    }

    /// Removes the region.
    public mutating func deleteRegion(_ ref: RegionRef) throws(RegionEditError) {
        _ = try editable(ref)
        tracks[ref.track].regions.remove(at: ref.region)
    }

    /// Puts `region` on `track` at `startFrame`, on top of what is there (a paste); a take
    /// becomes an ordinary region. Returns its index.
    @discardableResult
    public mutating func placeRegion(_ region: Region, track: Int, atFrame startFrame: Int64) throws(RegionEditError) -> Int {
        guard tracks.indices.contains(track) else {
            throw RegionEditError("track \(track + 1) does not exist (the session has \(tracks.count) track\(tracks.count == 1 ? "" : "s"))")
        }
        try checkNotFrozen(track)
        try checkPosition(startFrame, "the region's start")
        try checkPosition(startFrame + region.lengthFrames, "the region's end")
        var r = region
        r.timelineStartFrame = startFrame
        r.takeGroup = nil
        r.takeNumber = nil
        tracks[track].regions.append(r)
        return tracks[track].regions.count - 1
    }

    /// A copy of the region right after its end, on top; returns the copy's index.
    @discardableResult
    public mutating func duplicateRegion(_ ref: RegionRef) throws(RegionEditError) -> Int {
        let r = try editable(ref)
        return try placeRegion(r, track: ref.track, atFrame: r.timelineEndFrame)
    }

    /// Brings the region to the top layer, over everything it overlaps; returns its new index.
    @discardableResult
    public mutating func raiseRegion(_ ref: RegionRef) throws(RegionEditError) -> Int {
        let r = try editable(ref)
        tracks[ref.track].regions.remove(at: ref.region)
        tracks[ref.track].regions.append(r)
        return tracks[ref.track].regions.count - 1
    }
}

extension SessionDocument {
    /// Runs a region edit as one undoable step called `name`; returns what it returns.
    @discardableResult
    public mutating func editRegions<T>(_ name: String, _ change: (inout Session) throws(RegionEditError) -> T) throws(RegionEditError) -> T? {
        var result: T?
        try edit(name) { (s: inout Session) throws(RegionEditError) in result = try change(&s) }
        return result
    }
}

extension Region {
    /// A rate or factor for people: six significant digits (0.333333, 2, 5.00005e-05), not
    /// the seventeen a Double prints.
    public static func rateText(_ value: Double) -> String { String(format: "%.6g", value) }
}
