import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Tuning knobs; the defaults suit real devices.
public struct EngineOptions: Sendable {
    /// Seconds of audio each take's capture ring holds while the disk catches up.
    public var captureRingSeconds: Double = 4
    /// Seconds of audio each playback ring holds ahead of the audio thread.
    public var playbackRingSeconds: Double = 1
    /// Rubber Band's engine for live speed and pitch changes: R2 "faster" (`.fast`, the
    /// default) or R3 "finer" (`.best`, `play --quality best`), one stereo stretcher on the mix.
    public var liveStretchQuality: StretchQuality = .fast
    /// Frames the disk thread renders at once.
    public var diskBlockFrames = 4096
    /// How often a take's header is rewritten (crash safety promises ≤ 1 s of loss).
    public var headerIntervalNanoseconds: Int64 = 500_000_000
    /// Ask for SCHED_FIFO for the audio thread.
    public var realtimePriority = true
    /// Lock the process's memory (mlockall) so the audio thread never waits for a page to
    /// come back from swap. Quietly skipped where not allowed.
    public var lockMemory = false
    /// Frames ahead of the playhead at which a changed track's new material takes over from
    /// the old while playing (time for the disk to read it).
    public var handoverFrames: Int64 = 8192
    /// How long, in device frames, a start or locate waits for every track's disk stream
    /// before it rolls anyway (late tracks are silent until they catch up, and counted).
    /// Nil: a second.
    public var holdLimitFrames: Int64?
    /// The audio thread waits for the disk instead of playing silence or dropping input, and
    /// starts wait as long as it takes. Always so on a device with no clock
    /// (``DeviceConfiguration/isPaced`` false: file taps, the unpaced offline clock), where
    /// waiting costs nothing; never on a real device, where waiting is a dropout.
    public var waitsForDisk = false
    /// Nodes are told they render offline (``NodeFormat/isRealtime`` false), as an export
    /// tells them: an LV2 plugin's worker then runs in line, so a convolver has its impulse
    /// response from the first frame instead of some periods in. Only for freewheeling
    /// (``FreewheelDevice``), where nothing waits for a period.
    public var rendersOffline = false
    /// The thread driving a freewheeling device fills every playback ring between periods
    /// (``Engine/fillRingsInline()``) and no disk thread runs: at 1× a period reads exactly
    /// its own frames, so it never waits. (At another speed the stretcher pulls in bursts no
    /// period foretells: there the disk thread reads, and the render waits for it.)
    public var readsDiskInline = false
    /// Speed changes only ever vary the speed like tape (an export in varispeed mode): the
    /// mix's time-pitch builds no stretcher.
    public var varispeedOnly = false
    /// Threads sharing each period's strips, the device's own included (`--threads`; one per
    /// core by default): strips whose inputs are ready run in parallel, and the output is the
    /// same bits as on one thread. 1 renders on the device's thread alone. The workers run at
    /// SCHED_FIFO just below the device's thread (``realtimePriority``), and for an export
    /// (``rendersOffline``) they also read the disk between periods.
    public var renderThreads = RenderThreads.defaultCount
    /// How far the workers render playback ahead of the device period, at most (a few
    /// periods; 0: never). Only strips that play from disk alone (not armed, monitored,
    /// fed by an input or playing MIDI): their chains run early, their faders, pans, mutes,
    /// solos and sends at the period. A chain parameter is heard within this time. Not
    /// with one thread, nor freewheeling.
    public var renderAheadMilliseconds = 20.0
    /// Frames of round trip this device has beyond what ALSA reports, measured by
    /// `tapedeck calibrate` (``LatencyOffsets``); added to every overdub's compensation.
    public var latencyOffsetFrames: Int64 = 0
    /// Test hook: stall the audio thread once, for `stallMilliseconds`, when the transport
    /// passes this timeline frame while rolling (provokes a real xrun on a paced device).
    public var stallAtFrame: Int64?
    /// Test hook: length of that stall.
    public var stallMilliseconds = 0
    /// Test hook: the capture writer sleeps this long once, when a take reaches
    /// ``writerStallAtFrame`` frames (a disk that stops answering for a while).
    public var writerStallMilliseconds = 0
    /// Test hook: the take frame at which the writer stalls.
    public var writerStallAtFrame: Int64 = 0
    /// Test hook: told on the audio thread when its first cycle begins and after its last.
    public var audioThreadProbe: (any AudioThreadProbe)?
    /// Benchmark hook: each period's wall and CPU time, kept while it is armed.
    public var periodTimes: PeriodTimes?

