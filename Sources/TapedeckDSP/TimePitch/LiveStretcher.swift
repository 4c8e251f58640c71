import CRubberBand
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Real-time, pitch-preserving speed change and pitch shift, through Rubber Band's real-time
/// mode: the R2 "faster" engine by default, or R3 "finer" (``StretchQuality/best``), which
/// sounds better and costs two to three times as much (the engine runs one stretcher on the
/// whole mix, so either fits a live budget; `tapedeck bench stretch` measures both).
///
/// Speed and pitch are set on the audio thread, right before ``render(into:frameCount:)``,
/// because Rubber Band has no lock: a ratio change from another thread must come through the
/// engine's command queue. The stretcher's own delay is absorbed at every ``restart()``: it
/// is fed Rubber Band's preferred start pad of silence and its start delay is discarded, so
/// the first frame rendered is the source's first frame, exactly where the playhead says.
///
/// Allocates in `init` only. The final flush is never sent (a stream just stops), so nothing
/// here takes the 8 ms a flush can.
public final class LiveStretcher: @unchecked Sendable {
    private let state: RubberBandState
    /// Channels per frame.
    public let channelCount: Int
    private let maxFrames: Int
    private let chunkFrames: Int
    private let input: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// A pointer table aimed into the caller's buffers at each retrieve (owns no samples).
    private let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let discard: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Unowned: the source (a track's voice) owns this stretcher; a strong reference back
    /// would keep both alive forever.
    private unowned(unsafe) let source: TimePitchSource
    private var speed = 1.0
    private var pitchScale = 1.0
    private var sourceEnded = false
    private var needsPriming = true
    /// Measured output delay after the start pad, at each of ``StretchDelayTable/steps``:
    /// shared with every stretcher of this kind, and filled in the background.
    private let delays: StretchDelayTable
    /// Rubber Band's reported start delay at each step, and what the measurement added to it
    /// at the speed this stretcher started at: a step not measured yet is estimated from them.
    private var reportedDelays: [Double] = []
    private var delayCorrection = 0.0
    private let sampleRate: Int
    /// Which Rubber Band engine runs.
    public let quality: StretchQuality

    /// Prepares a stretcher pulling from `source`; `maxFrames` bounds one render call. The
    /// stretcher does not keep `source` alive: its owner must outlive it. `startSpeed` is the
    /// speed it will first play at: its start delay is measured now if this machine has not
    /// measured it before, the other speeds' in the background (see ``StretchDelayTable``).
    /// Off the audio thread.
    public convenience init(sampleRate: Int, channelCount: Int, maxFrames: Int, source: TimePitchSource,
                            quality: StretchQuality = .fast, startSpeed: Double = 1) {
        self.init(sampleRate: sampleRate, channelCount: channelCount, maxFrames: maxFrames, source: source,
                  quality: quality, measuringFrom: startSpeed)
    }

    /// `measuringFrom` nil: measures nothing (the background measurer itself).
    fileprivate init(sampleRate: Int, channelCount: Int, maxFrames: Int, source: TimePitchSource, quality: StretchQuality,
                 measuringFrom startSpeed: Double?) {
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.quality = quality
        self.maxFrames = maxFrames
        self.source = source
        chunkFrames = 512
        delays = StretchDelayTable.table(for: StretchDelayTable.Key(sampleRate: sampleRate, channelCount: channelCount, quality: quality),
                                         cache: LiveStretcher.delayCache.withLock { $0 })
        let engine = quality == .best ? RubberBandOptionEngineFiner.rawValue : RubberBandOptionEngineFaster.rawValue
        let options = RubberBandOptionProcessRealTime.rawValue | engine
            | RubberBandOptionThreadingNever.rawValue | RubberBandOptionChannelsTogether.rawValue
            | RubberBandOptionPitchHighConsistency.rawValue | RubberBandOptionTransientsMixed.rawValue
        state = rubberband_new(UInt32(sampleRate), UInt32(channelCount), Int32(bitPattern: options), 1, 1)
        // Rubber Band reports to stderr at level 0 (the warm-up's deliberate allocations among
        // it); a live stretcher runs on the audio thread, which must never write to a terminal.
        rubberband_set_debug_level(state, -1)
        // At 1/32× one chunk of input yields 32 chunks of output; at 32× a block needs 32 of input.
        rubberband_set_max_process_size(state, UInt32(chunkFrames))
        func buffers(_ frames: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
            let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channelCount)
            for c in 0..<channelCount {
                let b = UnsafeMutablePointer<Float>.allocate(capacity: frames)
                b.initialize(repeating: 0, count: frames)
                (table + c).initialize(to: b)
            }
            return table
        }
        input = buffers(chunkFrames)
        output = .allocate(capacity: channelCount)
        output.initialize(repeating: input[0], count: channelCount)
        discard = buffers(chunkFrames)
        warmUp()
        reportedDelays = StretchDelayTable.steps.map { step in
            rubberband_set_time_ratio(state, 1 / StretchDelayTable.speed(atStep: step))
            return Double(rubberband_get_start_delay(state))
        }
        rubberband_set_time_ratio(state, 1)
        rubberband_reset(state)
        if let startSpeed { measureStartDelays(startSpeed: startSpeed) }
    }

