/// One edit to the session's markers, as every front-end names it: a key or a dialog on the
/// screen, a surface's "add marker", `tapedeck marker`. Each front-end resolves its own words
/// (the playhead, a typed time, a marker's number or name) into one of these, and the session
/// applies it (``Session/apply(_:)-(MarkerChange)``), so it is the same undo step by the same
/// name wherever it was asked for.
public enum MarkerChange: Equatable, Sendable {
    /// A marker called `name` at `atFrame` (an empty name: the next free `M1`, `M2`…).
    case add(name: String, atFrame: Int64)
    /// Marker `index` (in timeline order) renamed.
    case rename(index: Int, to: String)
    /// Marker `index` moved to `toFrame`.
    case move(index: Int, toFrame: Int64)
    /// Marker `index` removed.
    case delete(index: Int)

    /// The undo step's name, as `undo --list` and the screen say it.
    public var undoName: String {
        switch self {
        case .add: "add marker"
        case .rename: "rename marker"
        case .move: "move marker"
        case .delete: "delete marker"
        }
    }
}

extension Session {
    /// Applies `change`; returns the marker's index afterwards in timeline order (nil when it
    /// is gone). Throws, changing nothing, when the change is refused.
    @discardableResult
    public mutating func apply(_ change: MarkerChange) throws(MarkerEditError) -> Int? {
        switch change {
        case .add(let name, let frame): return try addMarker(name, atFrame: frame)
        case .rename(let i, let name): try renameMarker(i, to: name); return i
        case .move(let i, let frame): return try moveMarker(i, toFrame: frame)
        case .delete(let i): try deleteMarker(i); return nil
        }
    }
}

extension SessionDocument {
    /// Applies `change` as one undoable step named by it (``MarkerChange/undoName``); returns
    /// the marker's index afterwards (see ``Session/apply(_:)-(MarkerChange)``).
    @discardableResult
    public mutating func apply(_ change: MarkerChange) throws(MarkerEditError) -> Int? {
        var result: Int?
        try edit(change.undoName) { (s: inout Session) throws(MarkerEditError) in result = try s.apply(change) }
        return result
    }
}
