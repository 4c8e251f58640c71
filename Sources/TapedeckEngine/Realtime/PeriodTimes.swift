import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Each period's wall time (from the render's start to its end, against the period's
/// deadline) and the audio thread's CPU time for it, kept while armed: what a benchmark on a
/// paced device reads (``EngineOptions/periodTimes``). The audio thread writes into memory
/// allocated here, up to ``capacity`` periods.
public final class PeriodTimes: @unchecked Sendable {
    /// Periods it can hold.
    public let capacity: Int
    private let wall: UnsafeMutablePointer<Int64>
    private let cpu: UnsafeMutablePointer<Int64>
    private let misses: UnsafeMutablePointer<Int32>
    private let count = Atomic<Int>(0)
    private let armed = Atomic<Bool>(false)

    /// Room for `capacity` periods. Control thread.
    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        wall = .allocate(capacity: self.capacity)
        wall.initialize(repeating: 0, count: self.capacity)
        cpu = .allocate(capacity: self.capacity)
        cpu.initialize(repeating: 0, count: self.capacity)
        misses = .allocate(capacity: self.capacity)
        misses.initialize(repeating: 0, count: self.capacity)
    }

    deinit {
        wall.deallocate()
        cpu.deallocate()
        misses.deallocate()
    }

    /// Starts keeping periods (from empty). Control thread.
    public func arm() {
        count.store(0, ordering: .relaxed)
        armed.store(true, ordering: .releasing)
    }

    /// Stops keeping periods. Control thread.
    public func disarm() { armed.store(false, ordering: .releasing) }

    /// Whether periods are kept now. Audio thread: one load.
    @inline(__always)
    var isArmed: Bool { armed.load(ordering: .relaxed) }

    /// The calling thread's CPU time, nanoseconds. Audio thread (a system call: for a
    /// benchmark only).
    @inline(__always)
    static func threadCPUNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// One period: its wall and CPU nanoseconds, and the strips rendered ahead whose chains it
    /// had to run itself (the workers had not reached them). Audio thread: stores.
    @inline(__always)
    func record(wallNanoseconds: Int64, cpuNanoseconds: Int64, aheadMisses: Int) {
        let k = count.load(ordering: .relaxed)
        guard k < capacity else { return }
        wall[k] = wallNanoseconds
        cpu[k] = cpuNanoseconds
        misses[k] = Int32(clamping: aheadMisses)
        count.store(k + 1, ordering: .releasing)
    }

    /// What was kept: each period's wall and CPU nanoseconds, and its strips that missed
    /// what was rendered ahead. Control thread, once disarmed.
    public func periods() -> (wall: [Int64], cpu: [Int64], aheadMisses: [Int]) {
        let n = count.load(ordering: .acquiring)
        return (Array(UnsafeBufferPointer(start: wall, count: n)), Array(UnsafeBufferPointer(start: cpu, count: n)),
                UnsafeBufferPointer(start: misses, count: n).map { Int($0) })
    }
}
