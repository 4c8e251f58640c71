import Foundation
import TapedeckCore
import TapedeckRemote

/// The control socket (`tapedeck ctl`'s server): random bytes, mutated lines, partial lines,
/// huge lines and floods from one client that never reads; after each, a good client's
/// `status` must still be answered in one line within two seconds.
struct SocketTarget: FuzzTarget {
    static let name = "socket"
    let seeds = ["status\n", "stop\n", "locate 1:00\n", "loop on\n", "speed 0.5\n", "play\nstatus\n", "status", "rewind\r\n"]
    let mutator = Mutator(tokens: ["\n", "\r\n", "status", "locate ", "speed ", " ", "\u{0}"].map { Array($0.utf8) })
    private let server: ControlServer

    init() throws {
        // A runtime folder of the worker's own, so no running Tapedeck's socket is touched.
        var template = Array("/tmp/tapedeck-fuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw FuzzUsage("socket: cannot make a temporary folder") }
        setenv("XDG_RUNTIME_DIR", String(cString: made), 1)
        do { server = try ControlServer() } catch { throw FuzzUsage("socket: \(error)") }
    }

    func input(seed: UInt64, index: Int) -> [UInt8] {
        var rng = FuzzRandom(seed: seed, stream: Self.name, index: index)
        switch rng.below(5) {
        case 0: return (0..<rng.below(4096)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        case 1: return mutator.mutate(oneOf: seeds, stream: Self.name, seed: seed, index: index)
        case 2: return Array(String(repeating: "status", count: 1 + rng.below(2000)).utf8)  // no newline
        case 3: return [UInt8](repeating: UInt8(ascii: "a"), count: 4096 + rng.below(200_000)) + [0x0A]
        default: return Array(String(repeating: rng.pick(seeds), count: 1 + rng.below(5000)).utf8)
        }
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        guard let rude = connect() else { return "cannot connect to the control socket: the server is down" }
        defer { close(rude) }
        var sent = 0
        var rounds = 0
        while sent < input.count && rounds < 200 {
            let n = input[sent...].withUnsafeBytes { send(rude, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if n > 0 { sent += n } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { break }
            pump(milliseconds: 1)
            rounds += 1
        }
        guard let good = connect() else { return "a good client cannot connect after \(input.count) bytes from another" }
        defer { close(good) }
        let request = Array("status\n".utf8)
        _ = request.withUnsafeBytes { send(good, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var reply: [UInt8] = []
        let deadline = Date().addingTimeInterval(2)
        var buffer = [UInt8](repeating: 0, count: 512)
        while !reply.contains(0x0A) && Date() < deadline {
            pump(milliseconds: 2)
            let n = buffer.withUnsafeMutableBytes { recv(good, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { reply += buffer[0..<n] } else if n == 0 { break }
        }
        guard reply.contains(0x0A) else { return "a good client's status was not answered within 2 s (after \(input.count) bytes from another)" }
        let text = String(decoding: reply, as: UTF8.self)
        guard text == "ok: fine\n" else { return "a good client got \(text.terminalSafe)" }
        return nil
    }

    private func pump(milliseconds: Int) {
        server.wait(milliseconds: milliseconds) { _, _ in .ok("fine") }
    }

    private func connect() -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard UnixSocketAddress.with(server.path, { Glibc.connect(fd, $0, $1) }) == 0 else { close(fd); return nil }
        return fd
    }
}
