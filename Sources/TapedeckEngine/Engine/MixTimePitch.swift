#if canImport(Glibc)
import Glibc
#endif
import TapedeckCore
import TapedeckDSP

/// Transport speed and pitch on the mix: one stereo stretcher (Rubber Band) and one stereo
/// varispeed (libsamplerate) that pull the tracks' mix at timeline rate, so the cost of
/// playing at another speed is one stereo processor whatever the track count.
///
/// The processors ask for timeline frames as they need them: `speed` × the period on
/// average, but Rubber Band's R2 engine asks in bursts (at 32× up to 3.5 periods' worth at
/// once, then nothing for several periods) and every restart first asks for its start delay's
/// worth (about 3 000 × `speed` frames). So the mix is rendered ahead into a FIFO at a
/// steady rate — at most ``budget(speed:frameCount:)`` frames a period — and the processors
/// read from it; only what the FIFO lacks is rendered on the spot. While the transport waits
/// to roll after a start or locate the FIFO is filled with the restart's look-ahead, so the
/// first rolling period does not pay for it either.
///
/// The mix is rendered (disk → chain → fader → pan) in blocks of at most one period at this
/// object's own sequence number ``seq``, which starts at the transport's and runs ahead of
/// it by the look-ahead. The stretcher's start delay is absorbed at every
/// ``restart(atSeq:)`` (see ``LiveStretcher``), so the first frame heard after a start or
/// locate is the timeline frame the playhead shows.
///
/// Built on the control thread when speed or pitch first leaves 1× (Rubber Band warms up
/// there); afterwards the audio thread owns it.
final class MixTimePitch: TimePitchSource, @unchecked Sendable {
    /// Renders `frameCount` frames of the timeline mix from sequence `seq` into `into`
    /// (two channels). Audio thread.
    typealias MixRenderer = (_ into: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int, _ seq: Int64) -> Void

    /// The stretcher in use: R2 "faster" up to ``fineAboveSpeed`` at unshifted pitch (unless
    /// R3 was asked for), R3 "finer" above and for any pitch shift, where it is both cheaper and steadier (measured, one stereo
    /// stretcher, 256-frame blocks: at 32× R2 averages 74 % of a period with bursts to 300 %,
    /// R3 33 % and at most 50 %; at 8× they cost the same; at 2× R2 costs 6 %, R3 14 %).
    private(set) var stretcher: LiveStretcher?
    /// R2, when the quality asked for is `.fast`.
    private var fastStretcher: LiveStretcher?
    private var fineStretcher: LiveStretcher?
    private(set) var varispeed: Varispeed?
    /// Above this speed the R3 engine stretches even at `.fast` quality.
    static let fineAboveSpeed = 4.0
    /// The processors' output for one period.
    let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let maxFrames: Int
    private let renderMix: MixRenderer
    private let fifo: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let fifoCapacity: Int
    /// A pointer table aimed into the FIFO or the processors' buffers at an offset.
    private let offsetTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    // Audio thread.
    /// Next timeline sequence number rendered (into the FIFO or straight to the processors).
    private(set) var seq: Int64 = 0
    /// Rendered frames waiting in the FIFO: `fifo[fifoStart..<fifoEnd]`.
    private var fifoStart = 0
    private var fifoEnd = 0
    private var primed = false
    /// Timeline frames the transport moved through an xrun: skipped before the next read, so
    /// what is heard stays where the playhead is.
    var debtFrames: Int64 = 0

    /// Frames the stretcher asks for at a restart, per unit of speed (measured: R2 about
    /// 3 050 × speed, R3 about 2 600 × speed).
    static let primeFramesPerSpeed = 3200.0
    /// The fastest speed.
    static let maximumSpeed = 32.0

    /// Frames rendered ahead in steady state at `speed` (enough for R2's bursts).
    static func steadyAheadFrames(speed: Double, periodFrames: Int) -> Int {
        Int((speed * Double(max(8 * periodFrames, 2048))).rounded(.up))
    }

    /// Timeline frames the mix may read ahead of the playhead at `speed`: a restart's
    /// look-ahead and the steady FIFO. The playback rings must hold at least this much more
    /// than at 1× (see ``Engine``).
    static func lookaheadFrames(speed: Double, periodFrames: Int) -> Int {
        Int((speed * primeFramesPerSpeed).rounded(.up)) + steadyAheadFrames(speed: speed, periodFrames: periodFrames)
    }

