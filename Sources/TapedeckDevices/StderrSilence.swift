#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` with stderr pointed at /dev/null (C libraries that print on failure).
public func withStderrSilenced<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    let saved = dup(STDERR_FILENO)
    let null = open("/dev/null", O_WRONLY)
    if null >= 0 { dup2(null, STDERR_FILENO); close(null) }
    defer { if saved >= 0 { dup2(saved, STDERR_FILENO); close(saved) } }
    return try body()
}