    /// Default options.
    public init() {}
}

/// Watches the audio thread from the inside; for tests.
public protocol AudioThreadProbe: AnyObject, Sendable {
    /// Called on the audio thread just before its first cycle.
    func audioThreadBegins()
    /// Called on the audio thread just after its last cycle.
    func audioThreadEnds()
    /// Called on each worker thread (``EngineOptions/renderThreads``) as it starts, before
    /// its first period.
    func workerThreadBegins()
    /// Called on each worker thread just before it ends.
    func workerThreadEnds()
}

extension AudioThreadProbe {
    /// Nothing, unless the probe watches the workers too.
    public func workerThreadBegins() {}
    /// Nothing, unless the probe watches the workers too.
    public func workerThreadEnds() {}
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

/// Transport commands into the audio thread (stop is not one: it is an atomic, so it is
/// never lost). Control thread → audio thread, in order.
enum EngineCommand: BitwiseCopyable {
    /// Start rolling from where the playhead is (after the disk is ready).
    case play(serial: UInt64)
    /// Move the playhead (rolling or not).
    case locate(frame: Int64, serial: UInt64)
    /// Roll from `from` on the engine's own clock until `join`, where the shared transport
    /// waits and then rolls on with the engine (a count-in below JACK's frame 0).
    case preRoll(from: Int64, join: Int64, serial: UInt64)
    /// The loop: wrap from `end` to `start` when `loops`.
    case route(start: Int64, end: Int64, loops: Bool, serial: UInt64)
    /// Stop rolling at this frame on the way (not when looping). Int64.max: never.
    case endFrame(Int64, serial: UInt64)
    /// Speed, mode and pitch shift. Rubber Band has no lock, so ratio changes reach it only
    /// this way, on the thread that calls its process.
    case timePitch(speed: Double, varispeed: Bool, pitchSemitones: Double, serial: UInt64)
    /// The metronome: on (while rolling), only while takes run, until a frame; over the
    /// count-in's frames `countInFrom..<countInTo` (empty: none) it counts at the tempo and
    /// meter where the count-in ends.
    case click(on: Bool, recordingOnly: Bool, untilFrame: Int64, countInFrom: Int64, countInTo: Int64, serial: UInt64)
    /// Begin recording the takes of a ``TakeSet`` (an unretained pointer the control thread
    /// keeps alive).
    case startTakes(UnsafeMutableRawPointer, serial: UInt64)
    /// Stop recording (the transport may roll on).
    case endTakes(serial: UInt64)

    /// The command in words, for a refusal.
    var name: String {
        switch self {
        case .play: "play"
        case .locate: "a locate"
        case .preRoll: "a pre-roll"
        case .route: "a loop change"
        case .endFrame: "an end point"
        case .timePitch: "a speed or pitch change"
        case .click: "a click change"
        case .startTakes: "the start of recording"
        case .endTakes: "the end of recording"
        }
    }

