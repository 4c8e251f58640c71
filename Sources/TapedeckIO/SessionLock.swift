import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One writer per session: an exclusive `flock` on `SESSION/session.lock`, held by every
/// command and screen that changes the session, from before it reads the session until it
/// has saved it.
///
/// Without it, two commands that read, change and save one session lose one change (both
/// read the same state, the second save drops the first's edit), and two recorders can pick
/// the same take name. With it, the second one waits ``defaultWaitSeconds`` for the first to
/// finish, then gives up with one line naming the holder (its pid and command line, which
/// the holder writes into the lock file). Commands that only read (`info`, `play`, `export`)
/// take no lock: saves replace `session.json` atomically, so they always read a whole one.
///
/// The kernel drops the lock when its holder exits in any way, `kill -9` included, so there
/// is never a stale lock to clean up; the lock file itself stays (deleting it would let two
/// processes hold locks on two different files).
///
/// Locks are counted per process: taking the lock again in a process that holds it returns
/// at once, so library code (a save, a recovery) can take it around its own work whether or
/// not the command already holds it. The lock is released when the last ``SessionLock``
/// value for the folder goes away.
public final class SessionLock: @unchecked Sendable {
    /// How long a second writer waits for the first.
    public static let defaultWaitSeconds = 3.0

    /// The session folder locked.
    public let folderPath: String
    private let key: String

    private struct Held {
        var fd: Int32
        var count: Int
    }

    /// Locks this process holds, by canonical folder path.
    private static let held = Mutex<[String: Held]>([:])

    private init(folderPath: String, key: String) {
        self.folderPath = folderPath
        self.key = key
    }

    deinit {
        SessionLock.held.withLock { table in
            guard var entry = table[key] else { return }
            entry.count -= 1
            if entry.count > 0 {
                table[key] = entry
            } else {
                table[key] = nil
                // Closing the only descriptor releases the flock.
                close(entry.fd)
            }
        }
    }

    /// The command line of this process, as the lock file records it for others to read.
    public static var commandLine: String {
        let words = CommandLine.arguments.prefix(8).map { word -> String in
            let last = word.split(separator: "/").last.map(String.init) ?? word
            return word == CommandLine.arguments.first ? last : word
        }
        let text = words.joined(separator: " ")
        return String(text.prefix(160)).terminalSafe
    }

    /// Takes the lock on `folder`, waiting up to `waitSeconds` for another process to let go.
    /// Throws a ``SessionError`` naming the holder when it does not, or why the lock file
    /// cannot be made. The folder must exist.
    public static func acquire(_ folder: SessionFolder, command: String = SessionLock.commandLine,
                               waitSeconds: Double = SessionLock.defaultWaitSeconds) throws(SessionError) -> SessionLock {
        guard let lock = try take(folder, command: command, waitSeconds: waitSeconds) else {
            let holder = holderText(folder)
            throw SessionError(path: folder.path, reason: "in use by \(holder), which is changing it; try again when it has finished")
        }
        return lock
    }

    /// Takes the lock only if no other process holds it: nil when one does.
    public static func acquireIfFree(_ folder: SessionFolder, command: String = SessionLock.commandLine) throws(SessionError) -> SessionLock? {
        try take(folder, command: command, waitSeconds: 0)
    }

    /// Whether this process holds the lock on `folder`.
    public static func isHeld(_ folder: SessionFolder) -> Bool {
        guard let key = canonicalPath(folder.path) else { return false }
        return held.withLock { $0[key] != nil }
    }

    /// Who holds the lock on `folder`, as its lock file says: `pid 123 (tapedeck record …)`.
    public static func holderText(_ folder: SessionFolder) -> String {
        let bytes = FileSystem.readPrefix(path: folder.lockFile, count: 512) ?? []
        let text = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        return text.isEmpty ? "another Tapedeck process" : text.terminalSafe
    }

    /// The pid the lock file names (`pid 123 (…)`), if it names one.
    public static func holderPid(_ folder: SessionFolder) -> Int32? {
        let text = holderText(folder)
        guard text.hasPrefix("pid ") else { return nil }
        return Int32(text.dropFirst(4).prefix { $0.isNumber })
    }

    private static func take(_ folder: SessionFolder, command: String, waitSeconds: Double) throws(SessionError) -> SessionLock? {
        guard let key = canonicalPath(folder.path) else {
            throw SessionError(path: folder.path, reason: FileSystem.exists(folder.path) ? "cannot lock: \(FileSystem.errnoText())" : "no such session folder")
        }
        let reused = held.withLock { table -> Bool in
            guard var entry = table[key] else { return false }
            entry.count += 1
            table[key] = entry
            return true
        }
        if reused { return SessionLock(folderPath: folder.path, key: key) }

        let fd = open(folder.lockFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            throw SessionError(path: folder.lockFile, reason: "cannot create the session lock: \(FileSystem.createProblem(path: folder.lockFile, code: code))")
        }
        var waitedNanoseconds: Int64 = 0
        let limit = Int64(max(waitSeconds, 0) * 1e9)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            // Held by a Tapedeck that takes edits (the screen): no use waiting for it to
            // finish, the edit is handed to it instead (SessionOwner).
            if code == EWOULDBLOCK, waitedNanoseconds == 0, let takesEdits = SessionOwner.takesEdits,
               let pid = holderPid(folder), pid != getpid(), takesEdits(pid) {
                close(fd)
                throw SessionError(path: folder.path, reason: "held open by \(holderText(folder))", ownerPid: pid)
            }
            guard code == EWOULDBLOCK, waitedNanoseconds < limit else {
                close(fd)
                if code == EWOULDBLOCK { return nil }
                throw SessionError(path: folder.lockFile, reason: "cannot lock: \(FileSystem.errnoText(code))")
            }
            usleep(50_000)
            waitedNanoseconds += 50_000_000
        }
        // Say who holds it, for whoever waits next. Best effort: the lock works without it.
        let line = Array("pid \(getpid()) (\(command))\n".utf8)
        _ = ftruncate(fd, 0)
        _ = line.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        // Another thread of this process may have taken it meanwhile; keep one descriptor.
        let duplicate = held.withLock { table -> Bool in
            if var entry = table[key] {
                entry.count += 1
                table[key] = entry
                return true
            }
            table[key] = Held(fd: fd, count: 1)
            return false
        }
        if duplicate { close(fd) }
        return SessionLock(folderPath: folder.path, key: key)
    }

    /// The folder's path with every link resolved, so two spellings of one folder share a lock.
    private static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
