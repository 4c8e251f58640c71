#if canImport(Glibc)
import Glibc
#endif

/// Seconds on the monotonic clock, for message timeouts and frame pacing.
enum MonotonicClock {
    /// Seconds since an arbitrary start; never jumps with the wall clock.
    static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Nanoseconds on the same clock (CLOCK_MONOTONIC: the same in every process).
    static func nanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
