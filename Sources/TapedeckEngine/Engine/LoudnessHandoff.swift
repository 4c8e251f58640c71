import Synchronization
import TapedeckCore
import TapedeckDSP

/// The master bus's EBU R128 meter, and how a fresh one reaches the audio thread.
///
/// libebur128 has no reset, and integrated loudness should count from the moment the
/// transport starts rolling, so each start gets a new ``LoudnessMeter``: made on the control
/// thread (it allocates), published through `pending`, taken by the audio thread at a period
/// boundary, and the meter it replaces handed back through `retired` for the control thread
/// to free. The audio thread takes a new meter only while `retired` is empty, so a meter is
/// never retired into an occupied slot; the control thread empties `retired` before each
/// publication. The control thread keeps every meter it made alive until it is retired.
final class LoudnessHandoff: @unchecked Sendable {
    private let pending = Atomic<UnsafeMutableRawPointer?>(nil)
    private let retired = Atomic<UnsafeMutableRawPointer?>(nil)
    private let sampleRate: Int
    private let maxFrames: Int

    // Control thread.
    private var owned: [LoudnessMeter] = []
    private var latest: LoudnessMeter?

    // Audio thread (the control thread sets it once, before the device starts).
    private var current: Unmanaged<LoudnessMeter>?

    /// A handoff holding a first meter for a stereo bus at `sampleRate`, fed at most
    /// `maxFrames` frames at a time. Control thread.
    init(sampleRate: Int, maxFrames: Int) {
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        if let first = makeMeter() {
            owned = [first]
            latest = first
            current = Unmanaged.passUnretained(first)
        }
    }

    private func makeMeter() -> LoudnessMeter? {
        try? LoudnessMeter(channelCount: 2, sampleRate: sampleRate, maxFrames: maxFrames)
    }

    /// Starts measuring afresh: a new meter goes to the audio thread, and readings come from
    /// it at once (−∞ until it has heard 400 ms). Control thread.
    func renew() {
        collect()
        guard let meter = makeMeter() else { return }
        owned.append(meter)
        latest = meter
        if let never = pending.exchange(Unmanaged.passUnretained(meter).toOpaque(), ordering: .acquiringAndReleasing) {
            // The audio thread never took it: it never ran.
            owned.removeAll { Unmanaged.passUnretained($0).toOpaque() == never }
        }
    }

    /// Frees the meter the audio thread last let go of. Control thread.
    func collect() {
        guard let gone = retired.exchange(nil, ordering: .acquiringAndReleasing) else { return }
        owned.removeAll { Unmanaged.passUnretained($0).toOpaque() == gone }
    }

    /// The latest readings of the newest meter (nil when libebur128 could not make one).
    /// Control thread.
    func reading() -> LoudnessReading? { latest?.reading() }

    /// Takes a waiting meter, retiring the current one, then measures one block of the
    /// stereo bus. Audio thread: no allocation, no locks.
    func measure(_ bus: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        if pending.load(ordering: .relaxed) != nil, retired.load(ordering: .acquiring) == nil,
           let next = pending.exchange(nil, ordering: .acquiringAndReleasing) {
            if let old = current { retired.store(old.toOpaque(), ordering: .releasing) }
            current = Unmanaged.fromOpaque(next)
        }
        current?._withUnsafeGuaranteedRef { $0.add(bus, frameCount: frameCount) }
    }
}
