#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TapedeckEngine

/// Measures a device's true round trip: plays a click train, records it back through a
/// loopback (a cable from an output to an input, or ``LoopbackDevice``), and finds the lag
/// at which the recording lines up with what was played.
///
/// Frames are counted the way the engine counts them: playback frame 0 is the first frame
/// written after the device starts (the prefill is not counted), capture frame 0 the
/// first frame read, and every cycle reads one period and then writes one, as the audio
/// loop does. So the measured lag is exactly what a take recorded while playing is shifted
/// by, and ``Result/extraFrames`` (measured minus ``DeviceConfiguration/roundTripLatencyFrames``)
/// is what the engine must add to what ALSA reports.
///
/// The clicks are single-frame impulses at irregular spacing: the lag is the one at which
/// the recorded samples at every click position add up coherently (cross-correlation with
/// the sparse train), and an irregular train has no second lag where more than one click
/// lines up. The absolute value of the sum also finds a polarity-inverted loop.
public enum LatencyCalibrator {
    /// What to play and how far to look.
    public struct Settings: Sendable, Equatable {
        /// Click amplitude (linear, 0…1).
        public var amplitude: Float = 0.5
        /// Silence before the first click, in seconds, so the device has settled.
        public var leadInSeconds: Double = 0.1
        /// The longest round trip to look for, in seconds.
        public var maxLatencySeconds: Double = 0.5
        /// Gaps between clicks, in seconds; irregular on purpose (see the type's notes).
        public var gapsSeconds: [Double] = [0.21, 0.26, 0.19, 0.31, 0.23, 0.28, 0.2]
        /// Capture channel to listen on, 1-based.
        public var inputChannel: Int = 1
        /// The recorded click must reach this level (linear) to count as heard: −50 dBFS.
        public var minimumLevel: Float = 0.003
        /// How long (device time) xruns that cost frames may keep starting the run over before
        /// the measurement gives up (see ``CalibrationRetry``): a busy machine xruns now and then.
        public var retrySeconds: Double = 15
        /// Creates the default settings.
        public init() {}
    }

    /// What a measurement found.
    public struct Result: Sendable, Equatable {
        /// True round trip: frames from writing a frame to reading it back.
        public var measuredFrames: Int64
        /// What the device reports for the same path (``DeviceLatency``: the input's capture
        /// latency plus the master outputs' playback latency, as a take is placed).
        public var reportedFrames: Int64
        /// `measuredFrames - reportedFrames`: the residual to store, what no driver reports.
        public var extraFrames: Int64 { measuredFrames - reportedFrames }
        /// Level of the click as it came back (mean over the clicks, linear, signed: negative
        /// when the loop inverts polarity).
        public var level: Float
        /// How far the single clicks' loudest frames strayed from the common lag (0 for a clean
        /// loop; a few frames through real converters that smear the impulse).
        public var spreadFrames: Int
        /// Clicks played.
        public var clickCount: Int
        /// Runs spoiled by xruns that cost frames and measured again (0: the first run stood).
        public var spoiledRuns = 0
        /// Who reported ``reportedFrames`` (`JACK`, `ALSA`, …) and how it is made up.
        public var backend = ""
        public var reportedCaptureFrames: Int64 = 0
        public var reportedPlaybackFrames: Int64 = 0
    }

    /// Why a measurement failed; one line for the user.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Nothing like the click train came back.
        case noSignal(peak: Float)
        /// The device cannot do a round trip (no capture or no playback, or no such channel).
        case unusableDevice(String)
        /// The device failed (unplugged, bad state); `code` is the negative errno.
        case deviceFailed(code: Int32)
        /// Xruns that cost frames spoiled every run for `seconds` (device time); `backend`
        /// (``DeviceLatency/backend``) says what to try.
        case xruns(count: Int, seconds: Int, backend: String)
        /// The train came back at two lags (frames): the loop has more than one path.
        case severalEchoes(Int, Int)
        /// The device cannot say what it reports for the path (a JACK port whose latency is a
        /// range: paths of different latency meet there); the words say which.
        case unsureReport(String)

