import TapedeckCore
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

/// One track's real-time playback path: its ring (filled by the disk thread at timeline
/// rate) → time-pitch (once engaged) → its playback chain → its buffers, which the audio loop
/// mixes with the track's bus gains.
///
/// Built on the control thread; after ``Engine/start()`` only the audio thread touches it,
/// except ``attachTimePitch(sampleRate:maxFrames:)``, which the control thread calls once
/// before publishing it through an atomic flag.
final class TrackVoice: TimePitchSource, @unchecked Sendable {
    let ring: FrameRing
    let channelCount: Int
    /// Period-sized output, one buffer per channel.
    let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let chain: ChainInstance?
    /// Timeline frames owed to an xrun: skipped in the ring before the next read.
    var debtFrames: Int64 = 0
    private let waitNanoseconds: Int64
    private let periodFrames: Int
    private(set) var stretcher: LiveStretcher?
    private(set) var varispeed: Varispeed?

    init(ring: FrameRing, channelCount: Int, periodFrames: Int, chain: Chain, sampleRate: Int, waitNanoseconds: Int64) {
        self.ring = ring
        self.channelCount = channelCount
        self.periodFrames = periodFrames
        self.waitNanoseconds = waitNanoseconds
        buffers = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            buffers[c] = .allocate(capacity: periodFrames)
            buffers[c].initialize(repeating: 0, count: periodFrames)
        }
        if chain.entries.isEmpty {
            self.chain = nil
        } else {
            let instance = chain.instantiate()
            instance.prepare(format: NodeFormat(sampleRate: Double(sampleRate), channelCount: channelCount), maxFrames: periodFrames)
            self.chain = instance
        }
    }

    deinit {
        chain?.release()
        for c in 0..<channelCount { buffers[c].deallocate() }
        buffers.deallocate()
    }

    /// Frames the chain delays the track by.
    var chainLatencyFrames: Int { chain?.latencyFrames ?? 0 }

    /// Builds the track's stretcher and varispeed. Control thread, before the engine's
    /// time-pitch flag is set (allocates; Rubber Band warms up here, not on the audio thread).
    func attachTimePitch(sampleRate: Int, maxFrames: Int) {
        stretcher = LiveStretcher(sampleRate: sampleRate, channelCount: channelCount, maxFrames: maxFrames, source: self)
        varispeed = Varispeed(channelCount: channelCount, source: self, maxOutputFrames: maxFrames, realtime: true)
    }

    /// Reads `frameCount` timeline frames from the ring, first skipping any xrun debt,
    /// waiting a bounded time for a late disk. A shortfall is silence and becomes debt, so
    /// the track stays aligned with the timeline. Always returns `frameCount`: a track never
    /// "ends" mid-run (that would flush the stretcher).
    ///
    /// Audio thread: no allocation, no locks; may sleep 0.5 ms at a time.
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int) -> Int {
        if debtFrames > 0 {
            let skipped = ring.pop(into: nil, frameCount: Int(min(debtFrames, Int64(ring.availableFrames))))
            debtFrames -= Int64(skipped)
        }
        var got = ring.pop(into: channels, frameCount: n)
        var waited: Int64 = 0
        while got < n && debtFrames == 0 && waited < waitNanoseconds {
            sleepNanoseconds(500_000)
            waited += 500_000
            got += ring.pop(into: channels, frameCount: n - got, destinationOffset: got)
        }
        if got < n {
            for ch in 0..<channelCount { (channels[ch] + got).update(repeating: 0, count: n - got) }
            debtFrames += Int64(n - got)
        }
        return n
    }

    /// Renders one period into ``buffers``: straight from the ring at 1×, through the
    /// stretcher or varispeed otherwise, then through the chain.
    ///
    /// Audio thread: no allocation, no locks.
    func render(frameCount n: Int, timePitch: LiveTimePitch, transport: TransportInfo) {
        if timePitch.engaged, let stretcher, let varispeed {
            if timePitch.varispeed {
                let got = varispeed.render(into: buffers, frameCount: n, speed: timePitch.speed)
                for ch in 0..<channelCount where got < n { (buffers[ch] + got).update(repeating: 0, count: n - got) }
            } else {
                stretcher.set(speed: timePitch.speed, pitchScale: timePitch.pitchScale)
                stretcher.render(into: buffers, frameCount: n)
            }
        } else {
            _ = read(into: buffers, frameCount: n)
        }
        if let chain {
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: buffers, count: channelCount),
                                        frameCount: n, transport: transport)
            chain.process(&context)
        }
    }

    /// Forgets what the time-pitch processors hold (after a mode change or engaging them);
    /// they re-prime on their next render.
    ///
    /// Audio thread: no allocation.
    func restartTimePitch() {
        stretcher?.restart()
        varispeed?.reset()
    }

    /// Feeds the chain its latency's worth of the track's first frames and drops the output,
    /// so from then on the chain's output lines up with the timeline (as in export).
    ///
    /// Audio thread: no allocation.
    func primeChain(transport: TransportInfo) {
        guard let chain else { return }
        var left = chain.latencyFrames
        while left > 0 {
            let k = min(left, periodFrames)
            _ = read(into: buffers, frameCount: k)
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: buffers, count: channelCount),
                                        frameCount: k, transport: transport)
            chain.process(&context)
            left -= k
        }
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
