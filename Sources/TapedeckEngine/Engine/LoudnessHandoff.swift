import Foundation
import Synchronization
import TapedeckCore
import TapedeckDSP

/// The master bus's EBU R128 meter, measured off the audio thread.
///
/// The audio thread only copies the rolling master bus into a ring; a thread of the meter's
/// own (and any reader, first) feeds libebur128 from it. libebur128 is cheap per sample but
/// not per block: every 100 ms its readings sum the last 3 s of audio for the short-term
/// loudness, and true peak oversamples every sample. On the audio thread that was a spike
/// every 4800 frames, which set the 99.9th percentile of `bench engine` (its 64-frame row,
/// side by side: p99.9 92 % with the meter on the audio thread, 41–46 % with it here).
///
/// libebur128 has no reset, and integrated loudness should count from the moment the
/// transport starts rolling, so each start gets a new ``LoudnessMeter``: what the ring holds
/// when it is made goes to the old one. Both live on the control side, under one lock the
/// audio thread never takes.
final class LoudnessHandoff: @unchecked Sendable {
    private let ring: FrameRing
    private let sampleRate: Int
    /// Whether the meter has a thread of its own to feed it.
    private let threaded: Bool
    /// Frames the audio thread could not copy (the meter's thread fell behind): the meter
    /// then reads a little less than was played. Audio thread writes, anyone reads.
    let droppedFrames = Atomic<Int>(0)

    private struct Meter {
        var current: LoudnessMeter?
        /// Planar scratch the ring is popped into.
        var scratch: [UnsafeMutablePointer<Float>]
    }
    private let meter: Mutex<Meter>
    private static let chunkFrames = 4096
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private var thread: Thread?

    /// A meter for a stereo bus at `sampleRate`, with its ring (two seconds) and, when
    /// `threaded` (an engine that is heard), its thread. A freewheeling engine measures
    /// nothing: it gets no meter until ``renew()`` and a ring of one block (every export made
    /// and zeroed a two-second ring and a libebur128 meter with true peak that were never read).
    /// Control thread.
    init(sampleRate: Int, maxFrames: Int, threaded: Bool = true) {
        self.sampleRate = sampleRate
        self.threaded = threaded
        ring = FrameRing(channelCount: 2, capacityFrames: threaded ? max(2 * sampleRate, 4 * maxFrames) : max(maxFrames, 1))
        let scratch = (0..<2).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: LoudnessHandoff.chunkFrames)
            p.initialize(repeating: 0, count: LoudnessHandoff.chunkFrames)
            return p
        }
        meter = Mutex(Meter(current: threaded ? LoudnessHandoff.makeMeter(sampleRate: sampleRate) : nil, scratch: scratch))
        guard threaded else { return }
        // Every 40 ms (a reading shows at most that much less than was played; `reading()`
        // feeds the rest first). The thread holds the handoff only while it feeds it.
        let wake = wake
        let t = Thread { [weak self] in
            ThreadName.setCurrent("tapedeck-loud")
            while true {
                _ = wake.wait(timeout: .now() + .milliseconds(40))
                guard let self, !self.stopping.load(ordering: .acquiring) else { return }
                self.drain()
            }
        }
        t.qualityOfService = .utility
        thread = t
        t.start()
    }

    deinit {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        meter.withLock { m in m.scratch.forEach { $0.deallocate() } }
    }

    /// Stops the meter's thread and waits for it (what the ring holds stays for the next
    /// reading). Control thread.
    func close() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        while let t = thread, !t.isFinished { usleep(1000) }
        thread = nil
    }

    private static func makeMeter(sampleRate: Int) -> LoudnessMeter? {
        try? LoudnessMeter(channelCount: 2, sampleRate: sampleRate, maxFrames: chunkFrames)
    }

    /// Feeds what the ring holds now to the current meter: no more (an unpaced device fills it
    /// faster than libebur128 empties it, and a reader must not chase it). Any thread but the
    /// audio thread.
    private func drain() {
        meter.withLock { m in
            m.scratch.withUnsafeBufferPointer { planes in
                let channels = UnsafePointer(planes.baseAddress!)
                var left = ring.availableFrames
                while left > 0 {
                    let n = ring.pop(into: channels, frameCount: min(left, LoudnessHandoff.chunkFrames))
                    if n == 0 { break }
                    m.current?.add(channels, frameCount: n)
                    left -= n
                }
            }
        }
    }

    /// Starts measuring afresh: what was played so far goes to the old meter, what plays from
    /// now to a new one (−∞ until it has heard 400 ms). Control thread.
    func renew() {
        let fresh = LoudnessHandoff.makeMeter(sampleRate: sampleRate)
        drain()
        meter.withLock { $0.current = fresh }
    }

    /// Nothing to free any more (the meters never reach the audio thread); kept for the
    /// status poll's rhythm: a reading between two of the meter thread's wake-ups.
    func collect() {}

    /// The latest readings, everything played so far fed first (nil when libebur128 could
    /// not make a meter). Control thread.
    func reading() -> LoudnessReading? {
        drain()
        return meter.withLock { $0.current?.reading() }
    }

    /// Copies one block of the stereo bus for the meter. `mayWait`: the device is not paced
    /// (nothing is lost by waiting), so a full ring waits for the meter's thread instead of
    /// dropping frames.
    ///
    /// Audio thread: no allocation, no locks (unpaced, it may sleep until the ring has room).
    func measure(_ bus: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int, mayWait: Bool) {
        var done = ring.push(bus, frameCount: frameCount)
        if done < frameCount && mayWait {
            var waited = 0
            // (At most a second; with no thread to drain it, a reading does.)
            while done < frameCount && waited < 2000 && threaded && !stopping.load(ordering: .relaxed) {
                wake.signal()
                usleep(500)
                waited += 1
                done += ring.push(bus, frameCount: frameCount - done, sourceOffset: done)
            }
        }
        if done < frameCount { droppedFrames.add(frameCount - done, ordering: .relaxed) }
    }
}
