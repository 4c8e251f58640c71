import Foundation
import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// A session whose files no write may replace: its folder and every file it plays.
public struct ProtectedSession: Sendable {
    /// The session's folder.
    public let folder: SessionFolder
    /// Absolute paths (links not yet resolved) of the files and folders the session plays:
    /// region files, frozen renders, files its chains name, saved plugin states.
    public var referenced: [String]
    /// How a refusal names some of them (`audio/x.wav, the audio of a region on track 2`).
    public var labels: [String: String]

    /// A session and the files it plays: its region files and frozen renders, and
    /// `referenced` besides (``SessionReferences`` in the engine adds what chains name).
    public init(folder: SessionFolder, session: Session?, referenced: [String] = []) {
        self.folder = folder
        var files: [String] = []
        var labels: [String: String] = [:]
        // Each file once, named by the first region that plays it: a session at the region
        // limit plays 100,000 regions from a few files.
        var seen: Set<String> = []
        for (t, track) in (session?.tracks ?? []).enumerated() {
            for region in track.regions where seen.insert(region.file).inserted {
                let file = folder.absolutePath(of: region.file)
                files.append(file)
                labels[file] = "\(region.file.terminalSafe), the \(region.isMIDI ? "MIDI" : "audio") of a region on track \(t + 1)"
            }
            if let frozen = track.frozen {
                let file = folder.absolutePath(of: frozen.file)
                files.append(file)
                labels[file] = labels[file] ?? "\(frozen.file.terminalSafe), the frozen render of track \(t + 1)"
            }
        }
        self.referenced = files + referenced
        self.labels = labels
    }
}

/// A write refused by ``WriteGuard``: one line naming what asked, the path and why.
public struct WriteRefusal: Error, CustomStringConvertible, Equatable, Sendable {
    /// What asked for the write, as the user typed it: `export: -o`, `automation: --output`.
    public var what: String
    /// The path as given.
    public var path: String
    /// Why, e.g. `is the session file of s.tapedeck`.
    public var reason: String

    /// Creates a refusal.
    public init(what: String, path: String, reason: String) {
        self.what = what
        self.path = path
        self.reason = reason
    }

    /// `export: -o 'PATH' REASON`, the path escaped.
    public var description: String { "\(what) '\(path.terminalSafe)' \(reason)" }
}

/// The one gate every path Tapedeck writes goes through: exports, stems, chapters, CSV, MIDI
/// files, freeze renders, takes and their split pieces, mirrors, calibration and config.
///
/// It resolves links (in every folder on the way and in the last name) and refuses, in one
/// line, anything a session owns: `session.json`, its backup and temporary names, the lock,
/// and everything inside `history/`, `audio/`, `midi/`, `samples/`, `peaks/`, `plugins/` and
/// `cache/` (wherever those lead), every file a region, chain or lane of the sessions in
/// question refers to (by device and inode, so `..`, links and hard links are seen through),
/// and the same for every other session: one whose folder holds the path, and every session
/// open in a running Tapedeck (``openSessions``). Writes themselves stay atomic: a temporary
/// file of this process's own, then a rename (``write(_:to:as:sessions:)``).
///
/// A new file Tapedeck makes inside a session (a take, a split piece, a freeze render) is
/// ``Kind/newInSession(_:)``: allowed in that session's `audio/` or `midi/` only, and only
/// under a name nothing uses yet.
public enum WriteGuard {
    /// What is written at the path.
    public enum Kind: Sendable {
        /// A file the user named (it replaces what is there).
        case file
        /// A folder files are written into (stems, a mirror, generated clips).
        case folder
        /// A new file Tapedeck names inside the session's own `audio/` or `midi/`.
        case newInSession(SessionFolder)
    }

    /// The sessions open in running Tapedecks (a screen, a recorder), with the files they play;
    /// set once by the program before any command runs (the control folder knows them). Nil:
    /// only the sessions named in a call and those whose folder holds the path are protected.
    /// Called from any thread (the screen exports on a worker): it must not be tied to one.
    nonisolated(unsafe) public static var openSessions: (@Sendable () -> [ProtectedSession])?

    /// The names at the top of a session folder that are the session itself.
    static let sessionFileNames = ["session.json", "session.json.bak", "session.json.tmp", "session.lock"]
    /// The folders Tapedeck keeps a session's material and state in, and what each holds.
    static let protectedFolders: [(name: String, holds: String)] = [
        ("audio", "its recordings"), ("midi", "its MIDI takes"), ("samples", "the samples its chains play"),
        ("peaks", "its waveform peaks"), ("plugins", "its plugin states"), ("cache", "its rendered material"),
        ("history", "its undo history"),
    ]

