import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A UDP port on 127.0.0.1 held by the test, for checking that a port in use is refused.
final class HeldUDPPort {
    let port: Int
    private let fd: Int32

    init() {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length); return getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: a.sin_port))
    }

    deinit { close(fd) }
}
