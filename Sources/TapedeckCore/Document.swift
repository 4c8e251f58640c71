/// A session being edited, with undo and redo for every change.
///
/// Every edit goes through ``edit(_:_:)``, which keeps the state before it; the model is a
/// value type, so a snapshot costs a copy-on-write reference, not a deep copy.
public struct SessionDocument: Sendable {
    /// The current state.
    public private(set) var session: Session
    /// Whether there are edits since the last ``markSaved()``.
    public var isDirty: Bool { session != savedSession }

    private var undoStack: [(name: String, session: Session)] = []
    private var redoStack: [(name: String, session: Session)] = []
    private var savedSession: Session
    /// How many edits are kept for undo.
    public var undoLimit = 500

    /// Starts editing `session`, with empty history; it counts as saved.
    public init(session: Session) {
        self.session = session
        self.savedSession = session
    }

    /// Applies `change` as one undoable step called `name`. A change that leaves the session
    /// as it was is not recorded. Throws whatever `change` throws, leaving the session untouched.
    public mutating func edit<E: Error>(_ name: String, _ change: (inout Session) throws(E) -> Void) throws(E) {
        var next = session
        try change(&next)
        // A region that appears (an import, a take, a split's right half, a copy) gets its id.
        next.identifyRegions(keeping: session)
        guard next != session else { return }
        undoStack.append((name, session))
        if undoStack.count > undoLimit { undoStack.removeFirst() }
        redoStack.removeAll()
        session = next
    }

    /// Applies `change` as part of the last undoable step when that step has the same name
    /// (a controller turned: its many values are one step), else as a new step.
    public mutating func editMerging(_ name: String, _ change: (inout Session) -> Void) {
        guard undoStack.last?.name == name, redoStack.isEmpty else {
            edit(name, change)
            return
        }
        let previous = session
        change(&session)
        session.identifyRegions(keeping: previous)
    }

    /// Name of the edit ``undo()`` would revert, if any.
    public var undoName: String? { undoStack.last?.name }
    /// Name of the edit ``redo()`` would reapply, if any.
    public var redoName: String? { redoStack.last?.name }
    /// Names of the edits ``undo()`` would revert, the next one first.
    public var undoNames: [String] { undoStack.reversed().map(\.name) }
    /// Names of the edits ``redo()`` would reapply, the next one first.
    public var redoNames: [String] { redoStack.reversed().map(\.name) }

    /// Reverts the last edit; returns its name, or nil when there is nothing to undo.
    @discardableResult
    public mutating func undo() -> String? {
        guard let last = undoStack.popLast() else { return nil }
        redoStack.append((last.name, session))
        session = last.session
        return last.name
    }

    /// Reapplies the last undone edit; returns its name, or nil when there is nothing to redo.
    @discardableResult
    public mutating func redo() -> String? {
        guard let next = redoStack.popLast() else { return nil }
        undoStack.append((next.name, session))
        session = next.session
        return next.name
    }

    /// Records that the current state is what is on disk.
    public mutating func markSaved() { savedSession = session }
}
