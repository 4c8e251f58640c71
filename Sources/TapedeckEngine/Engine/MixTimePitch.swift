#if canImport(Glibc)
import Glibc
#endif
import TapedeckCore
import TapedeckDSP

/// Transport speed and pitch on the mix: one stereo stretcher (Rubber Band) and one stereo
/// varispeed (libsamplerate) that pull the tracks' mix at timeline rate, so the cost of
/// playing at another speed is one stereo processor whatever the track count.
///
/// The processors ask for timeline frames as they need them (`speed` × the period on
/// average, in bursts); each request renders the playing tracks (disk → chain → fader → pan)
/// in blocks of at most one period at this voice's own sequence number ``seq``, which starts
/// at the transport's and runs ahead of it by the processors' look-ahead. The stretcher's
/// start delay is absorbed at every ``restart(atSeq:)`` (see ``LiveStretcher``), so the
/// first frame heard after a start or locate is the timeline frame the playhead shows.
///
/// Built on the control thread when speed or pitch first leaves 1× (Rubber Band warms up
/// there); afterwards the audio thread owns it.
final class MixTimePitch: TimePitchSource, @unchecked Sendable {
    /// Pulls `frameCount` frames of the timeline mix from sequence `seq` into `into`;
    /// the render core renders them. Audio thread.
    typealias MixRenderer = (_ into: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int, _ seq: Int64) -> Void

    private(set) var stretcher: LiveStretcher!
    private(set) var varispeed: Varispeed?
    /// The processors' output for one period.
    let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let maxFrames: Int
    private let renderMix: MixRenderer

    // Audio thread.
    /// Next timeline sequence number the processors read.
    private(set) var seq: Int64 = 0
    /// Timeline frames the transport moved through an xrun: skipped before the next read, so
    /// what is heard stays where the playhead is.
    var debtFrames: Int64 = 0

    /// Builds both processors for stereo at `sampleRate` (the stretcher with `quality`'s
    /// engine). `renderMix` must not keep this object alive. Control thread.
    init(sampleRate: Int, periodFrames: Int, quality: StretchQuality, renderMix: @escaping MixRenderer) {
        maxFrames = periodFrames
        self.renderMix = renderMix
        output = .allocate(capacity: 2)
        for c in 0..<2 {
            (output + c).initialize(to: .allocate(capacity: periodFrames))
            output[c].initialize(repeating: 0, count: periodFrames)
        }
        stretcher = LiveStretcher(sampleRate: sampleRate, channelCount: 2, maxFrames: periodFrames, source: self, quality: quality)
        varispeed = Varispeed(channelCount: 2, source: self, maxOutputFrames: periodFrames, realtime: true)
    }

    deinit {
        for c in 0..<2 { output[c].deallocate() }
        output.deallocate()
    }

    /// Renders one period of the mix at `timePitch`'s speed, mode and pitch into ``output``.
    ///
    /// Audio thread: no allocation, no locks.
    func render(frameCount n: Int, timePitch: LiveTimePitch) {
        let n = min(n, maxFrames)
        if timePitch.varispeed, let varispeed {
            let got = varispeed.render(into: output, frameCount: n, speed: timePitch.speed)
            for c in 0..<2 where got < n { (output[c] + got).update(repeating: 0, count: n - got) }
        } else {
            stretcher.set(speed: timePitch.speed, pitchScale: timePitch.pitchScale)
            stretcher.render(into: output, frameCount: n)
        }
    }

    /// The processors' source: the next `frameCount` timeline frames of the mix, after
    /// skipping any xrun debt. Always all of them (the mix never ends mid-run, which would
    /// flush the stretcher).
    ///
    /// Audio thread: no allocation, no locks.
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int) -> Int {
        if debtFrames > 0 {
            seq += debtFrames
            debtFrames = 0
        }
        renderMix(channels, n, seq)
        seq += Int64(n)
        return n
    }

    /// Forgets what the processors hold; they re-prime from `seq` on their next render.
    ///
    /// Audio thread: no allocation.
    func restart(atSeq start: Int64) {
        seq = start
        debtFrames = 0
        stretcher.restart()
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
