import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// The one owner of an open session: its document (the session and its undo history), where
/// it is saved (its folder, the history step each save is named by), and the transport that
/// plays it. The screen and headless `record` and `play` each host one; nothing else changes
/// a session they hold.
///
/// Every change goes through here, and the transport hears it here, in one place: a front-end
/// cannot change the document and forget to tell the engine, or tell it half (a loop range
/// without the loop). Changes are the typed values both front-ends make (``RegionChange``,
/// ``TrackChange`` …: ``change(_:)``); values the engine takes on its fast path (a fader, a
/// node's parameter) go by ``editMixer(_:merging:heard:_:)`` and
/// ``editChainValue(_:merging:heard:_:chains:)``.
///
/// Owner's thread only (the screen's UI thread, a headless command's loop).
public final class OwnedSession {
    /// The session and its undo history.
    public private(set) var document: SessionDocument
    /// Where the session is saved; nil for an untitled session not yet saved (the screen's
    /// save-as names it: ``saveAs(_:)``).
    public private(set) var folder: SessionFolder?
    /// The transport playing it, told every change; nil for a headless pass, whose transport
    /// plays the session it started with and takes no edits while it runs.
    public let link: (any TransportLink)?
    /// The lock of a session this owner created (its first save into a new folder): held from
    /// then until the owner goes, as the command holds the lock of one it opened.
    private var createdLock: SessionLock?

    /// Owns `document`, saved in `folder` (nil: untitled), played by `link`, which is told the
    /// session, its loop and its punch at once.
    public init(document: SessionDocument, folder: SessionFolder?, link: (any TransportLink)?) {
        self.document = document
        self.folder = folder
        self.link = link
        link?.update(session: document.session)
        link?.setLoop(document.session.loopRange, enabled: document.session.loopEnabled)
        link?.setPunch(document.session.punchRange, enabled: document.session.punchEnabled)
    }

    /// The session as it stands, unsaved edits included.
    public var session: Session { document.session }
    /// Whether there are edits not saved.
    public var isDirty: Bool { document.isDirty }

    // MARK: Changes

    /// Makes a change of the document (a typed change's `apply`, an undoable `edit`) and tells
    /// the transport what it changed: the session, and its loop or punch when those moved.
    /// A refusal (thrown) changes nothing and tells nothing. `body` has the document for
    /// itself: it reads the session through its argument, never through this owner (an
    /// exclusivity conflict: compute what it needs first).
    @discardableResult
    public func change<R, E: Error>(_ body: (inout SessionDocument) throws(E) -> R) throws(E) -> R {
        let before = document.session
        let result = try body(&document)
        follow(from: before)
        return result
    }

    /// One undoable step called `name` made by `change` (``SessionDocument/edit(_:_:)``),
    /// heard at once.
    public func edit(_ name: String, _ change: (inout Session) -> Void) {
        self.change { $0.edit(name, change) }
    }

    /// Mixer values as one undoable step (merged into the last when `merging` and it has the
    /// same name: one gesture); the transport is handed exactly those (``MixerChange``), no
    /// new graph. `heard`: the engine has them already (a learnt controller moved them).
    public func editMixer(_ name: String, merging: Bool = false, heard: Bool = false, _ changes: [MixerChange]) {
        let change: (inout Session) -> Void = { s in for c in changes { s.apply(c) } }
        if merging && document.undoName == name { document.editMerging(name, change) } else { document.edit(name, change) }
        if !heard { link?.apply(changes) }
    }

    /// One value of a node of a chain (a parameter, a bypass) as one undoable step (merged
    /// as ``editMixer(_:merging:heard:_:)`` merges); the transport gets exactly that value,
    /// heard through the node's smoothing without a new graph. `chains` holds the parsed
    /// chains, so the changed one is not read again.
    public func editChainValue(_ name: String, merging: Bool = false, heard: Bool = false, _ value: ChainValueChange,
                               chains: inout SessionChains) {
        if merging { document.editMerging(name) { $0.apply(value, chains: &chains) } } else { document.edit(name) { $0.apply(value, chains: &chains) } }
        if !heard { link?.apply([value]) }
    }

    /// Reverts the last step (or reapplies the last undone one) and tells the transport;
    /// its name, or nil when there was none.
    @discardableResult
    public func undo() -> String? { change { $0.undo() } }
    @discardableResult
    public func redo() -> String? { change { $0.redo() } }

    /// Tells the transport what changed since `before`.
    private func follow(from before: Session) {
        let now = document.session
        guard now != before, let link else { return }
        link.update(session: now)
        if now.loopRange != before.loopRange || now.loopEnabled != before.loopEnabled { link.setLoop(now.loopRange, enabled: now.loopEnabled) }
        if now.punchRange != before.punchRange || now.punchEnabled != before.punchEnabled { link.setPunch(now.punchRange, enabled: now.punchEnabled) }
    }

    // MARK: Saving

    /// Saves into the folder, the history step named `label` (`screen: trim end`; nil: this
    /// process's command line, `record --duration 1m`); creates
    /// the folder, and holds its lock, when it does not exist yet. Throws when there is no
    /// folder (the caller asks where first) or the save is refused; nothing is marked saved then.
    public func save(label: String?) throws(SessionError) {
        guard let folder else { throw SessionError(path: "", reason: "the session has no folder yet") }
        if folder.exists {
            try folder.save(document.session, label: label)
        } else {
            createdLock = try folder.create(document.session)
        }
        document.markSaved()
    }

    /// Names the folder an untitled session is saved in (the first ``save(label:)`` creates it).
    public func saveAs(_ folder: SessionFolder) { self.folder = folder }

    /// The session served to a command run for another process (`tapedeck marker S add 1:00`
    /// with the screen open: see ``SessionOwner``): it reads this session as it stands, and
    /// each save it makes is one undo step called `step` (a command that saves twice makes one
    /// step), heard at once and counted as saved (the command wrote this whole session). nil
    /// without a folder. `onSave` is told after each.
    public func served(step: String, onSave: @escaping () -> Void = {}) -> SessionStore.Served? {
        guard let folder else { return nil }
        var stepOpen = false
        return SessionStore.Served(folder: folder, label: step, current: { [unowned self] in self.session }, saved: { [unowned self] saved in
            self.change { doc in
                if stepOpen { doc.editMerging(step) { $0 = saved } } else { doc.edit(step) { $0 = saved } }
                doc.markSaved()
            }
            stepOpen = true
            onSave()
        })
    }
}