    /// Refuses writing `path` (as `kind`) when it could destroy anything a session owns;
    /// `what` names the asker in the message (`export: -o`). `sessions` are the sessions in
    /// question (the one exported, recorded into, edited); others are found on the way.
    public static func check(_ path: String, as what: String, sessions: [ProtectedSession] = [],
                             kind: Kind = .file) throws(WriteRefusal) {
        if let reason = refusal(path, sessions: sessions, kind: kind) {
            throw WriteRefusal(what: what, path: path, reason: reason)
        }
    }

    /// Why writing `path` is refused, or nil when it may be written.
    public static func refusal(_ path: String, sessions: [ProtectedSession] = [], kind: Kind = .file) -> String? {
        guard !path.isEmpty else { return "is no path" }
        let targets = resolvedTargets(path)
        guard let main = targets.first else { return "cannot be resolved" }
        // A new name inside the session's own audio/ or midi/ that nothing uses yet cannot be
        // any session's file: nothing else is looked at (a take starts without delay).
        if case .newInSession(let own) = kind { return newFileProblem(main, path: path, in: own) }
        var all = sessions
        var roots = Set(sessions.compactMap { SessionFolder.resolved($0.folder.path) })
        func add(_ found: [ProtectedSession]) {
            for s in found {
                guard let root = SessionFolder.resolved(s.folder.path), roots.insert(root).inserted else { continue }
                all.append(s)
            }
        }
        for target in targets { add(enclosingSessions(of: target, known: roots)) }
        if let open = openSessions { add(open()) }
        for session in all {
            for target in targets {
                if let problem = problem(target, in: session, kind: kind) { return problem }
            }
        }
        return nil
    }

