/// The session model: everything `session.json` holds. Pure values, no I/O.
///
/// Positions and lengths are `Int64` frames at `sampleRate`; seconds and bars|beats are views.

/// A time signature such as 4/4 or 6/8.
public struct TimeSignature: Codable, Equatable, Sendable, CustomStringConvertible {
    /// Beats in one bar.
    public var beatsPerBar: Int
    /// The note value of one beat (4 = quarter, 8 = eighth).
    public var beatUnit: Int

    /// Creates a time signature.
    public init(beatsPerBar: Int, beatUnit: Int) {
        self.beatsPerBar = beatsPerBar
        self.beatUnit = beatUnit
    }

    public var description: String { "\(beatsPerBar)/\(beatUnit)" }
}

/// A half-open range of frames `[startFrame, endFrame)`.
public struct FrameRange: Codable, Equatable, Sendable {
    /// First frame inside the range.
    public var startFrame: Int64
    /// First frame after the range.
    public var endFrame: Int64

    /// Creates a range; `endFrame` must not be before `startFrame`.
    public init(startFrame: Int64, endFrame: Int64) {
        self.startFrame = startFrame
        self.endFrame = endFrame
    }

    /// Length of the range in frames.
    public var frameCount: Int64 { endFrame - startFrame }
}

/// A named point on the timeline.
public struct Marker: Codable, Equatable, Sendable {
    /// What a marker marks.
    public enum Kind: String, Codable, Sendable {
        /// A place the user named: exported as a cue point and a chapter.
        case user
        /// Where a take lost input (a device xrun, frames a slow disk dropped), added by the
        /// recorder and named with what was lost: shown and listed, kept in the take's own
        /// cues, but exported only when asked (`export --markers all`).
        case lostInput = "lost-input"
    }

    /// What the user called it.
    public var name: String
    /// Where it is.
    public var frame: Int64
    /// What it marks.
    public var kind: Kind

    /// Creates a marker.
    public init(name: String, frame: Int64, kind: Kind = .user) {
        self.name = name
        self.frame = frame
        self.kind = kind
    }

    private enum CodingKeys: String, CodingKey { case name, frame, kind }

    /// Reads a marker; one saved before kinds existed is a user marker.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        frame = try c.decode(Int64.self, forKey: .frame)
        kind = try c.decodeIfPresent(Kind.self, forKey: .kind) ?? .user
    }

    /// Writes a marker; a user marker's kind is left out, as older sessions have it.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(frame, forKey: .frame)
        if kind != .user { try c.encode(kind, forKey: .kind) }
    }

    /// Whether it marks lost input.
    public var isLostInput: Bool { kind == .lostInput }
}

/// A piece of an audio file placed on a track's timeline.
public struct Region: Codable, Equatable, Sendable {
    /// The region's name for the command line (`#12`): unique in the session, given when the
    /// region first appears and kept through every edit of it, whatever splits, inserts or
    /// deletes change the numbering around it (see ``Session/identifyRegions(keeping:)``).
    /// Nil only until the session is next edited, saved or loaded.
    public var id: Int?
    /// The audio file, relative to the session folder (usually `audio/NAME.wav`).
    public var file: String
    /// Where the region starts on the timeline.
    public var timelineStartFrame: Int64
    /// Where in the file the region's audio starts.
    public var sourceOffsetFrame: Int64
    /// How long the region lasts on the timeline.
    public var lengthFrames: Int64
    /// Region gain in dB, applied before the track's gain.
    public var gainDecibels: Double
    /// Linear fade-in length at the region's start.
    public var fadeInFrames: Int64
    /// Linear fade-out length at the region's end.
    public var fadeOutFrames: Int64
    /// Playback rate of the source: 1 plays as recorded, 0.5 lasts twice as long.
    public var rate: Double
    /// The take group (a stack of takes over one range, see ``Track/activeTakes``) this
    /// region is a take of; nil for an ordinary region, which always plays.
    public var takeGroup: Int?
    /// The take's number inside ``takeGroup`` (1, 2, 3… in recording order).
    public var takeNumber: Int?
    /// The transport speed the take was recorded at, when it was not 1×; nil for 1× and for
    /// imported audio.
    public var recordedSpeed: Double?
    /// True for a MIDI region: `file` is a Standard MIDI File (`midi/NAME.mid`) whose frame 0
    /// is the source's start, at the session rate (see ``MIDISequence``). Nil for audio.
    public var midi: Bool?