    /// Builds both processors for stereo at `sampleRate` (the stretcher with `quality`'s
    /// engine) and the FIFO. `renderMix` must not keep this object alive. `startSpeed` is the
    /// speed asked for, whose start delay the stretchers measure before they are ready (the
    /// rest after: see ``StretchDelayTable``). Control thread.
    /// `varispeedOnly` (an export that never stretches) builds no stretcher at all: Rubber
    /// Band's engines take seconds to build, for nothing there.
    init(sampleRate: Int, periodFrames: Int, quality: StretchQuality, startSpeed: Double = 1, varispeedOnly: Bool = false,
         renderMix: @escaping MixRenderer) {
        maxFrames = periodFrames
        self.renderMix = renderMix
        func table(_ frames: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
            let t = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
            for c in 0..<2 {
                (t + c).initialize(to: .allocate(capacity: frames))
                t[c].initialize(repeating: 0, count: frames)
            }
            return t
        }
        output = table(periodFrames)
        fifoCapacity = MixTimePitch.lookaheadFrames(speed: MixTimePitch.maximumSpeed, periodFrames: periodFrames)
            + MixTimePitch.budget(speed: MixTimePitch.maximumSpeed, frameCount: periodFrames)
        fifo = table(fifoCapacity)
        offsetTable = .allocate(capacity: 2)
        offsetTable.initialize(repeating: fifo[0], count: 2)
        if quality == .fast && !varispeedOnly {
            fastStretcher = LiveStretcher(sampleRate: sampleRate, channelCount: 2, maxFrames: periodFrames, source: self, quality: .fast,
                                          startSpeed: startSpeed)
        }
        if !varispeedOnly {
            fineStretcher = LiveStretcher(sampleRate: sampleRate, channelCount: 2, maxFrames: periodFrames, source: self, quality: .best,
                                          startSpeed: startSpeed)
        }
        stretcher = fastStretcher ?? fineStretcher
        varispeed = Varispeed(channelCount: 2, source: self, maxOutputFrames: periodFrames, realtime: true)
    }

    deinit {
        for c in 0..<2 {
            output[c].deallocate()
            fifo[c].deallocate()
        }
        output.deallocate()
        fifo.deallocate()
        offsetTable.deallocate()
    }

    /// Most frames rendered ahead in one period at `speed`: a quarter more than the
    /// processors use on average, so the FIFO refills between bursts while no period costs
    /// much more than the average.
    ///
    /// Audio thread: arithmetic only.
    static func budget(speed: Double, frameCount n: Int) -> Int {
        Int((speed * Double(n) * 1.25).rounded(.up)) + 1
    }

    /// Frames the FIFO should hold: before the processors' restart its look-ahead too.
    ///
    /// Audio thread: arithmetic only.
    func wantedAhead(timePitch: LiveTimePitch) -> Int {
        let steady = MixTimePitch.steadyAheadFrames(speed: timePitch.speed, periodFrames: maxFrames)
        guard !primed, !timePitch.varispeed else { return steady }
        return steady + Int((timePitch.speed * MixTimePitch.primeFramesPerSpeed).rounded(.up))
    }

    /// Frames waiting in the FIFO.
    var aheadFrames: Int { fifoEnd - fifoStart }

    /// Renders up to `frameCount` more frames of the mix into the FIFO, no further than
    /// `wantedAhead(timePitch:)`. Returns how many.
    ///
    /// Audio thread: no allocation, no locks.
    @discardableResult
    func renderAhead(frameCount budget: Int, timePitch: LiveTimePitch) -> Int {
        let k = min(budget, wantedAhead(timePitch: timePitch) - aheadFrames, fifoCapacity - aheadFrames)
        guard k > 0 else { return 0 }
        skipDebt()
        if fifoEnd + k > fifoCapacity {
            // Keep what waits at the front, so the new frames fit behind it.
            let waiting = aheadFrames
            for c in 0..<2 { fifo[c].update(from: fifo[c] + fifoStart, count: waiting) }
            fifoStart = 0
            fifoEnd = waiting
        }
        for c in 0..<2 { offsetTable[c] = fifo[c] + fifoEnd }
        renderMix(offsetTable, k, seq)
        seq += Int64(k)
        fifoEnd += k
        return k
    }

    /// Primes the stretcher after a restart, a little at a time, until `deadline` (monotonic
    /// nanoseconds). Returns whether it is primed (varispeed needs none).
    ///
    /// Audio thread: no allocation, no locks.
    func prime(timePitch: LiveTimePitch, until deadline: Int64) -> Bool {
        guard !timePitch.varispeed else { return true }
        guard let stretcher else { return true }
        stretcher.set(speed: timePitch.speed, pitchScale: timePitch.pitchScale)
        return stretcher.prime(until: { monotonicNanoseconds() >= deadline })
    }

