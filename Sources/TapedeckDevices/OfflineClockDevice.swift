#if canImport(Glibc)
import Glibc
#endif
import TapedeckEngine

/// The offline backend: a device with no clock of its own. Reads return silence and writes
/// go nowhere, as fast as the engine asks, and each period is stamped with the monotonic
/// clock — so the time between two consecutive periods is everything the engine spent on
/// one period (reading, mixing, chains, metering, ring traffic). That is what a benchmark
/// divides by the period's duration to get DSP load.
///
/// Each stamp also notes the audio thread's own CPU clock, so a period's CPU time can be set
/// beside its wall time: where the two differ, the thread was not running — preempted,
/// throttled by the kernel, its virtual CPU descheduled, or asleep waiting for a ring.
///
/// The stamps go into an array allocated here, once; after ``capacityPeriods`` stamps the
/// device stops stamping and counts the rest in ``unstampedPeriods`` (it never grows the
/// array, since that would allocate on the audio thread). Read ``periodNanoseconds()`` after
/// the engine has finished: the audio thread writes the stamps without synchronising, and
/// joining it (``Engine/finish()``) is what makes them visible.
///
/// Paced (``isPaced``), it is the screen's device when there is no sound card: each period
/// waits for its time on the monotonic clock, so the transport moves at the speed of sound,
/// meters read what plays, and nothing is heard.
public final class OfflineClockDevice: PeriodDevice, @unchecked Sendable {
    /// What the screen and the benchmarks call the offline device.
    public static let displayName = "offline (no audio device)"

    /// What the engine runs at: float on both sides, no latency, capture and playback linked.
    public private(set) var configuration: DeviceConfiguration
    /// The audio thread that moves this device's periods.
    public let driver = PeriodDriver()
    /// Whether periods keep real time (otherwise they run back to back).
    public let isPaced: Bool
    private var nextDeadline: Int64 = 0
    /// The deadline the period being rendered waited for (paced): when it began on this
    /// device's clock.
    private var periodDeadline: Int64 = 0
    private let periodDurationNanoseconds: Int64
    /// How many periods can be stamped.
    public let capacityPeriods: Int

    private let stamps: UnsafeMutablePointer<Int64>
    private let cpuStamps: UnsafeMutablePointer<Int64>
    private var stamped = 0
    private var overflow = 0
    /// Whether reads mark the period (capture opens each cycle); otherwise writes do.
    private let clockOnRead: Bool
    /// A plain copy of the capture channel count, so the audio thread does not copy
    /// ``configuration`` (and retain its name) to read it.
    private let captureChannels: Int

    /// Creates the device. `capacityPeriods` bounds the periods stamped (1 stamp per period;
    /// N stamps give N − 1 durations). Control thread.
    public init(sampleRate: Int = 48000, captureChannels: Int = 0, playbackChannels: Int = 2,
                periodFrames: Int = 64, capacityPeriods: Int, paced: Bool = false, name: String = "offline") {
        let period = max(periodFrames, 1)
        isPaced = paced
        periodDurationNanoseconds = Int64(period) * 1_000_000_000 / Int64(max(sampleRate, 1))
        configuration = DeviceConfiguration(
            name: name, sampleRate: sampleRate, captureChannels: max(captureChannels, 0),
            playbackChannels: max(playbackChannels, 0), periodFrames: period, periodCount: 2, bufferFrames: 2 * period,
            captureFormat: captureChannels > 0 ? .float32 : nil, playbackFormat: playbackChannels > 0 ? .float32 : nil,
            captureLatencyFrames: 0, playbackLatencyFrames: 0, linked: true)
        configuration.isPaced = paced
        self.capacityPeriods = max(capacityPeriods, 0)
        stamps = .allocate(capacity: max(self.capacityPeriods, 1))
        // Touch every page now, so the first stamps do not page-fault on the audio thread.
        stamps.initialize(repeating: 0, count: max(self.capacityPeriods, 1))
        cpuStamps = .allocate(capacity: max(self.capacityPeriods, 1))
        cpuStamps.initialize(repeating: 0, count: max(self.capacityPeriods, 1))
        clockOnRead = captureChannels > 0
        self.captureChannels = max(captureChannels, 0)
    }

