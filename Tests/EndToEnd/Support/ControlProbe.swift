import Foundation
import TapedeckRemote
#if canImport(Glibc)
import Glibc
#endif

/// Asks a running Tapedeck's control socket directly (no `tapedeck ctl` process, whose own
/// start would dominate a timing): one line out, one line back, within a second.
enum ControlProbe {
    /// The `status` reply as JSON, or nil when the socket did not answer within `timeout`.
    static func status(_ socketPath: String, timeout: Double = 1) -> [String: Any]? {
        guard let line = ask(socketPath, "status", timeout: timeout) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    /// Sends `command` and returns the reply line (without its end), or nil on a time-out.
    static func ask(_ socketPath: String, _ command: String, timeout: Double = 1) -> String? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard UnixSocketAddress.with(socketPath, { connect(fd, $0, $1) }) == 0 else { return nil }
        let out = Array((command + "\n").utf8)
        guard out.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == out.count else { return nil }
        var reply: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(UInt8(ascii: "\n")) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(left * 1000) + 1) > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return nil }
            reply += chunk[0..<n]
        }
        let line = reply.prefix { $0 != UInt8(ascii: "\n") }
        return String(decoding: line, as: UTF8.self)
    }
}