    /// Creates a region at unity gain, with no fades, at rate 1.
    public init(file: String, timelineStartFrame: Int64, sourceOffsetFrame: Int64 = 0,
                lengthFrames: Int64, gainDecibels: Double = 0, fadeInFrames: Int64 = 0,
                fadeOutFrames: Int64 = 0, rate: Double = 1, takeGroup: Int? = nil, takeNumber: Int? = nil,
                recordedSpeed: Double? = nil, isMIDI: Bool = false) {
        self.midi = isMIDI ? true : nil
        self.takeGroup = takeGroup
        self.takeNumber = takeNumber
        self.recordedSpeed = recordedSpeed
        self.file = file
        self.timelineStartFrame = timelineStartFrame
        self.sourceOffsetFrame = sourceOffsetFrame
        self.lengthFrames = lengthFrames
        self.gainDecibels = gainDecibels
        self.fadeInFrames = fadeInFrames
        self.fadeOutFrames = fadeOutFrames
        self.rate = rate
    }

    /// First timeline frame after the region.
    public var timelineEndFrame: Int64 { timelineStartFrame + lengthFrames }

    /// Whether the region holds MIDI (a Standard MIDI File) rather than audio.
    public var isMIDI: Bool { midi == true }
}

/// A track rendered to audio (frozen): its instrument and chain no longer run, the file plays
/// in their place until the track is unfrozen.
public struct FrozenAudio: Codable, Equatable, Sendable {
    /// The render, relative to the session folder (`audio/freeze-NAME.wav`), from timeline 0.
    public var file: String
    /// Frames it holds.
    public var lengthFrames: Int64

    /// Creates a freeze record.
    public init(file: String, lengthFrames: Int64) {
        self.file = file
        self.lengthFrames = lengthFrames
    }

    /// The region the render plays as: the whole file from timeline frame 0.
    public var region: Region { Region(file: file, timelineStartFrame: 0, lengthFrames: lengthFrames) }
}

/// One track: its input, its settings and its regions.
public struct Track: Codable, Equatable, Sendable {
    /// Display name.
    public var name: String
    /// Device input channels this track records from, 1-based (`[1, 2]` is a stereo pair).
    public var inputChannels: [Int]
    /// Whether the next recording writes to this track.
    public var armed: Bool
    /// Silenced in playback and export.
    public var mute: Bool
    /// When any track is soloed only soloed tracks are heard.
    public var solo: Bool
    /// Track fader in dB (``Fader/silentDecibels`` is the fader's −∞ stop).
    public var gainDecibels: Double
    /// -1 hard left, 0 centre, +1 hard right.
    public var pan: Double
    /// Effect chain applied while recording, in chain syntax.
    public var inputChain: String
    /// Effect chain applied in playback, in chain syntax.
    public var playbackChain: String
    /// The track's regions, bottom layer first: where regions overlap, the later one plays
    /// over the earlier (see ``Session/layerCrossfadeSeconds``). New takes, imports and pastes
    /// are appended, so they lie on top; raising a region moves it to the end.
    public var regions: [Region]
    /// What the track's output carries while armed: the live input, the disk, or each when
    /// it makes sense (``MonitoringMode/auto``).
    public var monitoring: MonitoringMode
    /// The chosen take of each take group on this track. A group missing here (or naming a
    /// take that no longer exists) plays its highest-numbered take, so every group always
    /// has exactly one active take.
    public var activeTakes: [TakeChoice]
    /// True for a MIDI track: armed, it hears and records MIDI (not audio) into its playback
    /// chain, whose first node is usually an instrument. Nil for an audio track.
    public var midi: Bool?
    /// The track's render when frozen (nil: not frozen): it plays in place of the regions and
    /// the playback chain.
    public var frozen: FrozenAudio?
    /// True for a bus: a strip with no regions and no input that other strips send or output
    /// to (see Routing.swift). Nil for a track.
    public var bus: Bool?
    /// A bus's channels, 1 or 2 (nil: stereo). Unused on tracks.
    public var busChannels: Int?
    /// Sends to buses, in the order they were added.
    public var sends: [Send] = []
    /// Where the strip's output goes (the master unless routed elsewhere).
    public var output: StripOutput = .master
    /// A bus that stays heard whatever is soloed (nil: not solo-safe).
    public var soloSafe: Bool?
    /// Automation lanes: the fader, pan, mute, sends and node parameters over time.
    public var automation: [AutomationLane] = []

