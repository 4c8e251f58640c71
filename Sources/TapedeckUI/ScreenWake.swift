import Synchronization
import TapedeckCore
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// Turns the engine's activity signal (``EngineActivity``) into a descriptor the screen's
/// loop polls beside the keyboard and the sockets, so the loop sleeps until something it
/// shows has moved instead of waking on a timer. A thread of its own waits on the signal
/// (the audio thread only posts a semaphore; it never writes a descriptor) and writes one
/// byte per wake; after each it rests ``restNanoseconds``, so a busy engine wakes the screen
/// at most ~60 times a second.
final class ScreenWake: @unchecked Sendable {
    /// The end the loop polls.
    let descriptor: Int32
    private let writeEnd: Int32
    private let quitting = Atomic<Bool>(false)
    private var thread: pthread_t?
    static let restNanoseconds: Int64 = 15_000_000

    /// Nil when no pipe can be made (the loop then falls back to its timers).
    init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        descriptor = fds[0]
        writeEnd = fds[1]
        let box = Unmanaged.passRetained(self)
        var t = pthread_t()
        let made = pthread_create(&t, nil, { raw in
            ThreadName.setCurrent("tapedeck-wake")
            let me = Unmanaged<ScreenWake>.fromOpaque(raw!).takeRetainedValue()
            me.run()
            return nil
        }, box.toOpaque())
        guard made == 0 else {
            box.release()
            close(fds[0]); close(fds[1])
            return nil
        }
        thread = t
    }

    private func run() {
        var byte: UInt8 = 1
        while !quitting.load(ordering: .acquiring) {
            guard EngineActivity.shared.wait(timeoutNanoseconds: 250_000_000) else { continue }
            _ = write(writeEnd, &byte, 1)
            var rest = timespec(tv_sec: 0, tv_nsec: Int(ScreenWake.restNanoseconds))
            nanosleep(&rest, nil)
        }
    }

    /// Empties the pipe after the loop woke on it. UI thread.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Stops the thread and closes the pipe. UI thread.
    func stop() {
        quitting.store(true, ordering: .releasing)
        EngineActivity.shared.signal()
        if let thread { pthread_join(thread, nil) }
        close(descriptor)
        close(writeEnd)
    }
}
