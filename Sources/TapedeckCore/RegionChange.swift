/// One edit to one region, as every front-end names it: a key on the screen, `tapedeck region`,
/// a `region` command handed to the open screen. Each front-end resolves its own words (the
/// playhead, a typed time, a region's number or id, the file's length) into one of these, and
/// the session applies it (``Session/apply(_:to:)``). So a trim, a split or a stretch means the
/// same, and is the same undo step by the same name, wherever it was asked for.
public enum RegionChange: Equatable, Sendable {
    /// Starts the region at `toFrame`; `carryingAutomation`: the track's automation points
    /// under it go with it.
    case move(toFrame: Int64, carryingAutomation: Bool)
    /// Moves the region's start and/or its end on the timeline. `sourceFrameCount`, when known,
    /// is the file's length, past which an end may not go.
    case trim(startFrame: Int64?, endFrame: Int64?, sourceFrameCount: Int64?)
    /// Cuts the region in two at `atFrame` (a take: its whole stack, for comping).
    case split(atFrame: Int64)
    /// Sets the fade-in and/or fade-out length.
    case fades(inFrames: Int64?, outFrames: Int64?)
    /// Sets the region's gain, in dB.
    case gain(decibels: Double)
    /// Stretches the region by `factor` (2: twice as long), pitch kept.
    case stretch(byFactor: Double)
    /// Stretches the region to last `lengthFrames`, pitch kept.
    case stretchTo(lengthFrames: Int64)
    /// Puts `region` in its place: a quantised MIDI region, whose notes are in a new file.
    case replace(with: Region)
    /// Lays a copy of the region right after it, on top.
    case duplicate
    /// Puts the region on the top layer.
    case raise
    /// Removes the region.
    case delete

    /// The undo step's name, as `undo --list` and the screen say it.
    public func undoName(isTake: Bool) -> String {
        switch self {
        case .move: "move region"
        case .trim(let s, let e, _): s != nil && e != nil ? "trim region" : (s != nil ? "trim start" : "trim end")
        case .split: isTake ? "split takes" : "split region"
        case .fades(let i, let o): i != nil && o != nil ? "fades" : (i != nil ? "fade in" : "fade out")
        case .gain: "region gain"
        case .stretch, .stretchTo: "stretch region"
        case .replace: "quantize"
        case .duplicate: "duplicate region"
        case .raise: "raise region"
        case .delete: "delete region"
        }
    }
}

extension Session {
    /// Applies `change` to the region at `ref`. Returns where the region is afterwards (a
    /// split: its right half; a duplicate: the copy; a raise: the top layer), nil when it is
    /// gone. Throws, changing nothing, when the change is refused.
    @discardableResult
    public mutating func apply(_ change: RegionChange, to ref: RegionRef) throws(RegionEditError) -> Int? {
        switch change {
        case .move(let frame, let carry):
            try moveRegion(ref, toStartFrame: frame, carryingAutomation: carry)
        case .trim(let start, let end, let total):
            if let start { try trimRegionStart(ref, toFrame: start) }
            if let end { try trimRegionEnd(ref, toFrame: end, sourceFrameCount: total) }
        case .split(let frame):
            return try splitRegion(ref, atFrame: frame)
        case .fades(let i, let o):
            try setRegionFades(ref, fadeInFrames: i, fadeOutFrames: o)
        case .gain(let db):
            try setRegionGain(ref, decibels: db)
        case .stretch(let factor):
            try stretchRegion(ref, byFactor: factor)
        case .stretchTo(let length):
            try stretchRegion(ref, toLengthFrames: length)
        case .replace(let region):
            _ = try self.region(ref)
            try checkNotFrozen(ref.track)
            tracks[ref.track].regions[ref.region] = region
        case .duplicate:
            return try duplicateRegion(ref)
        case .raise:
            return try raiseRegion(ref)
        case .delete:
            try deleteRegion(ref)
            return nil
        }
        return ref.region
    }
}

extension SessionDocument {
    /// Applies `change` to the region at `ref` as one undoable step, named by the change
    /// (``RegionChange/undoName(isTake:)``). Returns where the region is afterwards (see
    /// ``Session/apply(_:to:)``); throws, changing nothing, when it is refused.
    @discardableResult
    public mutating func apply(_ change: RegionChange, to ref: RegionRef) throws(RegionEditError) -> Int? {
        let isTake = (try? session.region(ref))?.takeGroup != nil
        var result: Int?
        try edit(change.undoName(isTake: isTake)) { (s: inout Session) throws(RegionEditError) in result = try s.apply(change, to: ref) }
        return result
    }
}