    var serial: UInt64 {
        switch self {
        case .play(let s), .locate(_, let s), .preRoll(_, _, let s), .route(_, _, _, let s), .endFrame(_, let s),
             .timePitch(_, _, _, let s), .click(_, _, _, _, _, let s), .startTakes(_, let s), .endTakes(let s): s
        }
    }
}

/// Something the audio thread noticed, with where it happened.
public struct EngineEvent: Sendable, Equatable, BitwiseCopyable {
    /// What happened.
    public enum Kind: Int, Sendable, BitwiseCopyable {
        /// The device over- or under-ran: `frames` of device time passed unheard.
        case deviceXrun = 0
        /// A track's disk stream was late: `frames` of it played as silence.
        case playbackUnderrun = 1
        /// A take's capture ring was full: `frames` of input were lost and are silence in
        /// the take (which keeps its length and alignment).
        case captureDropped = 2
        /// The shared transport (JACK's) started; the engine rolls from `frame` with it.
        case hostStarted = 3
        /// The shared transport stopped; the engine stopped at `frame` with it.
        case hostStopped = 4
        /// The shared transport moved; the engine's playhead moved to `frame` with it.
        case hostLocated = 5
        /// A take's latency changed while it recorded (a port patched, a buffer size changed):
        /// from take frame `frame` its input is read `frames` after what was played
        /// (``EngineEvent/previousFrames`` before), so it stays where it was played.
        case takeLatencyChanged = 6
    }

    /// What happened.
    public var kind: Kind
    /// Timeline frame (device xruns and underruns) or take frame (dropped input) where it happened.
    public var frame: Int64
    /// How many frames it cost.
    public var frames: Int64
    /// The track (0-based), or -1 for the device.
    public var track: Int
    /// For the shared transport's events: another program did it (false: Tapedeck asked).
    public var external: Bool
    /// For a latency change: the latency before it.
    public var previousFrames: Int64
    /// For a device xrun: the transport was not rolling when it was told, so the playhead only
    /// waited at `frame`; it cost no timeline frame and lies in no take (a take that begins
    /// at that frame later lost nothing to it).
    public var whileStopped: Bool

    /// Creates an event.
    public init(kind: Kind, frame: Int64, frames: Int64, track: Int = -1, external: Bool = false, previousFrames: Int64 = 0,
                whileStopped: Bool = false) {
        self.kind = kind
        self.frame = frame
        self.frames = frames
        self.track = track
        self.external = external
        self.previousFrames = previousFrames
        self.whileStopped = whileStopped
    }
}

/// What the transport on the audio thread is doing.
public enum EngineTransportState: Int, Sendable {
    /// Not rolling (the device runs: inputs are metered and monitored).
    case stopped = 0
    /// Asked to roll; waiting for every track's disk stream to be ready.
    case starting = 1
    /// Rolling.
    case rolling = 2
}

/// A snapshot of the engine for the transport and the front-ends. Control thread.
public struct EngineStatus: Sendable {
    /// Stopped, starting or rolling.
    public var transport: EngineTransportState
    /// Whether the device still runs (false after it failed or the engine closed).
    public var deviceRunning: Bool
    /// Playhead on the timeline, in frames.
    public var positionFrame: Int64
    /// Device frames since the engine started.
    public var deviceFrame: Int64
    /// Device xruns so far.
    public var xrunCount: Int
    /// Playback frames played as silence because a disk stream was late, so far.
    public var underrunFrames: Int64
    /// Input frames lost because a take's capture ring was full, so far.
    public var droppedFrames: Int64
    /// DSP load: the busiest recent period's processing time ÷ its duration.
    public var dspLoad: Double
    /// The fullest any take's capture ring has been, in frames.
    public var captureRingHighWaterFrames: Int
    /// The emptiest playback ring now, 0…1.
    public var playbackRingFill: Double
    /// Free bytes on the disk holding the takes (-1 when unknown).
    public var diskFreeBytes: Int64
    /// While takes are written: seconds of recording left on the disk that fills first, at
    /// the bytes a second of every take still written there (nil when nothing is written).
    public var diskSecondsLeft: Double? = nil
    /// Whether the audio thread got SCHED_FIFO (nil until it started).
    public var realtime: Bool?
    /// Whether the process's memory is locked.
    public var memoryLocked: Bool
    /// The device's failure, or a disk problem, in words.
    public var lastError: String?
    /// NaN and infinite samples turned into silence so far: on the mix bus, and at the
    /// outputs of the chains now playing (a file or an effect that made them).
    public var nonFiniteSamples: Int64 = 0
}