    /// Creates an empty mono track at unity gain, centred.
    public init(name: String, inputChannels: [Int] = [1], armed: Bool = false, mute: Bool = false,
                solo: Bool = false, gainDecibels: Double = 0, pan: Double = 0,
                inputChain: String = "", playbackChain: String = "", regions: [Region] = [],
                monitoring: MonitoringMode = .auto, activeTakes: [TakeChoice] = [], isMIDI: Bool = false) {
        self.midi = isMIDI ? true : nil
        self.monitoring = monitoring
        self.activeTakes = activeTakes
        self.name = name
        self.inputChannels = inputChannels
        self.armed = armed
        self.mute = mute
        self.solo = solo
        self.gainDecibels = gainDecibels
        self.pan = pan
        self.inputChain = inputChain
        self.playbackChain = playbackChain
        self.regions = regions
    }

    /// First timeline frame after the track's last region (0 when it has none), or after its
    /// freeze render (which includes the instrument's release tail).
    public var endFrame: Int64 { max(regions.map(\.timelineEndFrame).max() ?? 0, frozen?.lengthFrames ?? 0) }

    /// Whether the track is a MIDI track (see ``midi``).
    public var isMIDI: Bool { midi == true }

    /// The audio regions that play (the active takes among them); MIDI regions never reach an
    /// audio file reader.
    public var activeAudioRegions: [Region] { activeRegions.filter { !$0.isMIDI } }

    /// The MIDI regions that play (the active takes among them).
    public var activeMIDIRegions: [Region] { activeRegions.filter(\.isMIDI) }
}

extension Track {
    private enum CodingKeys: String, CodingKey {
        case name, inputChannels, armed, mute, solo, gainDecibels, pan, inputChain, playbackChain, regions, monitoring,
             activeTakes, midi, frozen, bus, busChannels, sends, output, soloSafe, automation
    }

    /// Decodes a track; `monitoring` and `activeTakes` may be absent (sessions written
    /// before take lanes), and then are `auto` and none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        inputChannels = try c.decode([Int].self, forKey: .inputChannels)
        armed = try c.decode(Bool.self, forKey: .armed)
        mute = try c.decode(Bool.self, forKey: .mute)
        solo = try c.decode(Bool.self, forKey: .solo)
        gainDecibels = try c.decode(Double.self, forKey: .gainDecibels)
        pan = try c.decode(Double.self, forKey: .pan)
        inputChain = try c.decode(String.self, forKey: .inputChain)
        playbackChain = try c.decode(String.self, forKey: .playbackChain)
        regions = try c.decode([Region].self, forKey: .regions)
        // Read as text so a wrong word is named with the choices, not as a type mismatch.
        if let word = try c.decodeIfPresent(String.self, forKey: .monitoring) {
            guard let mode = MonitoringMode(rawValue: word) else {
                throw DecodingError.dataCorruptedError(forKey: .monitoring, in: c,
                                                       debugDescription: "'\(word)' is not off, input or auto")
            }
            monitoring = mode
        } else {
            monitoring = .auto
        }
        activeTakes = try c.decodeIfPresent([TakeChoice].self, forKey: .activeTakes) ?? []
        midi = try c.decodeIfPresent(Bool.self, forKey: .midi)
        frozen = try c.decodeIfPresent(FrozenAudio.self, forKey: .frozen)
        bus = try c.decodeIfPresent(Bool.self, forKey: .bus)
        busChannels = try c.decodeIfPresent(Int.self, forKey: .busChannels)
        sends = try c.decodeIfPresent([Send].self, forKey: .sends) ?? []
        output = try c.decodeIfPresent(StripOutput.self, forKey: .output) ?? .master
        soloSafe = try c.decodeIfPresent(Bool.self, forKey: .soloSafe)
        automation = try c.decodeIfPresent([AutomationLane].self, forKey: .automation) ?? []
    }

    /// Encodes a track; routing left at its defaults (no sends, the master) is not written,
    /// so a session without routing reads as it did before routing existed.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(inputChannels, forKey: .inputChannels)
        try c.encode(armed, forKey: .armed)
        try c.encode(mute, forKey: .mute)
        try c.encode(solo, forKey: .solo)
        try c.encode(gainDecibels, forKey: .gainDecibels)
        try c.encode(pan, forKey: .pan)
        try c.encode(inputChain, forKey: .inputChain)
        try c.encode(playbackChain, forKey: .playbackChain)
        try c.encode(regions, forKey: .regions)
        try c.encode(monitoring, forKey: .monitoring)
        try c.encode(activeTakes, forKey: .activeTakes)
        try c.encodeIfPresent(midi, forKey: .midi)
        try c.encodeIfPresent(frozen, forKey: .frozen)
        try c.encodeIfPresent(bus, forKey: .bus)
        try c.encodeIfPresent(busChannels, forKey: .busChannels)
        if !sends.isEmpty { try c.encode(sends, forKey: .sends) }
        if output != .master { try c.encode(output, forKey: .output) }
        try c.encodeIfPresent(soloSafe, forKey: .soloSafe)
        if !automation.isEmpty { try c.encode(automation, forKey: .automation) }
    }
}

