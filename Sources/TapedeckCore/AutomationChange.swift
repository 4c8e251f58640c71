/// One change to a strip's automation, as every front-end names it: the screen's lane keys
/// and dialog, `tapedeck automation` (add, clear, mode, import). The session applies it
/// (``Session/apply(_:)-(AutomationChange)``). A lane is found by its parameter; a change to
/// a lane the strip does not have yet makes it (appended, in `play`).
///
/// What a pass of automation writing records (``AutomationWrite``) is the transport's, and
/// is applied as a whole (`Session.apply(_:)` of the writes).
public enum AutomationChange: Equatable, Sendable {
    /// `points` put on strip `strip`'s lane for `parameter` (a point at a frame that has one
    /// replaces it); `replacing`: the lane's points are cleared first.
    case add(strip: Int, AutomationParameter, [AutomationPoint], replacing: Bool)
    /// The lane's points in `range` cleared (nil: all of them); `droppingEmptyLane`: a lane
    /// left with no points goes.
    case clear(strip: Int, AutomationParameter, FrameRange?, droppingEmptyLane: Bool)
    /// The lane's point at `fromFrame` moved to `toFrame`.
    case move(strip: Int, AutomationParameter, fromFrame: Int64, toFrame: Int64)
    /// The lane's mode (off, play, touch, latch, write).
    case mode(strip: Int, AutomationParameter, AutomationMode)

    /// The parameter whose lane it changes.
    public var parameter: AutomationParameter {
        switch self {
        case .add(_, let p, _, _), .clear(_, let p, _, _), .move(_, let p, _, _), .mode(_, let p, _): p
        }
    }

    /// The strip whose lane it changes.
    public var strip: Int {
        switch self {
        case .add(let s, _, _, _), .clear(let s, _, _, _), .move(let s, _, _, _), .mode(let s, _, _): s
        }
    }

    /// The undo step's name, as `undo --list` and the screen say it: `add gain point`,
    /// `clear send:Verb points`, `pan mode`.
    public var undoName: String {
        switch self {
        case .add(_, let p, let points, let replacing): replacing ? "replace \(p) points" : "add \(p) point\(points.count == 1 ? "" : "s")"
        case .clear(_, let p, _, _): "clear \(p) points"
        case .move(_, let p, _, _): "move \(p) point"
        case .mode(_, let p, _): "\(p) mode"
        }
    }
}

/// Why an automation change was refused; one line for the user.
public struct AutomationEditError: EditRefusal, Equatable, Sendable {
    /// The whole message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

extension Session {
    /// Applies `change`; returns how many points it cleared (0 for the others). Throws,
    /// changing nothing, when the strip does not exist or the lane has no point to move.
    @discardableResult
    public mutating func apply(_ change: AutomationChange) throws(AutomationEditError) -> Int {
        let t = change.strip, parameter = change.parameter
        guard tracks.indices.contains(t) else {
            throw AutomationEditError("strip \(t + 1) does not exist (the session has \(tracks.count) strip\(tracks.count == 1 ? "" : "s"))")
        }
        var lane = tracks[t].laneIndex(parameter).map { tracks[t].automation[$0] } ?? AutomationLane(parameter: parameter)
        var cleared = 0
        switch change {
        case .add(_, _, let points, let replacing):
            if replacing { lane.clear() }
            lane.add(contentsOf: points)
        case .clear(_, _, let range, _):
            cleared = lane.clear(range)
        case .move(_, _, let from, let to):
            guard lane.points.contains(where: { $0.frame == from }) else {
                throw AutomationEditError("\(tracks[t].name.terminalSafe) has no \(parameter) point at \(clockText(from))")
            }
            lane.move(FrameRange(startFrame: from, endFrame: from + 1), by: to - from)
        case .mode(_, _, let mode):
            lane.mode = mode
        }
        let drops: Bool
        if case .clear(_, _, _, true) = change { drops = lane.points.isEmpty } else { drops = false }
        switch (tracks[t].laneIndex(parameter), drops) {
        case (let k?, false): tracks[t].automation[k] = lane
        case (let k?, true): tracks[t].automation.remove(at: k)
        case (nil, false): tracks[t].automation.append(lane)
        case (nil, true): break
        }
        return cleared
    }
}

extension SessionDocument {
    /// Applies `change` as one undoable step named by it (``AutomationChange/undoName``);
    /// returns how many points it cleared. Throws, changing nothing, when it is refused.
    @discardableResult
    public mutating func apply(_ change: AutomationChange) throws(AutomationEditError) -> Int {
        var cleared = 0
        try edit(change.undoName) { (s: inout Session) throws(AutomationEditError) in cleared = try s.apply(change) }
        return cleared
    }
}
