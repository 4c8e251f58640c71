/// A change to the session's learnt MIDI controllers, as every front-end names it: the
/// screen's MIDI learn (a controller moved while learning) and `tapedeck learn` (`--cc`,
/// `--remove N`, `--clear`). The session applies it (``Session/apply(_:)-(BindingChange)``).
public enum BindingChange: Equatable, Sendable {
    /// `binding` added, in place of any binding of the same controller and channel.
    case bind(MIDIBinding)
    /// Binding `index` (as listed, from 0) removed.
    case remove(index: Int)
    /// Every binding removed.
    case removeAll

    /// The undo step's name, as `undo --list` and the screen say it: `learn CC 7 → fader Drums`.
    public var undoName: String {
        switch self {
        case .bind(let b): "learn \(b)"
        case .remove: "remove binding"
        case .removeAll: "remove bindings"
        }
    }
}

/// Why a binding change was refused; one line for the user.
public struct BindingEditError: EditRefusal, Equatable, Sendable {
    /// The whole message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

extension Session {
    /// Applies `change`; returns the bindings it removed (one a controller learnt again
    /// replaced, too). Throws, changing nothing, when there is no such binding.
    @discardableResult
    public mutating func apply(_ change: BindingChange) throws(BindingEditError) -> [MIDIBinding] {
        switch change {
        case .bind(let binding):
            let replaced = midiBindings.filter { $0.controller == binding.controller && $0.channel == binding.channel }
            bind(binding)
            return replaced
        case .remove(let index):
            guard midiBindings.indices.contains(index) else {
                throw BindingEditError("there is no binding \(index + 1) (the session has \(midiBindings.count))")
            }
            return [midiBindings.remove(at: index)]
        case .removeAll:
            defer { midiBindings = [] }
            return midiBindings
        }
    }
}

extension SessionDocument {
    /// Applies `change` as one undoable step named by it (``BindingChange/undoName``); returns
    /// the bindings it removed. Throws, changing nothing, when it is refused.
    @discardableResult
    public mutating func apply(_ change: BindingChange) throws(BindingEditError) -> [MIDIBinding] {
        var removed: [MIDIBinding] = []
        try edit(change.undoName) { (s: inout Session) throws(BindingEditError) in removed = try s.apply(change) }
        return removed
    }
}
