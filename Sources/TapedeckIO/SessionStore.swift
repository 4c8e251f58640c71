import TapedeckCore

/// How a command reaches the sessions it reads and changes: from their folders on disk (the
/// command line's own run), or, for the session a long-lived owner holds open, from that
/// owner (a command handed to the screen: see ``SessionOwner``).
///
/// Passed to the command explicitly, so a command run for another process changes nothing
/// global: two commands (or a command and the screen's own saves) never see each other's
/// session, output or history label.
public struct SessionStore {
    /// The session an owner serves to a command it runs for another process. Made, used and
    /// dropped on the owner's UI thread (hence unchecked: its closures touch the owner's
    /// state, and no other thread ever calls them).
    public struct Served: @unchecked Sendable {
        /// The folder it is saved in.
        public let folder: SessionFolder
        /// The owner's session as it stands, unsaved edits included.
        public let current: () -> Session
        /// Told each session the command saved into `folder` (the owner makes it an undo
        /// step and plays it).
        public let saved: (Session) -> Void
        /// The name the folder's history gives each save (`marker add 1:00, asked by …`).
        public let label: String

        public init(folder: SessionFolder, label: String, current: @escaping () -> Session, saved: @escaping (Session) -> Void) {
            self.folder = folder
            self.label = label
            self.current = current
            self.saved = saved
        }
    }

    /// The owner's session, when the command runs for one.
    public let served: Served?
    private let servedPath: String?

    /// The command line's own: every session from its folder.
    public static var disk: SessionStore { SessionStore(served: nil) }

    /// Sessions from disk, except `served`'s folder, which is the owner's.
    public init(served: Served?) {
        self.served = served
        servedPath = served.flatMap { SessionOwner.canonicalPath($0.folder.path) }
    }

    private func isServed(_ folder: SessionFolder) -> Bool {
        guard let servedPath else { return false }
        return SessionOwner.canonicalPath(folder.path) == servedPath
    }

    /// The session in `folder`: the owner's as it stands when it is the served one, else
    /// ``SessionFolder/load()``.
    public func load(_ folder: SessionFolder) throws(SessionError) -> Session {
        if let served, isServed(folder) { return served.current() }
        return try folder.load()
    }

    /// Saves `session` into `folder` (``SessionFolder/save(_:label:keepingHistory:)``); the
    /// served one's history step gets the owner's label, and the owner is told.
    public func save(_ session: Session, to folder: SessionFolder) throws(SessionError) {
        guard let served, isServed(folder) else {
            try folder.save(session)
            return
        }
        try folder.save(session, label: served.label)
        var saved = session
        saved.identifyRegions()  // as the save wrote it
        served.saved(saved)
    }
}
