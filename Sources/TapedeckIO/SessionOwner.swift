import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// A session held open by a long-lived owner (the screen), and the command-line edits handed
/// to it while it runs.
///
/// Only one process changes a session (``SessionLock``). When that process is the screen, a
/// command-line edit (`tapedeck marker S add 1:00`) would be refused for as long as the
/// screen stays open. Instead the command hands itself to the owner over the control socket,
/// typed (its parsed value as JSON, `cmd {…}`: never words the owner parses again), and the
/// owner runs the same command in its own process, reaching the
/// session through a ``SessionStore`` that serves the owner's: the lock is its own already,
/// loading gives the owner's session as it stands (unsaved screen edits included, never a
/// stale file), and each save is told to the owner, which makes it one undo step, tells the
/// engine, and shows who asked. One implementation of every edit, whoever asks for it.
public enum SessionOwner {
    /// In a command-line process running a command that may be handed over: given the pid a
    /// session's lock names, whether that process takes edits (it serves a control socket).
    /// nil (the default) keeps the old behaviour: wait for the lock, then refuse. Set once by
    /// the command line before its command runs; read by ``SessionLock``.
    nonisolated(unsafe) public static var takesEdits: ((Int32) -> Bool)?

    /// In a command-line process running a command that reads a session (`info`, `marker`
    /// without an action): whether a read of a session held open by a process that takes
    /// edits (``takesEdits``) is handed to that owner, which answers from the session as it
    /// stands, unsaved edits included, rather than from the saved file. Set once by the
    /// command line before its command runs; read by ``handReadToOwner(_:)``.
    nonisolated(unsafe) public static var readsAskOwner = false

    /// Throws, naming the owner, when this process reads `folder` as a command that hands its
    /// reads over (``readsAskOwner``) and the session is held open by another process: the
    /// command line then asks that owner to run the command instead when it takes edits, and
    /// otherwise (``SessionError/ownerListens`` false) reads the saved file saying so first.
    /// Returns when the read is this process's own: nobody holds the session, or this process
    /// does. Never waits: the lock is only tested.
    public static func handReadToOwner(_ folder: SessionFolder) throws(SessionError) {
        guard readsAskOwner, let takesEdits, !SessionLock.isHeld(folder) else { return }
        // Only tested, never created: a read makes no files. A shared lock is refused only
        // while a writer holds it; when granted it goes with the descriptor.
        let fd = open(folder.lockFile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        var held = false
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            held = errno == EWOULDBLOCK
            break
        }
        close(fd)
        guard held, let pid = SessionLock.holderPid(folder), pid != getpid() else { return }
        throw SessionError(path: folder.path, reason: "held open by \(SessionLock.holderText(folder))", ownerPid: pid, ownerAnswersRead: true,
                           ownerListens: takesEdits(pid))
    }

    /// `path` with every link resolved; nil when it does not exist.
    public static func canonicalPath(_ path: String) -> String? { canonical(path) }

    static func canonical(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
