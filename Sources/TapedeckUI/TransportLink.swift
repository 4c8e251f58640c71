import TapedeckCore

/// What the transport is doing.
public enum TransportState: String, Sendable, Equatable {
    /// Not moving.
    case stopped
    /// Playing back.
    case playing
    /// Recording (and playing back the other tracks).
    case recording
}

/// How a speed change sounds.
public enum PlaybackMode: String, Sendable, Equatable, CaseIterable {
    /// Like tape: pitch follows speed.
    case varispeed
    /// Time-stretch: speed changes, pitch stays (plus the pitch shift in semitones).
    case stretch

    /// The other mode, for the mode key.
    public var next: PlaybackMode { self == .varispeed ? .stretch : .varispeed }
}

/// Level of one channel at one moment, in dBFS (−∞ for silence).
public struct ChannelLevel: Sendable, Equatable {
    /// Highest absolute sample since the previous snapshot.
    public var peakDecibels: Double
    /// Root-mean-square level over the same span.
    public var rmsDecibels: Double
    /// The engine's peak hold (−∞ when the link keeps none; the screen holds peaks itself too).
    public var holdDecibels: Double
    /// The engine's clip indicator: lit once a sample reached full scale, until
    /// ``TransportLink/resetClips()``.
    public var clipped: Bool

    /// Creates a level.
    public init(peakDecibels: Double, rmsDecibels: Double, holdDecibels: Double = -.infinity, clipped: Bool = false) {
        self.peakDecibels = peakDecibels
        self.rmsDecibels = rmsDecibels
        self.holdDecibels = holdDecibels
        self.clipped = clipped
    }

    /// Silence.
    public static let silent = ChannelLevel(peakDecibels: -.infinity, rmsDecibels: -.infinity)
}

/// Everything the screen shows about the engine, copied out in one go so a frame is drawn
/// from one consistent moment.
public struct TransportSnapshot: Sendable, Equatable {
    /// Stopped, playing or recording.
    public var state: TransportState
    /// Where the playhead is, in session frames.
    public var positionFrame: Int64
    /// `trackLevels[track][channel]`: meters, in the session's track order.
    public var trackLevels: [[ChannelLevel]]
    /// Over- and under-runs since the engine started.
    public var xrunCount: Int
    /// Share of each period the audio thread spent working, 0…1.
    public var dspLoad: Double
    /// Seconds of recording the disk holds at the armed tracks' channel count (nil: unknown).
    public var diskSecondsLeft: Double?
    /// The device in use, as the user would name it.
    public var deviceName: String
    /// True when there is no sound device: playback is silent, recording is impossible.
    public var isOffline: Bool
    /// The engine's last problem, for the message line (nil when none). A link may report a
    /// problem in one snapshot only, so the same failure twice is shown twice.
    public var lastError: String?
    /// Left and right of the mix sent to the device (empty when unknown, as offline).
    public var outputLevels: [ChannelLevel]
    /// Whether the link is listening for retroactive capture (an armed track, stopped).
    public var isListening = false
    /// News for the message line that is not a problem (the monitoring latency); shown once.
    public var notice: String?
    /// Left and right of the master bus after the master fader (empty when the link does
    /// not meter it; the screen then shows ``outputLevels``).
    public var masterLevels: [ChannelLevel] = []

    /// Creates a snapshot.
    public init(state: TransportState = .stopped, positionFrame: Int64 = 0, trackLevels: [[ChannelLevel]] = [],
                xrunCount: Int = 0, dspLoad: Double = 0, diskSecondsLeft: Double? = nil,
                deviceName: String = "", isOffline: Bool = true, lastError: String? = nil,
                outputLevels: [ChannelLevel] = []) {
        self.state = state
        self.positionFrame = positionFrame
        self.trackLevels = trackLevels
        self.xrunCount = xrunCount
        self.dspLoad = dspLoad
        self.diskSecondsLeft = diskSecondsLeft
        self.deviceName = deviceName
        self.isOffline = isOffline
        self.lastError = lastError
        self.outputLevels = outputLevels
    }
}

/// How a finished take goes onto its track.
public enum TakePlacement: Sendable, Equatable {
    /// Added over whatever is there.
    case plain
    /// Punched in: what lies under it is cut back, with crossfades this long at both edges.
    case punch(crossfadeFrames: Int64)
    /// Loop recording: the region and these later passes become the takes of one new take
    /// group, the last pass active.
    case loopPasses([Region])
}

