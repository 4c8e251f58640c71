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
        /// Creates the default settings.
        public init() {}
    }

    /// What a measurement found.
    public struct Result: Sendable, Equatable {
        /// True round trip: frames from writing a frame to reading it back.
        public var measuredFrames: Int64
        /// What the device configuration claims (``DeviceConfiguration/roundTripLatencyFrames``).
        public var reportedFrames: Int64
        /// `measuredFrames - reportedFrames`: the per-device offset to store.
        public var extraFrames: Int64 { measuredFrames - reportedFrames }
        /// Level of the click as it came back (mean over the clicks, linear, signed: negative
        /// when the loop inverts polarity).
        public var level: Float
        /// How far the single clicks' loudest frames strayed from the common lag (0 for a clean
        /// loop; a few frames through real converters that smear the impulse).
        public var spreadFrames: Int
        /// Clicks played.
        public var clickCount: Int
    }

    /// Why a measurement failed; one line for the user.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Nothing like the click train came back.
        case noSignal(peak: Float)
        /// The device cannot do a round trip (no capture or no playback, or no such channel).
        case unusableDevice(String)
        /// The device failed (unplugged, bad state); `code` is the negative errno.
        case deviceFailed(code: Int32)
        /// Xruns kept disturbing the measurement.
        case xruns(count: Int)

        public var description: String {
            switch self {
            case .noSignal(let peak):
                let level = peak > 0 ? "\((200 * log10(Double(peak))).rounded() / 10) dBFS" : "silence"
                return "no click came back: is the loopback connected? (loudest input: \(level))"
            case .unusableDevice(let why): return why
            case .deviceFailed(let code): return "the device failed while measuring: \(DeviceError.explain(code))"
            case .xruns(let n): return "\(n) xruns during the measurement; try a larger --period or --periods"
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
    /// the calling thread, then finds the round trip. Starts and stops the device. Retries
    /// up to `attempts` times when an xrun breaks the run.
    ///
    /// Control thread (it drives the device itself; no engine may be running on it).
    public static func measure(device: AudioDevice, settings: Settings = Settings(), attempts: Int = 3) throws(Failure) -> Result {
        let config = device.configuration
        guard config.captureChannels > 0, config.playbackChannels > 0 else {
            throw .unusableDevice("audio device '\(config.name)': calibration needs capture and playback on one device")
        }
        guard settings.inputChannel >= 1 && settings.inputChannel <= config.captureChannels else {
            throw .unusableDevice("audio device '\(config.name)': input channel \(settings.inputChannel) does not exist (the device has \(config.captureChannels))")
        }
        let clicks = clickFrames(sampleRate: config.sampleRate, settings: settings)
        let maxLag = Int(settings.maxLatencySeconds * Double(config.sampleRate)) + config.bufferFrames
        var xruns = 0
        for _ in 0..<max(attempts, 1) {
            switch run(device: device, clicks: clicks, maxLag: maxLag, amplitude: settings.amplitude, channel: settings.inputChannel - 1) {
            case .recorded(let input):
                // What the device says now: JACK settles its latencies after the ports connect,
                // on its own thread, and the takes are placed with what it says then.
                return try analyse(input, clicks: clicks, maxLag: maxLag, reported: device.currentRoundTripLatencyFrames,
                                   minimumLevel: settings.minimumLevel)
            case .xrun: xruns += 1
            case .failed(let code): throw .deviceFailed(code: code)
            }
        }
        throw .xruns(count: xruns)
    }

    private enum RunOutcome { case recorded([Float]), xrun, failed(Int32) }

    /// One pass: the device runs with a ``ClickTrainClient`` until the last click had
    /// `maxLag` frames to return (or an xrun or failure ends it early).
    private static func run(device: AudioDevice, clicks: [Int], maxLag: Int, amplitude: Float, channel: Int) -> RunOutcome {
        let config = device.configuration
        let period = config.periodFrames
        let total = (clicks.last ?? 0) + maxLag + 2 * period
        let cycles = (total + period - 1) / period
        let client = ClickTrainClient(clicks: clicks, cycles: cycles, periodFrames: period, amplitude: amplitude,
                                      channel: channel, playbackChannels: config.playbackChannels)
        do { try device.start(client: client, realtimePriority: true) } catch { return .failed(error.code == 0 ? -5 : error.code) }
        while !client.finished.load(ordering: .acquiring) { sleepNanoseconds(2_000_000) }
        device.stop()
        if client.failureCode != 0 { return .failed(client.failureCode) }
        if client.sawXrun { return .xrun }
        return .recorded(Array(UnsafeBufferPointer(start: client.input, count: cycles * period)))
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
        var rival: Float = 0
        for (lag, s) in scores.enumerated() where abs(lag - best) > 64 { rival = max(rival, s) }
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

/// The calibration's device client: each cycle keeps the captured channel and writes the
/// clicks due in that period on every output. Everything is allocated before the device starts.
private final class ClickTrainClient: AudioDeviceClient, @unchecked Sendable {
    let clicks: [Int]
    let cycles: Int
    let periodFrames: Int
    let amplitude: Float
    let channel: Int
    let playbackChannels: Int
    /// Every captured frame of the chosen channel, in order.
    let input: UnsafeMutablePointer<Float>
    private var cycle = 0
    private var nextClick = 0
    /// Set (releasing) when the run is over; the control thread then reads the rest.
    let finished = Atomic<Bool>(false)
    var sawXrun = false
    var failureCode: Int32 = 0

    init(clicks: [Int], cycles: Int, periodFrames: Int, amplitude: Float, channel: Int, playbackChannels: Int) {
        self.clicks = clicks
        self.cycles = cycles
        self.periodFrames = periodFrames
        self.amplitude = amplitude
        self.channel = channel
        self.playbackChannels = playbackChannels
        input = .allocate(capacity: max(cycles * periodFrames, 1))
        input.initialize(repeating: 0, count: max(cycles * periodFrames, 1))
    }

    deinit { input.deallocate() }

    func audioThreadBegins(realtime: Bool) {}
    func beginCycle() -> Bool { true }
    func audioThreadEnds() { finished.store(true, ordering: .releasing) }

    /// Audio thread: no allocation, no locks.
    func renderCycle(input captured: UnsafePointer<UnsafeMutablePointer<Float>>, output: UnsafePointer<UnsafeMutablePointer<Float>>,
                     frameCount: Int) {
        for c in 0..<max(playbackChannels, 2) { output[c].update(repeating: 0, count: frameCount) }
        guard cycle < cycles, !finished.load(ordering: .relaxed) else { return }
        let first = cycle * periodFrames
        (input + first).update(from: captured[channel], count: min(frameCount, periodFrames))
        while nextClick < clicks.count && clicks[nextClick] < first + periodFrames {
            for c in 0..<playbackChannels { output[c][clicks[nextClick] - first] = amplitude }
            nextClick += 1
        }
        cycle += 1
        if cycle == cycles { finished.store(true, ordering: .releasing) }
    }

    /// Audio thread.
    func deviceDidXrun(lostFrames: Int64, skippingNow: Int64) {
        sawXrun = true
        finished.store(true, ordering: .releasing)
    }

    /// Audio thread: frames lost spoil the measurement as an xrun does.
    func deviceSkipped(frames: Int64) {
        sawXrun = true
        finished.store(true, ordering: .releasing)
    }

    /// Audio thread.
    func deviceDidFail(code: Int32) {
        failureCode = code
        finished.store(true, ordering: .releasing)
    }
}
