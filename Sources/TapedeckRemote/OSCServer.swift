import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// Who sent an OSC message: an IPv4 or IPv6 address and port, as the socket gave it.
public struct OSCPeer: Hashable, CustomStringConvertible, Sendable {
    let storage: [UInt8]

    init(_ address: UnsafeRawPointer, length: socklen_t) {
        storage = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
    }

    /// The same host at `port`.
    public func withPort(_ port: Int) -> OSCPeer {
        var copy = storage
        // sin_port and sin6_port sit at the same offset, in network order.
        copy[2] = UInt8(port >> 8)
        copy[3] = UInt8(port & 0xff)
        return OSCPeer(bytes: copy)
    }

    private init(bytes: [UInt8]) { storage = bytes }

    /// The port the message came from.
    public var port: Int { Int(storage[2]) << 8 | Int(storage[3]) }

    /// `osc 127.0.0.1:53211`, for the message line.
    public var description: String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let ok = storage.withUnsafeBytes { raw in
            getnameinfo(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count), &host, socklen_t(host.count),
                        nil, 0, NI_NUMERICHOST) == 0
        }
        let name = ok ? String(cString: host) : "?"
        return "osc \(name.contains(":") ? "[\(name)]" : name):\(port)"
    }
}

/// Why the OSC port cannot be opened: one line.
public struct OSCServerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ text: String) { description = text }
}

/// Tapedeck's OSC port: a UDP socket bound to one address (127.0.0.1 unless the user says
/// otherwise), read without blocking by the owner's loop, which waits on
/// ``pollDescriptors``. The socket is Tapedeck's own rather than a `lo_server`'s: liblo 0.31
/// binds its UDP servers to every interface (the host of `lo_server_new_from_url` is taken as
/// a multicast group), and a mixer that anyone on the network can drive must be asked for.
/// liblo reads and writes the messages (``OSCPacket``).
///
/// Nothing here touches a session: ``receive(limit:)`` returns validated commands and the
/// owner carries them out on its own thread.
public final class OSCServer {
    /// What one datagram asked for.
    public struct Request: Sendable {
        /// The command, or why the message is not one.
        public let command: Result<OSCCommand, OSCRefusal>
        /// Who sent it (feedback goes back there).
        public let peer: OSCPeer
    }

    /// The port the socket is bound to.
    public let port: Int
    /// The address it is bound to, as given.
    public let address: String
    /// Whether that address reaches beyond this machine (anything but loopback).
    public let listensBeyondThisMachine: Bool
    /// Datagrams that held no message at all (malformed), counted for tests and status.
    public private(set) var malformedCount = 0
    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    /// The default address: this machine only.
    public static let loopback = "127.0.0.1"

    /// Binds UDP `port` (1…65535; 0 asks the system for a free one, for tests) on `address`
    /// (a numeric IPv4 or IPv6 address).
    public init(port: Int, address: String = OSCServer.loopback) throws(OSCServerError) {
        guard (0...65535).contains(port) else { throw OSCServerError("OSC port \(port) is not 1…65535") }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(address, String(port), &hints, &list) == 0, let info = list else {
            throw OSCServerError("OSC address '\(address.terminalSafe)' is not a numeric IPv4 or IPv6 address (e.g. 127.0.0.1, 0.0.0.0)")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw OSCServerError("cannot open an OSC socket: \(String(cString: strerror(errno)))") }
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let code = errno
            Glibc.close(fd)
            switch code {
            case EADDRINUSE: throw OSCServerError("OSC port \(port) on \(address.terminalSafe) is in use by another program: pick another")
            case EACCES: throw OSCServerError("OSC port \(port) needs privileges: pick one above 1023")
            case EADDRNOTAVAIL: throw OSCServerError("OSC address \(address.terminalSafe) is not one of this machine's")
            default: throw OSCServerError("cannot listen for OSC on \(address.terminalSafe):\(port): \(String(cString: strerror(code)))")
            }
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        self.fd = fd
        self.port = withUnsafeBytes(of: bound) { Int($0[2]) << 8 | Int($0[3]) }
        self.address = address
        self.listensBeyondThisMachine = !OSCServer.isLoopback(info.pointee.ai_addr)
    }

    deinit { Glibc.close(fd) }

    private static func isLoopback(_ address: UnsafePointer<sockaddr>) -> Bool {
        if Int32(address.pointee.sa_family) == AF_INET {
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) >> 24 == 127 }
        }
        return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
            withUnsafeBytes(of: a.pointee.sin6_addr) { $0.prefix(15).allSatisfy { $0 == 0 } && $0[15] == 1 }
        }
    }

    /// The socket to wait on.
    public var pollDescriptors: [pollfd] { [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)] }

    /// What arrived (never waits): at most `limit` datagrams a call, so a flood cannot hold
    /// the owner's loop; the rest wait for the next call.
    public func receive(limit: Int = 256) -> [Request] {
        var requests: [Request] = []
        for _ in 0..<limit {
            var from = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let n = buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &from) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &length) }
                }
            }
            if n < 0 {
                if errno == EINTR { continue }
                break // EAGAIN: nothing more (or an ICMP error from a surface gone: ignored)
            }
            let peer = withUnsafePointer(to: &from) { OSCPeer(UnsafeRawPointer($0), length: length) }
            let messages = OSCPacket.decode(Array(buffer[0..<n]))
            if messages.isEmpty { malformedCount += 1 }
            for m in messages { requests.append(Request(command: OSCCommand.parse(m), peer: peer)) }
        }
        return requests
    }

    /// Sends `message` to `peer` from this port (as Ardour replies: from the port it listens
    /// on). A full socket buffer drops the datagram: feedback is a stream of states, the next
    /// one corrects it.
    public func send(_ message: OSCMessage, to peer: OSCPeer) {
        guard let bytes = OSCPacket.encode(message) else { return }
        peer.storage.withUnsafeBytes { address in
            _ = bytes.withUnsafeBytes { data in
                sendto(fd, data.baseAddress, data.count, Int32(MSG_DONTWAIT),
                       address.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
            }
        }
    }
}
