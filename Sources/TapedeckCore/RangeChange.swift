/// A change to the loop or the punch range, as every front-end names it: the screen's range
/// keys and its loop and punch switches, `tapedeck loop` and `punch`. The two ranges are
/// independent: a change to one never moves the other.
public enum RangeChange: Equatable, Sendable {
    /// The loop range (nil clears it and turns looping off); `enabled` nil keeps the switch.
    case loop(FrameRange?, enabled: Bool?)
    /// The punch range (nil clears it and turns punching off); `enabled` nil keeps the switch.
    case punch(FrameRange?, enabled: Bool?)

    /// The undo step's name, as `undo --list` and the screen say it.
    public var undoName: String {
        switch self {
        case .loop: "loop"
        case .punch: "punch"
        }
    }
}

extension Session {
    /// Applies `change`. Throws, changing nothing, when the range is inside out or past the
    /// timeline's end.
    public mutating func apply(_ change: RangeChange) throws(MarkerEditError) {
        switch change {
        case .loop(let range, let enabled): try setLoop(range, enabled: enabled)
        case .punch(let range, let enabled): try setPunch(range, enabled: enabled)
        }
    }
}

extension SessionDocument {
    /// Applies `change` as one undoable step named by it (``RangeChange/undoName``). Throws,
    /// changing nothing, when it is refused.
    public mutating func apply(_ change: RangeChange) throws(MarkerEditError) {
        try edit(change.undoName) { (s: inout Session) throws(MarkerEditError) in try s.apply(change) }
    }
}
