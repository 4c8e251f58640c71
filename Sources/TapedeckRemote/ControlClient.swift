import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The other end of a control socket: `tapedeck ctl`.
public enum ControlClient {
    /// Sends one line to the Tapedeck running as `pid` and returns its one-line reply.
    public static func send(_ line: String, toPid pid: pid_t, timeoutMilliseconds: Int = 5000) throws(RemoteError) -> String {
        let path = ControlFolder.socketPath(pid: pid)
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