    deinit {
        rubberband_delete(state)
        for c in 0..<channelCount {
            input[c].deallocate()
            discard[c].deallocate()
        }
        input.deallocate()
        discard.deallocate()
        output.deallocate()
    }

    /// Rubber Band grows internal buffers the first time it meets a more extreme ratio, and
    /// growing allocates. Visiting both ends of the range here, off the audio thread, means a
    /// live speed change never allocates.
    private func warmUp() {
        // Rubber Band would report each such growth ("window allocation required in realtime
        // mode"); its debug level, set below zero at creation, keeps that quiet.
        for c in 0..<channelCount { input[c].update(repeating: 0, count: chunkFrames) }
        // Pitch shifts reach ±36 semitones: an eighth to eight times the frequency. The
        // extremes are visited first, then the ratios again at pitch 1: R2 left by the last
        // visit at an extreme pitch scale loses up to 10 dB on some steady tones afterwards
        // (measured, 500 Hz at 2×), while after this order it keeps their level.
        for (ratio, pitch) in [(32.0, 1.0 / 8), (1.0 / 32, 8), (32, 1), (1.0 / 32, 1), (1, 1)] {
            rubberband_set_time_ratio(state, ratio)
            rubberband_set_pitch_scale(state, pitch)
            for _ in 0..<8 {
                process(frameCount: chunkFrames)
                while rubberband_available(state) > 0 {
                    _ = retrieve(into: discard, frameCount: min(Int(rubberband_available(state)), chunkFrames))
                }
            }
        }
        rubberband_set_pitch_scale(state, 1)
        rubberband_reset(state)
    }

    /// Rubber Band's reported start delay does not match what it does after the warm-up
    /// (measured: one analysis window more at 1×, and it varies with the ratio when slowing
    /// down), so the delay is measured instead: for speeds across the whole range, a short
    /// burst after the start pad, and where its energy comes out. Measured once per sample
    /// rate, channel count and engine (every stretcher with those behaves the same) and kept,
    /// in memory and in ``StretchDelayCache``, so that a later run starts without measuring.
    /// Here only the steps `startSpeed` falls between; the rest on another thread.
    ///
    /// Always on a stretcher of its own, never this one: Rubber Band's output depends a little
    /// on what it processed before (a reset does not clear everything), so a stretcher that
    /// had measured played other samples than one built from the cache.
    private func measureStartDelays(startSpeed: Double) {
        let cache = LiveStretcher.delayCache.withLock { $0 }
        let (lower, fraction) = LiveStretcher.bracket(speed: startSpeed)
        var needed: [Int] = []
        if fraction < 1 { needed.append(lower) }
        if fraction > 0 { needed.append(lower + 1) }
        let key = delays.key
        var measurer: DelayMeasurer?
        for step in needed where delays.measured(step: step) == nil {
            let m = measurer ?? DelayMeasurer(key)
            measurer = m
            delays.record(m.measure(step: step), step: step, cache: cache)
        }
        if let step = needed.first, let measured = delays.measured(step: step) {
            delayCorrection = measured - reportedDelays[step - StretchDelayTable.steps.lowerBound]
        }
        let started = measurer
        delays.measureRestInBackground(cache: cache) {
            let m = started ?? DelayMeasurer(key)
            return { m.measure(step: $0) }
        }
    }