    deinit {
        stamps.deallocate()
        cpuStamps.deallocate()
    }

    /// Forgets earlier stamps. Control thread, before the audio thread runs.
    public func startStreams() throws(DeviceError) {
        stamped = 0
        overflow = 0
        periodDeadline = monotonicNanoseconds()
        nextDeadline = periodDeadline + periodDurationNanoseconds
    }

    /// Nothing to release. Control thread, after the audio thread ended.
    public func stopStreams() {}

    /// Paced: sleeps until this period's deadline (absolute, so the clock does not drift);
    /// a period that ran late is not made up for.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private func keepTime() {
        guard isPaced else { return }
        var ts = timespec(tv_sec: Int(nextDeadline / 1_000_000_000), tv_nsec: Int(nextDeadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
        periodDeadline = nextDeadline
        nextDeadline += periodDurationNanoseconds
        let now = monotonicNanoseconds()
        if nextDeadline < now { nextDeadline = now + periodDurationNanoseconds }
    }

    /// Paced, the deadline the period waited for: the clock is the schedule, not the
    /// wake-up. Unpaced, no clock.
    ///
    /// Audio thread: no allocation, no locks.
    public func periodTime(frameCount: Int) -> DevicePeriodTime? {
        isPaced ? DevicePeriodTime(beganNanoseconds: periodDeadline, isExact: true) : nil
    }

    /// Fills every capture channel with silence and, when capture is open, stamps the period.
    ///
    /// Audio thread: no allocation, no locks (one clock_gettime, a vDSO call).
    public func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        for c in 0..<captureChannels { channels[c].update(repeating: 0, count: frameCount) }
        if clockOnRead { keepTime(); stamp() }
        return .ok
    }

    /// Drops the frames and, without capture, stamps the period.
    ///
    /// Audio thread: no allocation, no locks.
    public func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        if !clockOnRead { keepTime(); stamp() }
        return .ok
    }

    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private func stamp() {
        guard stamped < capacityPeriods else {
            overflow += 1
            return
        }
        stamps[stamped] = monotonicNanoseconds()
        var ts = timespec()
        // The calling thread's CPU clock: a system call, but no allocation and no lock.
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        cpuStamps[stamped] = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        stamped += 1
    }

    /// Periods stamped so far. Control thread, after the engine finished.
    public var stampedPeriods: Int { stamped }

    /// Periods that ran after the stamp array was full. Control thread, after the engine finished.
    public var unstampedPeriods: Int { overflow }

    /// The monotonic time (ns) of each stamped period, in order. Control thread, after the
    /// engine finished.
    public func periodStamps() -> [Int64] { Array(UnsafeBufferPointer(start: stamps, count: stamped)) }

    /// Nanoseconds between consecutive stamped periods: each is one period's whole cost to
    /// the engine. Never negative (the clock is monotonic); one fewer than the stamps.
    /// Control thread, after the engine finished.
    public func periodNanoseconds() -> [Int64] {
        guard stamped > 1 else { return [] }
        return (1..<stamped).map { stamps[$0] - stamps[$0 - 1] }
    }

    /// CPU nanoseconds the audio thread used between consecutive stamped periods: at most
    /// the matching ``periodNanoseconds()`` entry, less when the thread was not running for
    /// part of the period. Control thread, after the engine finished.
    public func periodCPUNanoseconds() -> [Int64] {
        guard stamped > 1 else { return [] }
        return (1..<stamped).map { cpuStamps[$0] - cpuStamps[$0 - 1] }
    }

    /// Each period's cost as a fraction of its real-time duration (1 = a whole period: the
    /// engine could not have kept up). Control thread, after the engine finished.
    public func loads() -> [Double] {
        let periodNs = Double(configuration.periodFrames) * 1e9 / Double(max(configuration.sampleRate, 1))
        return periodNanoseconds().map { Double($0) / periodNs }
    }

    /// ``loads()`` counting only the audio thread's CPU time: the engine's cost without what
    /// the machine took away. Control thread, after the engine finished.
    public func cpuLoads() -> [Double] {
        let periodNs = Double(configuration.periodFrames) * 1e9 / Double(max(configuration.sampleRate, 1))
        return periodCPUNanoseconds().map { Double($0) / periodNs }
    }
}
