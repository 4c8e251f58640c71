import Glibc

/// Names for Tapedeck's threads, so `top -H` and `ps -L` tell them apart.
public enum ThreadName {
    /// Names the calling thread `name` (the kernel keeps 15 bytes: every name here fits).
    /// Foundation's `Thread.name` does not reach the kernel on Linux, and `pthread_setname_np`
    /// is not visible to Swift there, so the name is written where the kernel reads it
    /// (`/proc/thread-self/comm`). Each thread names itself as its body begins; never the
    /// audio thread (it opens a file).
    public static func setCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
