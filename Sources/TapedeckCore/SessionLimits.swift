/// The largest values Tapedeck accepts anywhere — command line, session file, screen.
///
/// Every limit is far beyond real use and far below where `Int64` arithmetic on positions
/// (start + length, frame × 1000, bars × frames per bar) could overflow, so code that works
/// with checked values never traps. A value past a limit is refused with one line naming the
/// field and the limit, never accepted to break the session later.
public enum SessionLimits {
    /// The longest timeline: 2^40 frames (about 265 days at 48 kHz, 33 days at 384 kHz).
    /// Every position, length and offset lies within it, so sums of two stay below 2^41.
    public static let maximumTimelineFrames: Int64 = 1 << 40
    /// Tracks in one session.
    public static let maximumTracks = 1_024
    /// Regions in one session, all tracks together.
    public static let maximumRegions = 100_000
    /// Markers in one session.
    public static let maximumMarkers = 10_000
    /// The quietest gain that is not silence, and the loudest boost, for tracks and regions.
    public static let gainDecibelsRange: ClosedRange<Double> = -200...24
    /// Characters in a track or marker name.
    public static let maximumNameLength = 1_000
    /// Characters in a region's file path.
    public static let maximumPathLength = 4_096
    /// Characters in a chain's text.
    public static let maximumChainLength = 65_536
    /// Take groups and take numbers.
    public static let maximumTakeNumber = 1_000_000
    /// Device channels a track may record from.
    public static let maximumInputChannels = 256
    /// Automation points in one session, all lanes together.
    public static let maximumAutomationPoints = 10_000_000
    /// Automation lanes on one strip.
    public static let maximumAutomationLanes = 1_000
    /// Sends on one strip.
    public static let maximumSends = 64
    /// MIDI learn bindings in one session.
    public static let maximumMIDIBindings = 10_000
    /// Events in one MIDI region's file (about 30 hours of dense playing).
    public static let maximumMIDIEvents = 2_000_000
    /// Bytes of `session.json` read at all: a session of the limits above fits many times.
    public static let maximumSessionFileBytes = 64 << 20

    /// `frames` as a person reads the limit: `2^40 frames (6363:46:40 at 48000 Hz)`.
    public static func timelineLimitText(sampleRate: Int) -> String {
        "2^40 frames (\(TimeText.clock(frames: maximumTimelineFrames, sampleRate: sampleRate)) at \(sampleRate) Hz)"
    }
}