/// Where an armed track's monitor signal comes from.
public enum MonitoringMode: String, Codable, Equatable, Sendable, CaseIterable {
    /// Never the input: only what is on disk plays (monitor through the desk instead).
    case off
    /// Always the live input (through the input chain), never the disk.
    case input
    /// The input while armed and stopped or recording (from a pass's count-in or pre-roll
    /// on), the disk while it plays without recording: Ardour's auto-input, a tape machine's.
    case auto
}

extension Session {
    /// Decodes a session; `masterGainDecibels` may be absent (sessions written before the
    /// master fader), and is then 0 dB.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schemaVersion = try c.decode(Int.self, forKey: .schemaVersion)
        sampleRate = try c.decode(Int.self, forKey: .sampleRate)
        tempoBPM = try c.decode(Double.self, forKey: .tempoBPM)
        timeSignature = try c.decode(TimeSignature.self, forKey: .timeSignature)
        markers = try c.decode([Marker].self, forKey: .markers)
        loopRange = try c.decodeIfPresent(FrameRange.self, forKey: .loopRange)
        loopEnabled = try c.decode(Bool.self, forKey: .loopEnabled)
        punchRange = try c.decodeIfPresent(FrameRange.self, forKey: .punchRange)
        punchEnabled = try c.decode(Bool.self, forKey: .punchEnabled)
        masterChain = try c.decode(String.self, forKey: .masterChain)
        masterGainDecibels = try c.decodeIfPresent(Double.self, forKey: .masterGainDecibels) ?? 0
        tracks = try c.decode([Track].self, forKey: .tracks)
        midiBindings = try c.decodeIfPresent([MIDIBinding].self, forKey: .midiBindings) ?? []
        tempoChanges = try c.decodeIfPresent([TempoChange].self, forKey: .tempoChanges) ?? []
        meterChanges = try c.decodeIfPresent([MeterChange].self, forKey: .meterChanges) ?? []
        timeOfDayOrigin = try c.decodeIfPresent(Int64.self, forKey: .timeOfDayOrigin)
        // Sessions written before the setting count at Ardour's default, 30 non-drop.
        timecodeRate = try c.decodeIfPresent(TimecodeRate.self, forKey: .timecodeRate) ?? .standard
    }

    private enum CodingKeys: String, CodingKey {
        case schemaVersion, sampleRate, tempoBPM, timeSignature, markers, loopRange, loopEnabled, punchRange, punchEnabled
        case masterChain, masterGainDecibels, tracks, midiBindings, tempoChanges, meterChanges, timeOfDayOrigin
        case timecodeRate
    }

    /// Encodes a session; a map without changes writes no change lists, so a session without
    /// them reads as it always did.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schemaVersion, forKey: .schemaVersion)
        try c.encode(sampleRate, forKey: .sampleRate)
        try c.encode(tempoBPM, forKey: .tempoBPM)
        try c.encode(timeSignature, forKey: .timeSignature)
        try c.encode(markers, forKey: .markers)
        try c.encodeIfPresent(loopRange, forKey: .loopRange)
        try c.encode(loopEnabled, forKey: .loopEnabled)
        try c.encodeIfPresent(punchRange, forKey: .punchRange)
        try c.encode(punchEnabled, forKey: .punchEnabled)
        try c.encode(masterChain, forKey: .masterChain)
        try c.encode(masterGainDecibels, forKey: .masterGainDecibels)
        try c.encode(tracks, forKey: .tracks)
        try c.encode(midiBindings, forKey: .midiBindings)
        if !tempoChanges.isEmpty { try c.encode(tempoChanges, forKey: .tempoChanges) }
        if !meterChanges.isEmpty { try c.encode(meterChanges, forKey: .meterChanges) }
        try c.encodeIfPresent(timeOfDayOrigin, forKey: .timeOfDayOrigin)
        // The default is not written, so a session that never chose a rate reads as before.
        if timecodeRate != .standard { try c.encode(timecodeRate, forKey: .timecodeRate) }
    }
}

