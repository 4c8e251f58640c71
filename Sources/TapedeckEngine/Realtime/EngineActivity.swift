import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a front-end sleeps on between changes it must show, so an idle screen costs nothing.
///
/// The audio thread signals it when something the screen shows has moved: a meter published
/// a level above silence (or fell to it), the transport's state changed or, stopped, its
/// position did (another JACK client located it), an xrun or underrun was counted, MIDI for
/// the surfaces arrived. The front-end's wake thread (``wait(timeoutNanoseconds:)``) turns
/// that into a readable descriptor its loop polls beside the keyboard and the sockets.
///
/// Signals coalesce: the first since the last wait posts the semaphore, the rest are one
/// atomic exchange each. One per process: a screen runs one engine.
public final class EngineActivity: @unchecked Sendable {
    /// The process's one activity signal.
    public static let shared = EngineActivity()

    private let semaphore: UnsafeMutablePointer<sem_t>
    private let pending = Atomic<Bool>(false)
    private let signals = Atomic<UInt64>(0)

    private init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    /// Something visible changed. Any thread, the audio thread included: one atomic
    /// exchange, and a semaphore post (a futex wake only when someone sleeps) when no wake is
    /// pending. No allocation, no lock.
    @inline(__always)
    public func signal() {
        signals.add(1, ordering: .relaxed)
        if !pending.exchange(true, ordering: .acquiringAndReleasing) { sem_post(semaphore) }
    }

    /// How many signals there have been (for tests).
    public var signalCount: UInt64 { signals.load(ordering: .relaxed) }

    /// Sleeps until signalled or `timeoutNanoseconds` pass; true when signalled. The next
    /// signal after this returns posts again. The front-end's wake thread only.
    public func wait(timeoutNanoseconds: Int64) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let total = Int64(now.tv_nsec) + max(0, timeoutNanoseconds)
        var deadline = timespec(tv_sec: now.tv_sec + Int(total / 1_000_000_000), tv_nsec: Int(total % 1_000_000_000))
        var woke = false
        while true {
            if sem_timedwait(semaphore, &deadline) == 0 { woke = true; break }
            if errno != EINTR { break }
        }
        while sem_trywait(semaphore) == 0 { woke = true }
        pending.store(false, ordering: .releasing)
        return woke
    }
}