    /// Whether the start delay at `speed` is measured rather than estimated; when it is not,
    /// the measuring thread is asked to measure it next. A front-end holds a speed change back
    /// until it is (tens of milliseconds), so that playback starts where the playhead says.
    /// Off the audio thread.
    public func hasMeasuredDelay(speed: Double) -> Bool {
        let (lower, fraction) = LiveStretcher.bracket(speed: speed)
        var missing: [Int] = []
        if fraction < 1 && delays.measured(step: lower) == nil { missing.append(lower) }
        if fraction > 0 && delays.measured(step: lower + 1) == nil { missing.append(lower + 1) }
        for step in missing { delays.want(step: step) }
        return missing.isEmpty
    }

    /// Waits (up to `timeoutSeconds`) until every speed's start delay is measured: for a
    /// benchmark, whose timings the measuring thread would disturb. Off the audio thread.
    @discardableResult
    public func waitUntilDelaysMeasured(timeoutSeconds: Double = 60) -> Bool {
        delays.waitUntilMeasured(timeoutSeconds: timeoutSeconds)
    }

    /// Where measured start delays are kept between runs (nil: measured in every process).
    /// Tests point it at a folder of their own.
    public static let delayCache = Mutex<StretchDelayCache?>(StretchDelayCache.standard())

    fileprivate func measureStartDelay(speed: Double) -> Double {
        rubberband_reset(state)
        rubberband_set_time_ratio(state, 1 / speed)
        let reported = Int(rubberband_get_start_delay(state))
        let pad = Int(rubberband_get_preferred_start_pad(state))
        for c in 0..<channelCount { input[c].update(repeating: 0, count: chunkFrames) }
        var fed = 0
        while fed < pad {
            let n = min(pad - fed, chunkFrames)
            process(frameCount: n)
            fed += n
        }
        // The probe goes in after some silence: Rubber Band's first blocks run on a slightly
        // different clock than its steady state, and steady state is what playback hears.
        let settleFrames = 8 * chunkFrames
        var outputIndex = 0, inputIndex = 0
        var weighted = 0.0, energy = 0.0
        // Run until the probe's energy is surely out: its place at this ratio plus twice the
        // reported delay and a margin. (At 32× every output frame costs 32 input frames, so
        // no more than that.)
        let limit = Int(Double(pad + settleFrames + LiveStretcher.probeFrames) / speed) + 2 * reported + 1024
        while outputIndex < limit {
            let probing = inputIndex == settleFrames
            if probing {
                for c in 0..<channelCount {
                    for i in 0..<LiveStretcher.probeFrames { input[c][i] = LiveStretcher.probe(i, sampleRate: sampleRate) }
                }
            }
            process(frameCount: chunkFrames)
            if probing { for c in 0..<channelCount { input[c].update(repeating: 0, count: LiveStretcher.probeFrames) } }
            inputIndex += chunkFrames
            while rubberband_available(state) > 0 {
                let got = retrieve(into: discard, frameCount: min(Int(rubberband_available(state)), chunkFrames))
                for i in 0..<got {
                    let e = Double(discard[0][i]) * Double(discard[0][i])
                    weighted += Double(outputIndex + i) * e
                    energy += e
                }
                outputIndex += got
            }
        }
        rubberband_set_time_ratio(state, 1)
        rubberband_reset(state)
        // The probe's energy centre went in half-way through it, after the settling silence.
        return energy > 0 ? weighted / energy - Double(settleFrames + LiveStretcher.probeFrames / 2) / speed : Double(reported)
    }

