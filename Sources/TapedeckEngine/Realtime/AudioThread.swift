#if canImport(Glibc)
import Glibc
#endif

/// Starts and joins the one realtime thread, outside Swift concurrency.
final class RealtimeThread: @unchecked Sendable {
    private var thread: pthread_t?
    private let body: () -> Void
    /// Whether SCHED_FIFO was granted (false: normal priority, quietly).
    private(set) var isRealtime = false
    private var wantRealtime = false
    private var wantPriority: Int32 = 0

    /// Creates a thread that will run `body` once started. Control thread.
    init(body: @escaping () -> Void) { self.body = body }

    /// Starts the thread; with `realtime`, asks for SCHED_FIFO at `priority` and quietly
    /// keeps normal priority when that is not allowed.
    func start(priority: Int32, realtime: Bool) -> Bool {
        wantRealtime = realtime
        wantPriority = priority
        let box = Unmanaged.passRetained(self)
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        var handle = pthread_t()
        let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { arg in
            let me = Unmanaged<RealtimeThread>.fromOpaque(arg!).takeRetainedValue()
            if me.wantRealtime {
                var param = sched_param()
                param.sched_priority = me.wantPriority
                me.isRealtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
            }
            me.body()
            return nil
        }
        if pthread_create(&handle, &attr, entry, box.toOpaque()) != 0 {
            box.release()
            return false
        }
        thread = handle
        return true
    }

    /// Waits for the body to return. Control thread.
    func join() {
        if let t = thread { pthread_join(t, nil) }
        thread = nil
    }
}

/// Sleeps `nanoseconds` without touching the allocator. Audio or disk thread.
@inline(__always)
func sleepNanoseconds(_ nanoseconds: Int64) {
    var ts = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    var rest = timespec()
    while nanosleep(&ts, &rest) != 0 && errno == EINTR { ts = rest }
}
