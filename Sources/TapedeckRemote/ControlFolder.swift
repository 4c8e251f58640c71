import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where running Tapedecks keep their control sockets: `$XDG_RUNTIME_DIR/tapedeck/`, or,
/// when that is not set, `/tmp/tapedeck-UID/`. Each socket is `PID.sock`, mode 0600, in a
/// folder that is the user's own, mode 0700 and not a link: no other user reaches one (and
/// the server checks the caller's uid besides). Nothing listens on the network.
///
/// `/tmp` is everybody's: another user can make `/tmp/tapedeck-UID` first (a squatter) and
/// listen there for commands meant for you. Neither side trusts a folder it did not make:
/// a server whose folder is taken makes one of a name nobody can predict beside it
/// (`/tmp/tapedeck-UID-Xa9Qz1`, by `mkdtemp`), and clients look for sockets only in folders
/// that pass ``distrust(_:)`` — the usual one and those siblings — and check the uid of the
/// process that answers (``ControlClient``). A squatted folder is named to the user, never
/// used.
public enum ControlFolder {
    /// The usual folder's path for this user (not created).
    public static var path: String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/tapedeck"
        }
        return "/tmp/tapedeck-\(getuid())"
    }

    /// The socket of process `pid` in the usual folder (where a server would make it).
    public static func socketPath(pid: pid_t) -> String { path + "/\(pid).sock" }

    /// Why `folder` cannot hold this user's sockets, or nil when it can: it must be a folder
    /// (not a link), this user's own, that no other user may enter or write (mode 0700).
    public static func distrust(_ folder: String) -> String? {
        var st = stat()
        guard lstat(folder, &st) == 0 else { return String(cString: strerror(errno)) }
        if st.st_mode & S_IFMT == S_IFLNK { return "a link is in its place" }
        guard st.st_mode & S_IFMT == S_IFDIR else { return "it is not a folder" }
        guard st.st_uid == getuid() else { return "it belongs to another user (uid \(st.st_uid))" }
        guard st.st_mode & 0o077 == 0 else { return "other users may enter it (mode \(String(st.st_mode & 0o777, radix: 8)))" }
        return nil
    }

    /// The folder a server makes its socket in, created (0700) when missing: the usual one
    /// when it is this user's alone (an own folder left open to others is closed again), else
    /// an own sibling of unpredictable name (one left by an earlier server is used again).
    public static func prepare() throws(RemoteError) -> String {
        let folder = path
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw RemoteError("cannot create the control folder \(folder): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        if lstat(folder, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == getuid(), st.st_mode & 0o077 != 0 {
            // Our own folder, opened up (by us, or a umask): closed again, then trusted.
            if chmod(folder, 0o700) != 0 {
                throw RemoteError("\(folder) is open to other users and cannot be closed: \(String(cString: strerror(errno)))")
            }
        }
        guard distrust(folder) != nil else { return folder }
        if let own = siblings().first(where: { distrust($0) == nil }) { return own }
        var template = Array((folder + "-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let p = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: p)
        }
        guard let made, distrust(made) == nil else {
            throw RemoteError("\(folder) is not usable (\(distrust(folder) ?? "?")) and no folder of its own can be made beside it: \(String(cString: strerror(errno)))")
        }
        return made
    }

    /// The folders beside the usual one that a server whose folder was taken may have made
    /// (`NAME-XXXXXX`), whoever owns them; ``distrust(_:)`` says which may be used.
    ///
    /// Read with `readdir`, comparing bytes: the parent is `/tmp` when `XDG_RUNTIME_DIR` is
    /// unset, and every command that writes a file asks (the write guard's open sessions).
    /// With 3,000 entries in `/tmp`, making a String of each (FileManager) cost ~2 ms a call.
    static func siblings() -> [String] {
        let usual = path
        guard let slash = usual.lastIndex(of: "/") else { return [] }
        let parent = slash == usual.startIndex ? "/" : String(usual[..<slash])
        let prefix = Array((String(usual[usual.index(after: slash)...]) + "-").utf8)
        guard let directory = opendir(parent) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name: String? = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                guard let end = bytes.firstIndex(of: 0), end == prefix.count + 6,
                      bytes.prefix(prefix.count).elementsEqual(prefix) else { return nil }
                return String(decoding: bytes[..<end], as: UTF8.self)
            }
            if let name { names.append(name) }
        }
        return names.sorted().map { (parent == "/" ? "" : parent) + "/" + $0 }
    }

    /// Every folder that may hold this user's sockets (`trusted`), and those refused with
    /// why: the usual folder when someone else's (or open to others), and siblings of its
    /// name that are not this user's alone.
    public static func folders() -> (trusted: [String], refused: [(folder: String, why: String)]) {
        var trusted: [String] = []
        var refused: [(String, String)] = []
        for folder in [path] + siblings() {
            var st = stat()
            guard lstat(folder, &st) == 0 else { continue }
            if let why = distrust(folder) { refused.append((folder, why)) } else { trusted.append(folder) }
        }
        return (trusted, refused)
    }

    /// Where process `pid` listens: its socket in a trusted folder, when there is one (a
    /// socket, this user's). Nil when it has none there.
    public static func trustedSocket(pid: pid_t) -> String? {
        for folder in folders().trusted {
            let socket = folder + "/\(pid).sock"
            var st = stat()
            if lstat(socket, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK, st.st_uid == getuid() { return socket }
        }
        return nil
    }

    /// The pids with a socket in a trusted folder whose process still runs; sockets (and
    /// session notes) of processes that are gone (a crash, a SIGKILL) are removed on the way.
    public static func running() -> [pid_t] {
        var pids: [pid_t] = []
        for folder in folders().trusted {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            // A command line handed over in a file whose asker died before it was read.
            for name in names where name.contains(".cli-") {
                let asker = name.split(separator: "-").dropFirst().first.flatMap { pid_t($0) } ?? 0
                if asker > 0 && kill(asker, 0) != 0 && errno == ESRCH { unlink(folder + "/" + name) }
            }
            for name in names where name.hasSuffix(".sock") || name.hasSuffix(".session") {
                let stem = name.hasSuffix(".sock") ? name.dropLast(5) : name.dropLast(8)
                guard let pid = pid_t(stem), pid > 0 else { continue }
                if kill(pid, 0) != 0 && errno == ESRCH {
                    unlink(folder + "/" + name)
                    continue
                }
                if name.hasSuffix(".sock") { pids.append(pid) }
            }
        }
        return pids.sorted()
    }

    /// The sessions open in running Tapedecks of this user (each server notes its session
    /// beside its socket: `PID.session`), as absolute paths.
    public static func openSessions() -> [String] {
        var out: [String] = []
        for folder in folders().trusted {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names where name.hasSuffix(".session") {
                guard let pid = pid_t(name.dropLast(8)), pid > 0, kill(pid, 0) == 0 || errno != ESRCH else { continue }
                let file = folder + "/" + name
                var st = stat()
                guard lstat(file, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == getuid(), st.st_size < 8192,
                      let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
                let session = text.trimmingCharacters(in: .newlines)
                if session.hasPrefix("/") { out.append(session) }
            }
        }
        return out
    }
}
