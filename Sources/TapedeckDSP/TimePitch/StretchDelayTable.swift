import Foundation
import TapedeckCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The measured start delays of one kind of ``LiveStretcher`` (sample rate, channel count,
/// engine), shared by every stretcher of that kind in the process and filled step by step.
///
/// A stretcher needs only the steps around the speed it starts at; the other steps are
/// measured by a thread of its own, so the first `play --speed 2` on a machine waits for one
/// or two measurements (7–40 ms each near 1× on the shared 2-core machine) instead of all 21
/// (1.4 s for R2 and 1.8 s for R3, most of it at the slow end, where every input frame costs
/// up to 32 output frames). Every step measured is kept in ``StretchDelayCache`` at once, so
/// a run that ends before the thread finishes still spares the next run what it measured.
///
/// Each slot holds a Double's bits in an atomic (NaN: not measured yet), so the audio thread
/// reads while the measuring thread writes.
final class StretchDelayTable: @unchecked Sendable {
    /// What the delays depend on besides the library.
    struct Key: Hashable, Sendable {
        var sampleRate: Int
        var channelCount: Int
        var quality: StretchQuality
    }

    /// Speeds are measured at 2^(step/2): 1/32× … 32× in half-octave steps.
    static let steps = -10...10
    static func speed(atStep step: Int) -> Double { exp2(Double(step) / 2) }

    let key: Key
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    private let measuring = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    /// Steps someone waits for (bit `step - steps.lowerBound`): measured before the others.
    private let wanted = Atomic<UInt32>(0)

    private init(key: Key, values: [Double?]) {
        self.key = key
        slots = .allocate(capacity: StretchDelayTable.steps.count)
        for i in 0..<StretchDelayTable.steps.count {
            (slots + i).initialize(to: Atomic((values.count > i ? values[i] : nil)?.bitPattern ?? Double.nan.bitPattern))
        }
    }

    deinit {
        slots.deinitialize(count: StretchDelayTable.steps.count)
        slots.deallocate()
    }

    private static let tables = Mutex<[Key: StretchDelayTable]>([:])

    /// The process's table for `key`: the one already made, else one started from what
    /// `cache` keeps (possibly nothing). Off the audio thread.
    static func table(for key: Key, cache: StretchDelayCache?) -> StretchDelayTable {
        tables.withLock { tables in
            if let known = tables[key] { return known }
            let kept = cache?.load(sampleRate: key.sampleRate, channelCount: key.channelCount, quality: key.quality,
                                   count: steps.count) ?? []
            let table = StretchDelayTable(key: key, values: kept)
            tables[key] = table
            return table
        }
    }

    /// Forgets the process's table for `key`, as a new process would not have it (tests).
    static func forget(_ key: Key) { _ = tables.withLock { $0.removeValue(forKey: key) } }

    /// The delay measured at `step`, or nil while it is not.
    ///
    /// Audio thread safe: one atomic load.
    @inline(__always)
    func measured(step: Int) -> Double? {
        let value = Double(bitPattern: slots[step - StretchDelayTable.steps.lowerBound].load(ordering: .acquiring))
        return value.isNaN ? nil : value
    }

    /// Every step, nil where not measured yet.
    var values: [Double?] { StretchDelayTable.steps.map { measured(step: $0) } }

    /// Whether every step is measured.
    var isWhole: Bool { values.allSatisfy { $0 != nil } }

    /// Records `value` at `step` and keeps the table in `cache`. Off the audio thread.
    func record(_ value: Double, step: Int, cache: StretchDelayCache?) {
        slots[step - StretchDelayTable.steps.lowerBound].store(value.bitPattern, ordering: .releasing)
        cache?.store(values, sampleRate: key.sampleRate, channelCount: key.channelCount, quality: key.quality)
    }

    /// Measures the steps still missing on a thread of its own, nearest 1× first (the speeds
    /// people use most). `makeMeasurer` runs on that thread and returns what measures one
    /// step (it must build its own stretcher: the asking one belongs to the audio thread).
    /// Once per table; does nothing when it is whole. Off the audio thread.
    func measureRestInBackground(cache: StretchDelayCache?, makeMeasurer: @escaping @Sendable () -> (Int) -> Double) {
        guard !isWhole else { finished.store(true, ordering: .releasing); return }
        guard measuring.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        let thread = Thread { [self] in
            ThreadName.setCurrent("tapedeck-delays")
            // Below the control threads (nice values are per thread on Linux): what it
            // measures is needed only when someone changes speed to an unmeasured step.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            let order = StretchDelayTable.steps.sorted { abs($0) < abs($1) }
            let measure = makeMeasurer()
            while let step = nextStep(order) {
                while StretchDelayTable.holdsBackground.load(ordering: .relaxed) { usleep(2_000) }
                record(measure(step), step: step, cache: cache)
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Asks the measuring thread to measure `step` before the ones it has not begun.
    /// Off the audio thread.
    func want(step: Int) {
        wanted.bitwiseOr(1 << UInt32(step - StretchDelayTable.steps.lowerBound), ordering: .relaxed)
    }

    /// The step to measure next: a wanted one, else the first of `order` not measured.
    private func nextStep(_ order: [Int]) -> Int? {
        let asked = wanted.exchange(0, ordering: .relaxed)
        let missing = order.filter { measured(step: $0) == nil }
        if let step = missing.first(where: { asked & (1 << UInt32($0 - StretchDelayTable.steps.lowerBound)) != 0 }) {
            // The other asked steps stay asked.
            wanted.bitwiseOr(asked & ~(1 << UInt32(step - StretchDelayTable.steps.lowerBound)), ordering: .relaxed)
            return step
        }
        return missing.first
    }

    /// Tests: while true, background measurement waits before each step.
    static let holdsBackground = Atomic<Bool>(false)

    /// Waits up to `timeoutSeconds` for the background measurement to finish (tests and
    /// benchmarks, which must not measure while it runs). True when it has.
    func waitUntilMeasured(timeoutSeconds: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while !finished.load(ordering: .acquiring) {
            if !measuring.load(ordering: .acquiring) && isWhole { return true }
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }
}
