import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The other end of a control socket: `tapedeck ctl`, and a command line handed to the screen.
///
/// It trusts nothing it did not make: a socket is looked for only in a folder that is the
/// user's own, mode 0700 and not a link (``ControlFolder/distrust(_:)``), and the process
/// that answers must run as the same user (`SO_PEERCRED`) before a byte is sent. Anything else
/// is refused in one line naming the folder.
public enum ControlClient {
    /// Sends one line to the Tapedeck running as `pid` and returns its one-line reply.
    public static func send(_ line: String, toPid pid: pid_t, timeoutMilliseconds: Int = 5000) throws(RemoteError) -> String {
        let path = try trustedSocket(pid: pid)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RemoteError("cannot make a socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard let connected = UnixSocketAddress.with(path, { connect(fd, $0, $1) }) else {
            throw RemoteError("the socket's path is too long: \(path)")
        }
        guard connected == 0 else {
            switch errno {
            case EACCES, EPERM: throw RemoteError("Tapedeck pid \(pid) belongs to another user: its socket \(path) refuses you")
            case ECONNREFUSED, ENOENT: throw RemoteError("Tapedeck pid \(pid) is not listening (it has quit?)", nobodyListens: true)
            default: throw RemoteError("cannot reach Tapedeck pid \(pid) at \(path): \(String(cString: strerror(errno)))")
            }
        }
        // The kernel's word on who listens there, before anything is said to it.
        var cred = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0 else {
            throw RemoteError("cannot tell who listens at \(path): \(String(cString: strerror(errno))); nothing was sent")
        }
        guard cred.uid == getuid() else {
            throw RemoteError("\(folder(of: path)): the process listening at \(path) runs as uid \(cred.uid), not as you (uid \(getuid())); nothing was sent")
        }
        let request = Array((line + "\n").utf8)
        let sent = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else {
            // A Tapedeck that refuses a caller says why and hangs up at once, maybe before the
            // command was sent: its reason may be waiting all the same.
            if let said = try? readLine(fd, pid: pid, timeoutMilliseconds: 500), !said.isEmpty { return said }
            throw RemoteError("Tapedeck pid \(pid) hung up before it heard the command")
        }
        return try readLine(fd, pid: pid, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Hands a typed command (``TypedCommand``) to the Tapedeck running as `pid` (it owns the
    /// session) and returns its reply. A line too long for the control socket (an argument of
    /// 70 KB, say) goes in a file of its own in the same trusted folder (`cmd-file NAME`), so
    /// the owner answers the mistake in it exactly as the command alone would.
    public static func sendTyped(_ command: TypedCommand, toPid pid: pid_t, timeoutMilliseconds: Int) throws(RemoteError) -> String {
        let line = RemoteCommand.typed(command).line
        if line.utf8.count <= ControlServer.maximumLineBytes { return try send(line, toPid: pid, timeoutMilliseconds: timeoutMilliseconds) }
        let body = Array(command.json.utf8)
        guard body.count <= ControlServer.maximumCommandFileBytes else {
            throw RemoteError("the command line is \(body.count) bytes, more than a running Tapedeck takes (\(ControlServer.maximumCommandFileBytes))")
        }
        let name = "\(pid).cmd-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let file = folder(of: try trustedSocket(pid: pid)) + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw RemoteError("cannot hand the command line over in \(file): \(String(cString: strerror(errno)))") }
        var done = 0
        while done < body.count {
            let n = body.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            done += n
        }
        close(fd)
        // The owner removes it once read; gone already or not, it goes here too.
        defer { unlink(file) }
        guard done == body.count else { throw RemoteError("cannot hand the command line over in \(file): \(String(cString: strerror(errno)))") }
        return try send("cmd-file \(name)", toPid: pid, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Reads the one-line reply on `fd` (without its newline).
    private static func readLine(_ fd: Int32, pid: pid_t, timeoutMilliseconds: Int) throws(RemoteError) -> String {
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(Double(timeoutMilliseconds) / 1000)
        while !reply.contains(UInt8(ascii: "\n")) {
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var fds = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&fds, 1, left) > 0 else {
                throw RemoteError("Tapedeck pid \(pid) did not answer within \(max(1, timeoutMilliseconds / 1000)) s")
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 {
                if reply.isEmpty { throw RemoteError("Tapedeck pid \(pid) hung up without an answer") }
                break
            }
            reply += buffer[0..<n]
        }
        let end = reply.firstIndex(of: UInt8(ascii: "\n")) ?? reply.count
        return String(decoding: reply[..<end], as: UTF8.self)
    }

    /// The socket of `pid` in a trusted folder. When there is none, says so: as a refusal
    /// naming the folder when an untrusted one holds a socket of that pid (or is the usual
    /// folder, taken), else as nobody listening.
    static func trustedSocket(pid: pid_t) throws(RemoteError) -> String {
        if let socket = ControlFolder.trustedSocket(pid: pid) { return socket }
        let refused = ControlFolder.folders().refused
        var st = stat()
        if let bad = refused.first(where: { lstat($0.folder + "/\(pid).sock", &st) == 0 }) ?? refused.first(where: { $0.folder == ControlFolder.path }) {
            throw RemoteError(refusal(bad.folder, bad.why))
        }
        throw RemoteError("Tapedeck pid \(pid) is not listening (no control socket of it in \(ControlFolder.path))", nobodyListens: true)
    }

    /// The one line said when a control folder is not to be trusted.
    public static func refusal(_ folder: String, _ why: String) -> String {
        "\(folder) is not to be trusted (\(why)): nothing is sent there; a control folder must be yours alone, mode 0700, not a link"
    }

    private static func folder(of socket: String) -> String {
        socket.lastIndex(of: "/").map { String(socket[..<$0]) } ?? "."
    }

    /// Linux's `struct ucred` (which Glibc's Swift module leaves out without _GNU_SOURCE).
    private struct PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    /// Every running Tapedeck with its status (pid, session, front-end, state…), asked over
    /// its socket; those that do not answer are left out.
    public static func instances() -> [(pid: pid_t, status: [String: Any])] {
        ControlFolder.running().compactMap { pid in
            guard let line = try? send("status", toPid: pid, timeoutMilliseconds: 2000),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (pid, object)
        }
    }
}