/// A take the engine has finished and closed, ready to become a region.
public struct FinishedTake: Sendable, Equatable {
    /// The track it was recorded for (0-based, as the session was when recording started).
    public var trackIndex: Int
    /// That track's name then, to find it again if tracks moved meanwhile.
    public var trackName: String
    /// The region to add: file relative to the session folder, latency already compensated.
    public var region: Region
    /// The take's crash marker, to remove once a saved session holds the region; until then
    /// opening the session recovers the take onto its track.
    public var markerPath: String?
    /// How it goes onto the track.
    public var placement: TakePlacement
    /// The word the message line uses for it ("recorded", "kept").
    public var verb: String

    /// Creates a finished take.
    public init(trackIndex: Int, trackName: String, region: Region, markerPath: String?,
                placement: TakePlacement = .plain, verb: String = "recorded") {
        self.trackIndex = trackIndex
        self.trackName = trackName
        self.region = region
        self.markerPath = markerPath
        self.placement = placement
        self.verb = verb
    }
}

/// The screen's handle on an engine: the only way the UI drives audio.
///
/// Every method is called on the UI (main) thread only, and must return quickly: an
/// implementation queues commands to its audio thread and answers ``snapshot()`` from the
/// status it last published. The screen calls ``snapshot()`` about 30 times a second while
/// the transport moves, and a few times a second when idle.
///
/// ``OfflineTransport`` implements it without a device; the real-time engine gets an adapter.
public protocol TransportLink: AnyObject {
    /// The session changed (mute, solo, gain, regions, tracks): follow it. UI thread.
    func update(session: Session)
    /// Starts playback at `fromFrame`. UI thread.
    func play(fromFrame: Int64)
    /// Stops playback or recording; the playhead stays where it is. UI thread.
    func stop()
    /// Starts recording the armed tracks at `fromFrame`. Returns nil when recording started,
    /// otherwise why not, as one line for the message line. UI thread.
    func record(fromFrame: Int64) -> String?
    /// Moves the playhead, playing or not. UI thread.
    func locate(frame: Int64)
    /// Playback speed ratio (1 = as recorded). UI thread.
    func setSpeed(_ ratio: Double)
    /// Whether speed changes pitch (varispeed) or not (stretch). UI thread.
    func setMode(_ mode: PlaybackMode)
    /// Pitch shift in semitones, applied in stretch mode. UI thread.
    func setPitch(semitones: Double)
    /// The loop range and whether playback cycles over it. UI thread.
    func setLoop(_ range: FrameRange?, enabled: Bool)
    /// The punch range and whether recording is limited to it. UI thread.
    func setPunch(_ range: FrameRange?, enabled: Bool)
    /// The engine's state now. UI thread; cheap (a copy, no waiting on the audio thread).
    func snapshot() -> TransportSnapshot
    /// Devices the user may choose from, by name. UI thread.
    func devices() -> [String]
    /// Switches to the device called `name`; nil on success, else why not. UI thread.
    func selectDevice(_ name: String) -> String?
    /// Takes finished since the last call (by ``stop()``, a punch end or a failure), each
    /// handed over once; the screen puts them on their tracks. UI thread.
    func collectFinishedTakes() -> [FinishedTake]
    /// The metronome: off, while recording (the count-in included), or always. UI thread.
    func setClick(_ mode: ClickMode)
    /// Bars of count-in before the record point (0: none). UI thread.
    func setCountIn(bars: Int)
    /// Retroactive capture: keeps the last seconds heard while listening as a take, handed
    /// over through ``collectFinishedTakes()``. Nil when kept, else why not. UI thread.
    func keepRetro() -> String?
    /// Puts out every clip indicator the link keeps (``ChannelLevel/clipped``). UI thread.
    func resetClips()
}

extension TransportLink {
    /// No takes: for links that cannot record for real.
    public func collectFinishedTakes() -> [FinishedTake] { [] }
    /// No click: for links without sound.
    public func setClick(_ mode: ClickMode) {}
    /// No count-in: for links that cannot record for real.
    public func setCountIn(bars: Int) {}
    /// Nothing to keep without a device.
    public func keepRetro() -> String? { "retroactive capture needs an audio device (the screen listens while a track is armed)" }
    /// No clip indicators: for links whose meters keep none.
    public func resetClips() {}
}

/// When the metronome sounds.
public enum ClickMode: String, Sendable, Equatable, CaseIterable {
    /// Never (a count-in still clicks).
    case off
    /// While recording, the count-in included.
    case recording
    /// Whenever the transport moves.
    case always

    /// The next mode, for the click key.
    public var next: ClickMode {
        switch self {
        case .off: .recording
        case .recording: .always
        case .always: .off
        }
    }
}