        public var description: String {
            switch self {
            case .noSignal(let peak):
                let level = peak > 0 ? "\((200 * log10(Double(peak))).rounded() / 10) dBFS" : "silence"
                return "no click came back: is the loopback connected? (loudest input: \(level))"
            case .unusableDevice(let why): return why
            case .deviceFailed(let code): return "the device failed while measuring: \(DeviceError.explain(code))"
            case .xruns(let n, let seconds, let backend):
                let remedy = backend.contains("JACK")
                    ? "a larger JACK buffer size (jack_bufsize 512, or PipeWire's quantum)"
                    : "a larger --period or --periods"
                return "\(n) xruns in \(seconds) s each cost audio and spoiled the measurement under way; nothing stored: "
                    + "run it again when the machine is less busy, or with \(remedy)"
            case .severalEchoes(let a, let b):
                return "the clicks came back twice, \(min(a, b)) and \(max(a, b)) frames later: the loop has more than one path (connect one output to one input, nothing else); nothing stored"
            case .unsureReport(let why): return "\(why); nothing stored"
            }
        }
    }

    /// Playback frames of each click, counted from the first frame written.
    public static func clickFrames(sampleRate: Int, settings: Settings = Settings()) -> [Int] {
        var at = Int((settings.leadInSeconds * Double(sampleRate)).rounded())
        var frames = [at]
        for gap in settings.gapsSeconds {
            at += max(1, Int((gap * Double(sampleRate)).rounded()))
            frames.append(at)
        }
        return frames
    }

    /// Plays the click train on every playback channel of `device` and records it back on
    /// the calling thread, then finds the round trip. Starts and stops the device once: an
    /// xrun that cost frames spoils the run under way, which starts over on the running device
    /// for as long as ``Settings/retrySeconds`` allows (``CalibrationRetry``) — a device opened
    /// once can be measured whatever it went through (a JACK client is not restarted: its stop
    /// closes it).
    ///
    /// Control thread (it drives the device itself; no engine may be running on it).
    public static func measure(device: AudioDevice, settings: Settings = Settings()) throws(Failure) -> Result {
        let config = device.configuration
        guard config.captureChannels > 0, config.playbackChannels > 0 else {
            throw .unusableDevice("audio device '\(config.name)': calibration needs capture and playback on one device")
        }
        guard settings.inputChannel >= 1 && settings.inputChannel <= config.captureChannels else {
            throw .unusableDevice("audio device '\(config.name)': input channel \(settings.inputChannel) does not exist (the device has \(config.captureChannels))")
        }
        let clicks = clickFrames(sampleRate: config.sampleRate, settings: settings)
        let maxLag = Int(settings.maxLatencySeconds * Double(config.sampleRate)) + config.bufferFrames
        let frames = (clicks.last ?? 0) + maxLag + 2 * config.periodFrames
        let retry = CalibrationRetry(budgetFrames: Int64(settings.retrySeconds * Double(config.sampleRate)))
        let client = ClickTrainClient(clicks: clicks, frames: frames, amplitude: settings.amplitude, channel: settings.inputChannel - 1,
                                      playbackChannels: config.playbackChannels, retry: retry, settleFrames: maxLag)
        do { try device.start(client: client, realtimePriority: true) } catch {
            throw .deviceFailed(code: error.code == 0 ? -5 : error.code)
        }
        while !client.finished.load(ordering: .acquiring) { sleepNanoseconds(2_000_000) }
        // What the device says of the path, read while it still runs: JACK settles its
        // latencies after the ports connect, on its own thread, and takes are placed with
        // what it says then.
        let report = device.latency
        device.stop()
        if client.failureCode != 0 { throw .deviceFailed(code: client.failureCode) }
        if client.spoiled {
            let seconds = Int((Double(client.retry.elapsedFrames) / Double(max(config.sampleRate, 1))).rounded())
            throw .xruns(count: client.retry.spoilingXruns, seconds: seconds, backend: report.backend)
        }
        let channel = settings.inputChannel
        if report.unsureCaptureChannels.contains(channel) || !report.unsurePlaybackChannels.filter({ $0 <= 2 }).isEmpty {
            let which = report.unsureCaptureChannels.contains(channel) ? "input \(channel)" : "the outputs"
            throw .unsureReport("\(report.backend) reports \(which) with latencies that differ (paths of different latency meet there)")
        }
        let capture = report.capture(channels: [channel]), playback = report.playback(channels: [1, 2])
        var result = try analyse(Array(UnsafeBufferPointer(start: client.input, count: frames)), clicks: clicks, maxLag: maxLag,
                                 reported: capture + playback, minimumLevel: settings.minimumLevel)
        result.backend = report.backend
        result.reportedCaptureFrames = capture
        result.reportedPlaybackFrames = playback
        result.spoiledRuns = client.retry.spoilingXruns
        return result
    }

    /// Finds the lag in `0...maxLag` where `input` (capture frames from the first read) at
    /// the `clicks` positions (playback frames) sums highest, and checks that it is a real
    /// echo of the train, not noise. Public so a recording made another way (through the
    /// engine, from a file) can be analysed the same way.
    public static func analyse(_ input: [Float], clicks: [Int], maxLag: Int, reported: Int64,
                               minimumLevel: Float = Settings().minimumLevel) throws(Failure) -> Result {
        let peak = input.reduce(0) { max($0, abs($1)) }
        var best = -1, bestScore: Float = 0
        var scores = [Float](repeating: 0, count: maxLag + 1)
        for lag in 0...maxLag {
            var sum: Float = 0
            for c in clicks where c + lag < input.count { sum += input[c + lag] }
            scores[lag] = abs(sum)
            if scores[lag] > bestScore { bestScore = scores[lag]; best = lag }
        }
        let n = Float(clicks.count)
        guard best >= 0, bestScore / n >= minimumLevel else { throw .noSignal(peak: peak) }
        // An echo of the train lines every click up at one lag; anything else (one stray
        // click, hum, noise) lines up at most one or two at a time. Demand the best lag beat
        // twice over every lag outside its own neighbourhood (64 frames: converters smear an
        // impulse over a few dozen frames at most, and clicks are thousands of frames apart).
        var rival: Float = 0, rivalLag = 0
        for (lag, s) in scores.enumerated() where abs(lag - best) > 64 && s > rival {
            rival = s
            rivalLag = lag
        }
        // A second echo as loud as the first (within half) is a second path: no one figure fits
        // both. An echo stands far above the input's level as a whole (8 impulses in seconds of
        // near silence); the best of noise's chance alignments does not.
        var energy: Double = 0
        for x in input { energy += Double(x) * Double(x) }
        let floor = Float((energy / Double(max(input.count, 1))).squareRoot())
        if rival >= bestScore / 2, rival / n >= minimumLevel, rival / n >= 4 * floor { throw .severalEchoes(best, rivalLag) }
        guard bestScore >= 2 * rival else { throw .noSignal(peak: peak) }
        var signed: Float = 0
        var spread = 0
        for c in clicks where c + best < input.count {
            signed += input[c + best]
            // Where each click's own loudest frame fell, near the common lag.
            var loudest = c + best, level: Float = 0
            for i in max(0, c + best - 32)...min(input.count - 1, c + best + 32) where abs(input[i]) > level {
                level = abs(input[i])
                loudest = i
            }
            spread = max(spread, abs(loudest - (c + best)))
        }
        return Result(measuredFrames: Int64(best), reportedFrames: reported, level: signed / n,
                      spreadFrames: spread, clickCount: clicks.count)
    }
}

