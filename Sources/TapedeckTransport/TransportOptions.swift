import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO

/// How a front-end wants its transport to behave.
public struct TransportOptions: Sendable {
    /// The engine's tuning (ring sizes, test hooks, calibrated latency offset).
    public var engine = EngineOptions()
    /// Device outputs (1-based) the metronome plays on.
    public var clickOutputs = [1, 2]
    /// Seconds of every armed track's input kept for retroactive capture (nil: none).
    public var retroSeconds: Double?
    /// Whether the session's tracks are heard (false: a headless take without `--play`
    /// hears only its inputs and the click).
    public var playsSession = true
    /// Whether playing stops by itself at the end of the material (and of the loop).
    public var stopsAtEnd = true
    /// Whether a take may be recorded while the speed or pitch is not plain (it is then
    /// placed in time and marked with its speed); the screen refuses, `record --speed` allows.
    public var allowsRecordingAtSpeed = false
    /// Input monitoring for the recorded tracks, overriding each track's own (nil: theirs).
    public var monitoring: MonitoringMode?
    /// The file type and depth of new takes.
    public var takeContainer = AudioContainer.wav
    /// The sample depth of new takes.
    public var takeEncoding = SampleEncoding.int24
    /// Stamp takes with the wall-clock time of their first frame (`record --timestamp clock`):
    /// their `bext` time reference counted from local midnight, origination date and time,
    /// iXML timestamp; false: with their timeline frame.
    public var stampsTakesWithClock = false
    /// What to play instead of the session's material (`play FILE`: one file as a track).
    public var material: GraphSpec?
    /// Where playing stops by itself instead of the end of the material (`play --to`).
    public var endFrame: Int64?
    /// MIDI inputs, MIDI thru and surface buttons (none by default).
    public var midi = MIDISetup()
    /// The calibrated latency offset of a device, by its configuration's name (`tapedeck
    /// calibrate`): asked for every engine the transport makes, so a take from the screen, a
    /// `ctl record`, MMC or `record` is compensated alike, and a device switch uses the new
    /// device's. Nil: ``engine``'s `latencyOffsetFrames` as given.
    public var latencyOffset: (@Sendable (_ deviceName: String) -> Int64)?
    /// Whether a start from standing waits for the speed's processors to be built, so the
    /// first frame is heard at the speed asked for (a headless `play --speed`). The screen
    /// does not wait: it never blocks its thread, and starts at 1× until they are ready.
    public var waitsForTimePitchToStart = true

    /// Every pass's split, where a take can be split (a plain take at 1× without a dry copy;
    /// others are one file): the screen's `--split` or `split =`. A request's own wins.
    public var split: TakeSplit?
    /// Every pass's mirror folder (the screen's `--mirror` or `mirror =`). A request's own wins.
    public var mirrorFolder: String?

    /// Defaults: the session heard, stops at the end, recording at 1× only.
    public init() {}
}

/// What a recording pass should do beyond the transport's settings.
public struct RecordRequest: Sendable {
    /// The record point (and, with a punch range, the earliest one): usually the playhead.
    public var fromFrame: Int64
    /// The tracks to record (nil: every armed track).
    public var tracks: [Int]?
    /// Stop after this many frames.
    public var maxFrames: Int64?
    /// Record through this input chain instead of each track's own.
    public var inputChain: Chain?
    /// Record these device channels instead of each track's own (one track).
    public var deviceChannels: [Int]?
    /// Keep the unprocessed input: instead of the processed (`recordsDry`), or beside it in
    /// `NAME.dry.EXT` (`keepsDryCopy`).
    public var recordsDry = false
    /// See ``recordsDry``.
    public var keepsDryCopy = false
    /// The file to write, for a take outside any session (one track).
    public var outputPath: String?
    /// Stop the transport when the pass ends by itself (a punch's end, ``maxFrames``): what a
    /// headless command wants; the screen rolls on.
    public var stopsWhenDone = false
    /// Split every audio take into pieces of this length or size, each its own file and
    /// region (``TakePieces``); nil: one file per take. Plain takes at 1× only.
    public var split: TakeSplit?
    /// Write a second copy of every audio take (and of every piece) into this folder, under
    /// the take's own file name, from a writer of its own (``TakeRequest/mirrorPath``): the
    /// field recorder's dual recording to a second disk. Nil: no mirror.
    public var mirrorFolder: String?

    /// A pass from `fromFrame`.
    public init(fromFrame: Int64) { self.fromFrame = fromFrame }
}

/// Why the transport refused or failed; one line for the user.
public struct TransportError: Error, CustomStringConvertible, Sendable {
    /// What kind of problem, for the exit code a command chooses.
    public enum Kind: Sendable { case usage, device, file }
    /// What kind.
    public var kind: Kind
    /// The line.
    public var description: String

    /// Creates an error.
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// Opens devices for a transport that may switch or reopen them (the screen's device chooser).
public protocol DeviceProvider: AnyObject {
    /// Names of devices that can play, `current` first.
    func catalog(current: String) -> [String]
    /// Opens `name` at `sampleRate` for playback and as much capture as it offers.
    func open(name: String, sampleRate: Int) throws -> AudioDevice
}