/// The chosen take of one take group.
public struct TakeChoice: Codable, Equatable, Sendable {
    /// The group (``Region/takeGroup``).
    public var group: Int
    /// The take that plays (``Region/takeNumber``).
    public var take: Int

    /// Creates a choice.
    public init(group: Int, take: Int) {
        self.group = group
        self.take = take
    }
}

/// A whole session: the contents of `session.json`.
public struct Session: Codable, Equatable, Sendable {
    /// The schema version this build writes. Loading a newer one is refused.
    public static let currentSchemaVersion = 1

    /// Schema version of the file this came from.
    public var schemaVersion: Int
    /// Frames per second of every position in the session.
    public var sampleRate: Int
    /// Tempo in beats per minute.
    public var tempoBPM: Double
    /// Time signature.
    public var timeSignature: TimeSignature
    /// Named points.
    public var markers: [Marker]
    /// Loop range, if one is set.
    public var loopRange: FrameRange?
    /// Whether playback loops over `loopRange`.
    public var loopEnabled: Bool
    /// Punch range, if one is set.
    public var punchRange: FrameRange?
    /// Whether recording punches in and out at `punchRange`.
    public var punchEnabled: Bool
    /// Master effect chain, in chain syntax.
    public var masterChain: String
    /// The master fader in dB, after the master chain (``Fader/silentDecibels`` is −∞).
    public var masterGainDecibels: Double
    /// The tracks, top to bottom.
    public var tracks: [Track]
    /// Controllers bound to faders, pans, mutes and node parameters (MIDI learn).
    public var midiBindings: [MIDIBinding]
    /// Tempo changes after bar 1 (bar 1 has ``tempoBPM``), in bar order.
    public var tempoChanges: [TempoChange]
    /// Meter changes after bar 1 (bar 1 has ``timeSignature``), in bar order.
    public var meterChanges: [MeterChange]
    /// The time of day timeline frame 0 stands for, in frames since midnight at
    /// ``sampleRate`` (nil: none). `import --at original` places a BWF file at its time
    /// reference less this; `record --timestamp clock` sets it from the first take.
    public var timeOfDayOrigin: Int64?
    /// The timecode rate surfaces speak the playhead in (OSC `/position/smpte`, the Mackie
    /// time display); Ardour's default 30 unless chosen.
    public var timecodeRate: TimecodeRate

    /// Creates an empty session.
    public init(sampleRate: Int = 48000, tempoBPM: Double = 120,
                timeSignature: TimeSignature = TimeSignature(beatsPerBar: 4, beatUnit: 4)) {
        self.schemaVersion = Session.currentSchemaVersion
        self.sampleRate = sampleRate
        self.tempoBPM = tempoBPM
        self.timeSignature = timeSignature
        self.markers = []
        self.loopRange = nil
        self.loopEnabled = false
        self.punchRange = nil
        self.punchEnabled = false
        self.masterChain = ""
        self.masterGainDecibels = 0
        self.tracks = []
        self.midiBindings = []
        self.tempoChanges = []
        self.meterChanges = []
        self.timecodeRate = .standard
    }

    /// First timeline frame after the last region of any track.
    public var endFrame: Int64 { tracks.map(\.endFrame).max() ?? 0 }

    /// The tempo map: the session's tempo and signature at bar 1 and its changes.
    public var tempoMap: TempoMap {
        TempoMap(sampleRate: sampleRate, tempoBPM: tempoBPM, timeSignature: timeSignature,
                 tempoChanges: tempoChanges, meterChanges: meterChanges)
    }
}
