import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket's address (`sockaddr_un`) for a path, for `bind` and `connect`: the one
/// place its bytes are filled in (the control server, its client and their tests).
public enum UnixSocketAddress {
    /// Calls `body` with the address of `path` as the `sockaddr` and length that `bind` and
    /// `connect` take; nil, without calling it, when the path does not fit (`sun_path` holds
    /// 107 bytes and the terminating zero).
    public static func with<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