    /// The probe: a short Hann-windowed 1 kHz burst, like a percussive onset. A bare impulse
    /// is treated as a pure transient and comes out earlier than ordinary material does.
    static let probeFrames = 64
    static func probe(_ i: Int, sampleRate: Int) -> Float {
        let window = 0.5 - 0.5 * cos(2 * Double.pi * (Double(i) + 0.5) / Double(probeFrames))
        return Float(window * sin(2 * Double.pi * 1000 * Double(i) / Double(sampleRate)))
    }

    /// The measured start delay at `speed`, interpolated between measured speeds (a step not
    /// measured yet estimated from Rubber Band's report and this stretcher's first measurement).
    ///
    /// Audio thread safe: arithmetic and atomic loads on preallocated tables.
    private func startDelay(speed: Double) -> Int {
        let (lower, fraction) = LiveStretcher.bracket(speed: speed)
        let i = lower - StretchDelayTable.steps.lowerBound
        let below = delays.measured(step: lower) ?? reportedDelays[i] + delayCorrection
        let above = delays.measured(step: lower + 1) ?? reportedDelays[i + 1] + delayCorrection
        return Int((below * (1 - fraction) + above * fraction).rounded())
    }

    /// The measured step at or below `speed` (never the last) and how far `speed` lies
    /// towards the next (0…1). Audio thread safe: arithmetic.
    static func bracket(speed: Double) -> (lower: Int, fraction: Double) {
        let steps = StretchDelayTable.steps
        // Clamped before converting: a speed of 0, infinity or NaN must not trap here.
        let raw = log2(speed) * 2
        let position = raw.isNaN ? 0 : min(max(raw, Double(steps.lowerBound)), Double(steps.upperBound))
        let lower = min(Int(position.rounded(.down)), steps.upperBound - 1)
        return (lower, min(max(position - Double(lower), 0), 1))
    }

    /// Output frames of delay the stretcher has at the current speed, measured (already
    /// compensated at every restart; reported so the engine and UI can show it).
    ///
    /// Audio thread safe.
    public var latencyFrames: Int { startDelay(speed: speed) }

    /// Sets speed (1/32…32) and pitch scale (frequency factor) for the next render.
    ///
    /// Audio thread only (the thread that renders): no allocation.
    public func set(speed newSpeed: Double, pitchScale newPitch: Double) {
        if newSpeed != speed {
            speed = newSpeed
            rubberband_set_time_ratio(state, 1 / newSpeed)
        }
        if newPitch != pitchScale {
            pitchScale = newPitch
            rubberband_set_pitch_scale(state, newPitch)
        }
    }

    /// Forgets everything buffered (after a locate); the next render re-primes, at the speed
    /// and pitch set by then, so output lines up with the source's next frame again.
    ///
    /// Audio thread safe in real-time mode: no allocation.
    public func restart() {
        needsPriming = true
    }

    /// Start pad frames still to feed, and output frames of start delay still to drop, of a
    /// priming under way.
    private var padLeft = 0
    private var delayLeft = 0
    private var priming = false