    /// Checks `path`, then writes `bytes` there atomically and durably: a temporary file of
    /// this process's own beside it (created exclusively, never through a link), fsynced,
    /// renamed over `path`. Throws ``WriteRefusal`` or ``AudioFileError``.
    public static func write(_ bytes: [UInt8], to path: String, as what: String, sessions: [ProtectedSession] = []) throws {
        try check(path, as: what, sessions: sessions)
        let temporary = temporaryPath(for: path)
        // A failure names the path the user gave, not the temporary name (and the folder's
        // name in it escaped, as every path Tapedeck says).
        do { try DurableFile.writeNew(bytes, to: temporary) } catch {
            throw AudioFileError(path: path, reason: error.reason.terminalSafe)
        }
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw AudioFileError(path: path, reason: "cannot write: \(code == EISDIR ? "it is a folder" : DurableFile.writeProblem(code))")
        }
        DurableFile.syncFolder(parentFolder(of: path))
    }

    /// A temporary name beside `path` that no other process (and no earlier run) uses:
    /// `.NAME.PID-RANDOM.tmp`, hidden, in the same folder so the rename stays on one disk.
    public static func temporaryPath(for path: String) -> String {
        let dir = parentFolder(of: path)
        let name = lastComponent(of: path)
        return (path.contains("/") ? dir + "/" : "") + ".\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
    }

    // MARK: - Resolving

    /// Where a write to `path` lands: the path with every folder's links resolved (first),
    /// and, when the last name is itself a link, where that leads.
    static func resolvedTargets(_ path: String) -> [String] {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts = absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let last = parts.popLast() else { return ["/"] }
        // The longest leading part that exists, resolved; the rest as written (`..` applied).
        var existing = parts.count
        var base: String?
        while existing >= 0 {
            base = SessionFolder.resolved("/" + parts.prefix(existing).joined(separator: "/"))
            if base != nil { break }
            existing -= 1
        }
        var components = (base ?? "").split(separator: "/").map(String.init)
        for part in parts.dropFirst(max(existing, 0)) + [last] {
            if part == "." { continue }
            if part == ".." { _ = components.popLast(); continue }
            components.append(part)
        }
        let direct = "/" + components.joined(separator: "/")
        var out = [direct]
        var st = stat()
        if lstat(direct, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK, let target = SessionFolder.resolved(direct), target != direct {
            out.append(target)
        }
        return out
    }

    /// Sessions whose folders hold `target` (a folder with `session.json`, its backup or its
    /// lock), not among `known`; each with the files its session file names.
    static func enclosingSessions(of target: String, known: Set<String>) -> [ProtectedSession] {
        var out: [ProtectedSession] = []
        var dir = target
        while dir != "/" && !dir.isEmpty {
            if !known.contains(dir) && sessionFileNames.contains(where: { FileSystem.isPresent(dir + "/" + $0) }) {
                let folder = SessionFolder(exactPath: dir)
                out.append(ProtectedSession(folder: folder, session: folder.loadQuietly()))
            }
            dir = parentFolder(of: dir)
        }
        return out
    }

    // MARK: - Judging

    /// Why `target` (resolved) belongs to `session`, or nil.
    static func problem(_ target: String, in session: ProtectedSession, kind: Kind) -> String? {
        guard let root = SessionFolder.resolved(session.folder.path) else { return nil }
        let name = "the session \(lastComponent(of: root).terminalSafe)"
        if target == root { return "is the folder of \(name); choose a file or folder outside what it keeps" }
        if SessionFolder.isInside(target, root) {
            let first = target.dropFirst(root.count + 1).split(separator: "/").first.map(String.init) ?? ""
            if sessionFileNames.contains(first) || first.hasPrefix("session.json") {
                return "is \(first.terminalSafe) of \(name): Tapedeck never writes over a session's own files (write elsewhere, e.g. its exports/)"
            }
        }
        for (sub, holds) in protectedFolders {
            let plain = root + "/" + sub
            let leads = SessionFolder.resolved(plain)
            guard SessionFolder.isInside(target, plain) || leads.map({ SessionFolder.isInside(target, $0) }) == true else { continue }
            return "is inside \(sub)/ of \(name), where Tapedeck keeps \(holds); write to its exports/ or elsewhere"
        }
        let identity = FileStamp.identity(of: target)
        var seen: Set<String> = []
        for file in session.referenced where seen.insert(file).inserted {
            let what = { session.labels[file] ?? describe(file, root: root) }
            if let identity, FileStamp.identity(of: file) == identity {
                return "is \(what()), which \(name) plays; Tapedeck never writes over it"
            }
            guard let resolved = SessionFolder.resolved(file) else { continue }
            if resolved == target { return "is \(what()), which \(name) plays; Tapedeck never writes over it" }
            if FileSystem.isFolder(resolved) && SessionFolder.isInside(target, resolved) {
                return "is inside \(what()), which \(name) plays from; Tapedeck never writes there"
            }
            if case .folder = kind, parentFolder(of: resolved) == target {
                return "holds \(what()), which \(name) plays; files are never written beside what a session plays"
            }
        }
        return nil
    }

    /// A new file inside `own`: only in its `audio/` or `midi/`, under a name nothing uses.
    static func newFileProblem(_ target: String, path: String, in own: SessionFolder) -> String? {
        let inside = ["audio", "midi"].contains { sub in
            let plain = own.path + "/" + sub
            return SessionFolder.resolved(plain).map { SessionFolder.isInside(target, $0) && target != $0 } == true
        }
        if !inside { return "is not inside audio/ or midi/ of the session it belongs to" }
        if FileSystem.isPresent(target) || FileSystem.isPresent(path) { return "already exists; a new take or render never replaces a file" }
        return nil
    }

    /// A referenced file as the user knows it: relative to its session when inside it.
    static func describe(_ file: String, root: String) -> String {
        let resolved = SessionFolder.resolved(file) ?? file
        if SessionFolder.isInside(resolved, root) && resolved != root { return String(resolved.dropFirst(root.count + 1)).terminalSafe }
        return file.terminalSafe
    }
}

extension SessionFolder {
    /// The folder at exactly `path` (a session folder found on disk, whatever its name ends in).
    init(exactPath: String) { self.path = exactPath }

    /// The session on disk (else its backup), or nil when neither can be read; no notice
    /// printed, no error, nothing checked beyond the decoding (for ``WriteGuard``).
    public func loadQuietly() -> Session? {
        for file in [sessionFile, backupFile] {
            guard let bytes = try? FileSystem.readAll(path: file, limitBytes: Int64(SessionLimits.maximumSessionFileBytes)),
                  let session = try? JSONDecoder().decode(Session.self, from: Data(bytes)) else { continue }
            return session
        }
        return nil
    }
}

extension FileStamp {
    /// The device and inode of the file `path` leads to, which two names of one file share.
    public static func identity(of path: String) -> [UInt64]? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return [UInt64(st.st_dev), UInt64(st.st_ino)]
    }
}