    /// Renders one period of the mix at `timePitch`'s speed, mode and pitch into ``output``.
    ///
    /// Audio thread: no allocation, no locks.
    func render(frameCount n: Int, timePitch: LiveTimePitch) {
        let n = min(n, maxFrames)
        primed = true
        if timePitch.varispeed, let varispeed {
            let got = varispeed.render(into: output, frameCount: n, speed: timePitch.speed)
            for c in 0..<2 where got < n { (output[c] + got).update(repeating: 0, count: n - got) }
        } else if let stretcher {
            stretcher.set(speed: timePitch.speed, pitchScale: timePitch.pitchScale)
            stretcher.render(into: output, frameCount: n)
        } else {
            for c in 0..<2 { output[c].update(repeating: 0, count: n) }
        }
    }

    /// The processors' source: the next `frameCount` timeline frames of the mix, from the
    /// FIFO and, for what it lacks, rendered now. Always all of them (the mix never ends
    /// mid-run, which would flush the stretcher).
    ///
    /// Audio thread: no allocation, no locks.
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int) -> Int {
        skipDebt()
        let k = min(n, aheadFrames)
        if k > 0 {
            for c in 0..<2 { channels[c].update(from: fifo[c] + fifoStart, count: k) }
            fifoStart += k
            if fifoStart == fifoEnd { fifoStart = 0; fifoEnd = 0 }
        }
        if k < n {
            for c in 0..<2 { offsetTable[c] = channels[c] + k }
            renderMix(offsetTable, n - k, seq)
            seq += Int64(n - k)
        }
        return n
    }

    /// Drops the xrun debt: from the FIFO first, then from what is still to be rendered.
    ///
    /// Audio thread: arithmetic only.
    private func skipDebt() {
        guard debtFrames > 0 else { return }
        let dropped = min(Int(min(debtFrames, Int64(Int.max))), aheadFrames)
        fifoStart += dropped
        debtFrames -= Int64(dropped)
        seq += debtFrames
        debtFrames = 0
    }

    /// The stretcher for `speed` and `pitchScale`: R2 only for unshifted pitch. R2 sizes its
    /// analysis window by the pitch scale and reallocates its onset detector whenever the
    /// window changes (`R2Stretcher::reconfigure`, seen by the allocation test: a jump of an
    /// octave or more allocated on the audio thread), while R3 changes pitch in place — and
    /// sounds better shifted.
    ///
    /// Audio thread: no allocation.
    private func stretcher(for speed: Double, pitchScale: Double) -> LiveStretcher? {
        guard let fastStretcher, speed <= MixTimePitch.fineAboveSpeed, pitchScale == 1 else { return fineStretcher }
        return fastStretcher
    }

    /// Whether both stretchers know their start delay at `speed` (asking for it when not).
    /// Off the audio thread.
    func hasMeasuredDelays(speed: Double) -> Bool {
        let fast = fastStretcher?.hasMeasuredDelay(speed: speed) ?? true
        let fine = fineStretcher?.hasMeasuredDelay(speed: speed) ?? true
        return fast && fine
    }

    /// Whether `speed` and `pitchScale` need the other stretcher (and so a restart).
    ///
    /// Audio thread: no allocation.
    func changesStretcher(speed: Double, pitchScale: Double) -> Bool { stretcher(for: speed, pitchScale: pitchScale) !== stretcher }

    /// Forgets what the processors and the FIFO hold; they re-prime from `seq` on, with the
    /// stretcher for `speed` and `pitchScale`.
    ///
    /// Audio thread: no allocation.
    func restart(atSeq start: Int64, speed: Double, pitchScale: Double) {
        seq = start
        debtFrames = 0
        fifoStart = 0
        fifoEnd = 0
        primed = false
        stretcher = stretcher(for: speed, pitchScale: pitchScale)
        stretcher?.restart()
        varispeed?.reset()
    }
}

/// The audio thread's view of speed, mode and pitch.
struct LiveTimePitch {
    /// Whether the processors run (once anything but plain 1× has been asked for).
    var engaged = false
    var speed = 1.0
    var varispeed = false
    var pitchScale = 1.0
}

extension LiveTimePitch {
    /// Takes new settings from the command queue. Pitch shift applies in stretch mode; in
    /// varispeed mode pitch follows speed and the shift is ignored.
    ///
    /// Audio thread: arithmetic only.
    mutating func apply(speed newSpeed: Double, varispeed isVarispeed: Bool, pitchSemitones: Double) {
        speed = newSpeed
        varispeed = isVarispeed
        pitchScale = exp2(pitchSemitones / 12)
    }
}