    /// Primes a little at a time (after a ``restart()``, before the first ``render``): feeds
    /// the start pad and drops the start delay at the current speed and pitch, until
    /// `shouldStop` says the time is up. Returns whether the stretcher is primed. So a
    /// restart's cost — at 1/32× tens of milliseconds of Rubber Band's work — can be spread
    /// over the periods before the transport rolls instead of landing on one.
    ///
    /// Audio thread: no allocation, no locks.
    public func prime(until shouldStop: () -> Bool) -> Bool {
        if needsPriming { beginPriming() }
        guard priming else { return true }
        // Small steps when slowing down: each input frame costs 1/speed output frames.
        let step = max(16, min(chunkFrames, Int(Double(chunkFrames) * min(speed, 1))))
        while padLeft > 0 {
            if shouldStop() { return false }
            let n = min(padLeft, step)
            process(frameCount: n)
            padLeft -= n
        }
        while delayLeft > 0 {
            let available = Int(rubberband_available(state))
            if available <= 0 {
                if shouldStop() { return false }
                pullAndProcess()
                continue
            }
            // Never ask for more than is there: Rubber Band warns on stderr when asked.
            delayLeft -= retrieve(into: discard, frameCount: min(delayLeft, chunkFrames, available))
        }
        priming = false
        return true
    }

    private func beginPriming() {
        needsPriming = false
        priming = true
        rubberband_reset(state)
        sourceEnded = false
        padLeft = Int(rubberband_get_preferred_start_pad(state))
        for c in 0..<channelCount { input[c].update(repeating: 0, count: chunkFrames) }
        delayLeft = startDelay(speed: speed)
    }

    /// Renders `frameCount` frames (at most `maxFrames`) into `channels`, pulling as much
    /// input from the source as Rubber Band asks for. Past the source's end the output runs
    /// out into silence.
    ///
    /// Audio thread: no allocation, no locks.
    public func render(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        let n = min(frameCount, maxFrames)
        if needsPriming || priming { _ = prime(until: { false }) }
        var done = 0
        var idle = 0
        while done < n {
            let available = Int(rubberband_available(state))
            if available > 0 {
                let want = min(available, n - done)
                for c in 0..<channelCount { output[c] = channels[c] + done }
                let got = retrieve(into: output, frameCount: want)
                done += got
                idle = 0
            } else if sourceEnded && idle > 2 {
                break
            } else {
                pullAndProcess()
                idle += 1
            }
        }
        for c in 0..<channelCount where done < n { (channels[c] + done).update(repeating: 0, count: n - done) }
    }

    private func pullAndProcess() {
        let want = min(max(Int(rubberband_get_samples_required(state)), 1), chunkFrames)
        var got = sourceEnded ? 0 : source.read(into: input, frameCount: want)
        if got < want {
            sourceEnded = true
            for c in 0..<channelCount { (input[c] + got).update(repeating: 0, count: want - got) }
            got = want
        }
        process(frameCount: got)
    }

    private func retrieve(into table: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frameCount n: Int) -> Int {
        table.withMemoryRebound(to: UnsafeMutablePointer<Float>?.self, capacity: channelCount) {
            Int(rubberband_retrieve(state, $0, UInt32(n)))
        }
    }

    private func process(frameCount n: Int) {
        input.withMemoryRebound(to: UnsafePointer<Float>?.self, capacity: channelCount) {
            rubberband_process(state, $0, UInt32(n), 0)
        }
    }
}

/// A stretcher that only measures start delays (see ``LiveStretcher/measureStartDelays(startSpeed:)``),
/// with the silent source it is built on (the stretcher holds its source unowned).
private final class DelayMeasurer: TimePitchSource, @unchecked Sendable {
    private var stretcher: LiveStretcher?

    init(_ key: StretchDelayTable.Key) {
        stretcher = LiveStretcher(sampleRate: key.sampleRate, channelCount: key.channelCount, maxFrames: 512, source: self,
                                  quality: key.quality, measuringFrom: nil)
    }

    /// The start delay at `step`. One thread at a time.
    func measure(step: Int) -> Double { stretcher!.measureStartDelay(speed: StretchDelayTable.speed(atStep: step)) }

    /// Nothing: the measurement feeds its own probe.
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int { 0 }
}
