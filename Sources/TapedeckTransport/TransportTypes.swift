import TapedeckCore
import TapedeckEngine

/// What the transport is doing, as a front-end shows it.
public enum TransportState: String, Sendable, Equatable {
    /// Not moving.
    case stopped
    /// Playing back.
    case playing
    /// Rolling towards a recording's record point through a count-in.
    case countIn
    /// Rolling towards a punch-in point (frames are not kept yet).
    case preRoll
    /// Recording: frames are being kept (and the other tracks play back).
    case recording

    /// Whether the transport rolls.
    public var isMoving: Bool { self != .stopped }
    /// Whether a recording pass runs (kept frames or not yet).
    public var isRecordingPass: Bool { self == .countIn || self == .preRoll || self == .recording }
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

/// Level of one channel at one moment, in dBFS (−∞ for silence).
public struct ChannelLevel: Sendable, Equatable {
    /// Highest absolute sample over the last meter window.
    public var peakDecibels: Double
    /// Root-mean-square level over the same window.
    public var rmsDecibels: Double
    /// The peak held for a couple of seconds (nothing between two snapshots is missed).
    public var holdDecibels: Double
    /// A sample reached 0 dBFS since the clip lights were last reset.
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

/// Everything a front-end shows about the transport, copied out in one go so a frame is drawn
/// from one consistent moment.
public struct TransportSnapshot: Sendable, Equatable {
    /// Stopped, playing, counting in, pre-rolling or recording.
    public var state: TransportState
    /// Where the playhead is, in session frames.
    public var positionFrame: Int64
    /// `trackLevels[track][channel]`: an armed track's input (so a level can be set before a
    /// take), every other track post-fader; in the session's track order.
    public var trackLevels: [[ChannelLevel]]
    /// Over- and under-runs of the device since it opened.
    public var xrunCount: Int
    /// Share of each period the audio thread spent working, 0…1.
    public var dspLoad: Double
    /// Seconds of recording the disk holds: while recording, at the bytes a second of the takes
    /// being written (the disk that fills first), else at the armed tracks' rate (nil: unknown).
    public var diskSecondsLeft: Double?
    /// Free bytes on the disk holding the session (nil: unknown).
    public var diskFreeBytes: Int64?
    /// The device in use, as the user would name it.
    public var deviceName: String
    /// True when there is no sound device: playback is silent, recording is impossible.
    public var isOffline: Bool
    /// A problem for the message line (nil when none); each one is reported once.
    public var lastError: String?
    /// The master bus, left and right, after the master fader.
    public var outputLevels: [ChannelLevel]
    /// Whether the inputs are kept for retroactive capture (an armed track, stopped).
    public var isListening = false
    /// Whether a speed or pitch change waits for its processors (built in the background;
    /// the transport goes on at 1× meanwhile).
    public var timePitchPending = false
    /// A graph for an edit is being built on a worker (files opened, regions stretched); the
    /// old one plays until it is in.
    public var graphPending = false
    /// How far that build's render of a stretched region is, 0…1 (nil: none runs).
    public var graphStretchProgress: Double?
    /// News for the message line that is not a problem; shown once.
    public var notice: String?
    /// EBU R128 loudness of the master bus while rolling, since the meters were last reset
    /// (nil: not measured).
    public var loudness: LoudnessReading?
    /// Left and right of the master bus after the master fader (empty when not metered; the
    /// screen then shows ``outputLevels``).
    public var masterLevels: [ChannelLevel] = []
    /// Playback frames that came late from disk (silence) since the device opened.
    public var underrunFrames: Int64 = 0
    /// Input frames lost to a full capture ring since the device opened.
    public var droppedFrames: Int64 = 0
    /// The device stopped for good (unplugged, its server gone): the next play or record
    /// opens it again.
    public var deviceStopped = false
    /// Per strip (session order), frames its output lags the timeline through delay
    /// compensation: a bus behind a latent chain, or fed by one (empty: not known).
    public var stripOutputDelayFrames: [Int] = []
    /// Frames the output (master and device outputs) lags the timeline: the slowest path's
    /// compensation plus the master chain.
    public var outputLatencyFrames = 0
    /// Outputs the open device plays (a strip routed to `out:N` beyond them is not heard).
    public var outputChannelCount = 2
    /// The round trip an overdub of input 1 is placed with now (``Engine/takeLatency(captureChannels:playing:)``),
    /// nil when the device cannot record.
    public var roundTrip: TakeLatency?

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

extension TransportSnapshot {
    /// ``lastError`` when it is not `before` (the line of a problem that came since), else nil.
    public func newError(since before: String?) -> String? {
        guard let lastError, lastError != before else { return nil }
        return lastError
    }
}

/// How a finished take goes onto its track.
public enum TakePlacement: Sendable, Equatable {
    /// Added over whatever is there.
    case plain
    /// Punched in: what lies under it is cut back, with crossfades this long at both edges.
    case punch(crossfadeFrames: Int64)
    /// Loop recording: the region and these later passes become the takes of one new take
    /// group, the last complete pass active (a pass cut short by the stop is kept after it).
    case loopPasses([Region])
}

/// A take the transport has finished and closed, ready to become a region.
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
    /// Timeline markers where the take lost input (`xrun: 512 frames lost`, `dropped 512`),
    /// of the lost-input kind, added with it.
    public var markers: [Marker] = []
    /// The session's time-of-day origin this take implies (it was stamped with the wall
    /// clock): set when placed on a session that has none.
    public var timeOfDayOrigin: Int64?

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

    /// How many takes it becomes (loop passes each count).
    public var passCount: Int {
        if case .loopPasses(let more) = placement { return 1 + more.count }
        return 1
    }
}

extension Session {
    /// The track `take` belongs to now: its index if the name still matches there, else the
    /// track of that name; nil when it is gone.
    public func trackIndex(for take: FinishedTake) -> Int? {
        // A bus never takes a take, even one that came to bear the track's name meanwhile.
        if tracks.indices.contains(take.trackIndex) && tracks[take.trackIndex].name == take.trackName && !tracks[take.trackIndex].isBus {
            return take.trackIndex
        }
        return tracks.firstIndex { $0.name == take.trackName && !$0.isBus }
    }

    /// Puts `take` on track `track` as its placement says: added, punched in with
    /// crossfades, or as the takes of one new group (the last complete pass plays).
    public mutating func place(_ take: FinishedTake, onTrack track: Int) {
        guard tracks.indices.contains(track) else { return }
        if timeOfDayOrigin == nil, let origin = take.timeOfDayOrigin,
           origin >= 0, origin < TimeOfDay.framesPerDay(sampleRate: sampleRate) {
            timeOfDayOrigin = origin
        }
        for m in take.markers where markers.count < SessionLimits.maximumMarkers
            && !markers.contains(where: { $0.frame == m.frame && $0.name == m.name }) {
            _ = try? addMarker(m.name, atFrame: m.frame, kind: m.kind)
        }
        switch take.placement {
        case .plain:
            tracks[track].regions.append(take.region)
        case .punch(let crossfade):
            punchIn(track: track, take: take.region, crossfadeFrames: crossfade)
        case .loopPasses(let more):
            _ = try? addLoopPasses(track: track, passes: [take.region] + more)
        }
    }
}