/// The calibration's device client: keeps the captured channel and writes the clicks due in
/// each block on every output, counting frames (a JACK cycle may come in blocks of any
/// length). An xrun that cost frames spoils the run under way: it starts over at the next
/// block, or the measurement gives up, as ``CalibrationRetry`` decides. Everything is
/// allocated before the device starts.
private final class ClickTrainClient: AudioDeviceClient, @unchecked Sendable {
    let clicks: [Int]
    let frames: Int
    let amplitude: Float
    let channel: Int
    let playbackChannels: Int
    /// Frames of silence before a run that starts over, so no echo of the spoiled one is heard in it.
    let settleFrames: Int
    private var settling = 0
    /// Every captured frame of the chosen channel, in order, of the run that finished.
    let input: UnsafeMutablePointer<Float>
    private var frame = 0
    private var nextClick = 0
    /// Set on the audio thread when an xrun spoiled the run under way.
    private var restart = false
    /// Set (releasing) when the measurement is over; the control thread then reads the rest.
    let finished = Atomic<Bool>(false)
    /// Which xruns spoil a run and how long runs start over; the control thread reads it
    /// after ``finished``.
    private(set) var retry: CalibrationRetry
    /// Whether the last run was spoiled (the measurement failed).
    var spoiled = false
    var failureCode: Int32 = 0

