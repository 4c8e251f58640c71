import Glibc

/// Names for Tapedeck's threads, so `top -H` and `ps -L` tell them apart: the one way Swift
/// code names a thread. (Threads the C side makes name themselves there, with
/// `pthread_setname_np`: the render workers, and JACK's process thread on its first cycle.)
public enum ThreadName {
    /// Names the calling thread `name` (the kernel keeps 15 bytes: every name here fits).
    /// Foundation's `Thread.name` does not reach the kernel on Linux, and `pthread_setname_np`
    /// is not visible to Swift there, so the name is written where the kernel reads it
    /// (`/proc/thread-self/comm`). Each thread names itself as its body begins, before any
    /// real-time work (it opens a file: never from an audio thread's loop).
    public static func setCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
