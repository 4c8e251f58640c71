import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where running Tapedecks keep their control sockets: `$XDG_RUNTIME_DIR/tapedeck/`, or,
/// when that is not set, `/tmp/tapedeck-UID/`. Either folder is the user's own, mode 0700,
/// and each socket in it is `PID.sock`, mode 0600: no other user reaches one (and the
/// server checks the caller's uid besides). Nothing listens on the network.
public enum ControlFolder {
    /// The folder's path for this user (not created).
    public static var path: String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/tapedeck"
        }
        return "/tmp/tapedeck-\(getuid())"
    }

    /// The socket of process `pid`.
    public static func socketPath(pid: pid_t) -> String { path + "/\(pid).sock" }

    /// Creates the folder (0700) if needed and checks it is this user's alone: a folder that
    /// another user owns, or that others may enter, is refused — a socket there could be
    /// swapped for someone else's.
    public static func prepare() throws(RemoteError) -> String {
        let folder = path
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw RemoteError("cannot create the control folder \(folder): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        guard lstat(folder, &st) == 0 else { throw RemoteError("cannot read the control folder \(folder): \(String(cString: strerror(errno)))") }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw RemoteError("\(folder) is not a folder (a link or a file is in its place)") }
        guard st.st_uid == getuid() else { throw RemoteError("\(folder) belongs to another user: control sockets are not made there") }
        if st.st_mode & 0o077 != 0 && chmod(folder, 0o700) != 0 {
            throw RemoteError("\(folder) is open to other users and cannot be closed: \(String(cString: strerror(errno)))")
        }
        return folder
    }

    /// The pids with a socket in the folder whose process still runs; sockets of processes
    /// that are gone (a crash, a SIGKILL) are removed on the way.
    public static func running() -> [pid_t] {
        let folder = path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var pids: [pid_t] = []
        for name in names where name.hasSuffix(".sock") {
            guard let pid = pid_t(name.dropLast(5)), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                unlink(folder + "/" + name)
                continue
            }
            pids.append(pid)
        }
        return pids.sorted()
    }
}