    init(clicks: [Int], frames: Int, amplitude: Float, channel: Int, playbackChannels: Int, retry: CalibrationRetry, settleFrames: Int) {
        self.clicks = clicks
        self.frames = frames
        self.amplitude = amplitude
        self.channel = channel
        self.playbackChannels = playbackChannels
        self.retry = retry
        self.settleFrames = settleFrames
        input = .allocate(capacity: max(frames, 1))
        input.initialize(repeating: 0, count: max(frames, 1))
    }

    deinit { input.deallocate() }

    func audioThreadBegins(realtime: Bool) {}
    func beginCycle() -> Bool { true }
    func audioThreadEnds() { finished.store(true, ordering: .releasing) }

    /// Audio thread: no allocation, no locks.
    func renderCycle(input captured: UnsafePointer<UnsafeMutablePointer<Float>>, output: UnsafePointer<UnsafeMutablePointer<Float>>,
                     frameCount: Int) {
        for c in 0..<max(playbackChannels, 2) { output[c].update(repeating: 0, count: frameCount) }
        guard !finished.load(ordering: .relaxed) else { return }
        retry.heard(frames: Int64(frameCount))
        if restart {
            restart = false
            frame = 0
            nextClick = 0
            settling = settleFrames
        }
        if settling > 0 {
            settling -= frameCount
            return
        }
        let first = frame
        let count = min(frameCount, frames - first)
        (input + first).update(from: captured[channel], count: count)
        while nextClick < clicks.count && clicks[nextClick] < first + frameCount {
            for c in 0..<playbackChannels { output[c][clicks[nextClick] - first] = amplitude }
            nextClick += 1
        }
        frame += count
        if frame >= frames { finished.store(true, ordering: .releasing) }
    }

    /// An xrun, or a part of one: the run under way starts over or the measurement ends, as
    /// the rule says. A run is under way once it recorded a frame, until it is spoiled.
    ///
    /// Audio thread.
    private func xrun(lostFrames: Int64, skippedNow: Int64) {
        guard !finished.load(ordering: .relaxed) else { return }
        switch retry.xrun(lostFrames: lostFrames, skippedNow: skippedNow, runUnderWay: frame > 0 && !restart) {
        case .carryOn: break
        case .startOver: restart = true
        case .giveUp:
            spoiled = true
            finished.store(true, ordering: .releasing)
        }
    }

    /// An xrun that cost frames spoils the run; one that cost nothing (JACK tells one for
    /// every change of its graph: a port connected while it measures) does not.
    ///
    /// Audio thread.
    func deviceDidXrun(lostFrames: Int64, skippingNow: Int64) { xrun(lostFrames: lostFrames, skippedNow: skippingNow) }

    /// Audio thread: frames lost spoil the run as an xrun does.
    func deviceSkipped(frames: Int64) { xrun(lostFrames: frames, skippedNow: frames) }

    /// Audio thread.
    func deviceDidFail(code: Int32) {
        failureCode = code
        finished.store(true, ordering: .releasing)
    }
}
