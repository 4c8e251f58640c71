import TapedeckIO
import TapedeckCore
import TapedeckDSP

/// A take to record: which device channels go into which file.
public struct TakeRequest: Sendable {
    /// The file to create.
    public var path: String
    /// WAV or FLAC.
    public var container: AudioContainer
    /// 16, 24 or 32f.
    public var encoding: SampleEncoding
    /// Device input channels to record, 1-based, in file order.
    public var deviceChannels: [Int]
    /// Where to build the take's peak file, if anywhere.
    public var peakPath: String?
    /// Stop after exactly this many frames (nil: until stopped).
    public var maxFrames: Int64?
    /// Written beside the take before its first frame; the caller removes it once the take is
    /// closed and placed.
    public var marker: TakeMarker?
    /// The input chain the take is recorded through (empty: none).
    public var inputChain = Chain()
    /// When set, the unprocessed input is kept too, in this file ("both": wet take + dry copy).
    public var dryPath: String?
    /// Record the input unprocessed; the input chain is then heard (monitored) only.
    public var recordsDry = false
    /// What the take says about itself (session, track, position, speed, device, chain),
    /// written into the file (BWF/iXML for WAV, Vorbis comments for FLAC).
    public var metadata: TakeMetadata?
    /// When set, only input that belongs to this timeline range goes into the take — punch
    /// in/out, or a count-in's record point. Input is matched to the timeline after latency
    /// compensation, so the take's first frame is exactly the range's first frame.
    public var gate: FrameRange?

    /// Creates a take request.
    public init(path: String, container: AudioContainer, encoding: SampleEncoding, deviceChannels: [Int],
                peakPath: String? = nil, maxFrames: Int64? = nil, marker: TakeMarker? = nil) {
        self.path = path
        self.container = container
        self.encoding = encoding
        self.deviceChannels = deviceChannels
        self.peakPath = peakPath
        self.maxFrames = maxFrames
        self.marker = marker
    }
}

/// Tuning knobs; the defaults suit real devices.
public struct EngineOptions: Sendable {
    /// Seconds of audio the capture ring holds while the disk catches up.
    public var captureRingSeconds: Double = 4
    /// Seconds of audio each playback ring holds ahead of the audio thread.
    public var playbackRingSeconds: Double = 1
    /// How often the take's header is rewritten (crash safety promises ≤ 1 s of loss).
    public var headerIntervalNanoseconds: Int64 = 500_000_000
    /// How long the audio thread waits for a full or empty ring before giving up on it.
    /// On a paced device the wait turns into an xrun, which keeps the timeline aligned.
    public var ringWaitNanoseconds: Int64 = 2_000_000_000
    /// Ask for SCHED_FIFO for the audio thread.
    public var realtimePriority: Bool = true
    /// Test hook: stall the audio thread once, for `stallMilliseconds`, when the take (or the
    /// transport) passes this frame. Used to provoke a real xrun on a paced device.
    public var stallAtFrame: Int64?
    /// Test hook: length of the stall.
    public var stallMilliseconds: Int = 0
    /// Frames of round trip this device has beyond what ALSA reports, measured by
    /// `tapedeck calibrate` (``LatencyOffsets``); added to every overdub's compensation.
    public var latencyOffsetFrames: Int64 = 0
    /// Retroactive capture: keep the last this-many seconds of these device input channels in
    /// memory (``Engine/retroBuffer``), with or without a take.
    public var retro: (seconds: Double, deviceChannels: [Int])?
    /// The metronome, if one plays.
    public var click: ClickSettings?
    /// Mix the take's input (after its input chain) into the output: input monitoring.
    public var monitorInput = false
    /// Where the transport starts when nothing plays (a count-in starts before the record
    /// point); with a playback plan the plan's start wins.
    public var transportStartFrame: Int64 = 0
    /// Test hook: told on the audio thread when its loop begins and ends (a test counts the
    /// thread's allocations between the two).
    public var audioThreadProbe: (any AudioThreadProbe)?

    /// Default options.
    public init() {}
}

/// The metronome: how loud, when, and where it is heard. It is only ever played, never
/// recorded (a take holds the input alone).
public struct ClickSettings: Sendable, Equatable {
    /// Level of an ordinary beat in dBFS (the downbeat is accented above it).
    public var levelDecibels: Double
    /// Click only while recording (the count-in included), not while just playing.
    public var recordingOnly: Bool
    /// Device output channels that carry the click, 1-based (its own pair when the device
    /// has one, e.g. [3, 4]; default the main pair).
    public var outputChannels: [Int]
    /// The click stops at this timeline frame (a count-in that should not go on into the take).
    public var untilFrame: Int64?

    /// Creates click settings.
    public init(levelDecibels: Double = -6, recordingOnly: Bool = false, outputChannels: [Int] = [1, 2]) {
        self.levelDecibels = levelDecibels
        self.recordingOnly = recordingOnly
        self.outputChannels = outputChannels
    }
}

/// Watches the audio thread from the inside; for tests.
public protocol AudioThreadProbe: AnyObject, Sendable {
    /// Called on the audio thread just before its loop's first period.
    func audioThreadBegins()
    /// Called on the audio thread just after its loop's last period.
    func audioThreadEnds()
}

/// Commands into the audio thread.
public enum EngineCommand: Sendable, BitwiseCopyable {
    /// Finish at the end of the current period.
    case stop
    /// New bus gains (track fader × pan law) for a track.
    case setTrackGains(track: Int32, left: Float, right: Float)
    /// New transport speed, mode and pitch shift. Rubber Band has no lock, so ratio changes
    /// reach it only this way, on the thread that calls its process.
    case setTimePitch(speed: Double, varispeed: Bool, pitchSemitones: Double)
}

/// What a finished run did.
public struct EngineSummary: Sendable {
    /// Frames in the take (0 without one).
    public var takeFrames: Int64
    /// Every xrun, in order.
    public var xruns: [XrunEvent]
    /// Frames at the take's start that precede its timeline position (overdub round trip).
    public var latencyFrames: Int64
    /// The failure that stopped the run, if one did.
    public var error: String?
    /// Final transport position.
    public var positionFrame: Int64
}
