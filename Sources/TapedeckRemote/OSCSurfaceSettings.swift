/// What a surface registered for with `/set_surface` (Ardour's arguments, in its order:
/// `bank_size strip_types feedback fader_mode send_page_size plugin_page_size port`).
public struct OSCSurfaceSettings: Equatable, Sendable {
    /// Ardour's feedback bits Tapedeck honours.
    public struct Feedback: OptionSet, Equatable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// 1: names, mute, solo, record-enable, input monitoring and selection of the strips.
        public static let buttons = Feedback(rawValue: 1)
        /// 2: gain (or fader), trim, pan and send levels of the strips.
        public static let values = Feedback(rawValue: 2)
        /// 4: the strip number in the address (`/strip/fader/1 f 0.5`) instead of a first
        /// argument.
        public static let idInAddress = Feedback(rawValue: 4)
        /// 8: `/heartbeat`, 1 and 0 a second each.
        public static let heartbeat = Feedback(rawValue: 8)
        /// 16: the master strip, the transport's states, `/record_tally`, `/marker`,
        /// `/session_name`.
        public static let master = Feedback(rawValue: 16)
        /// 32: the playhead as `/position/bbt`.
        public static let barsBeats = Feedback(rawValue: 32)
        /// 64: the playhead as `/position/smpte`.
        public static let timecode = Feedback(rawValue: 64)
        /// 128: meters (dB, or 0…1 with a fader gain mode).
        public static let meters = Feedback(rawValue: 128)
        /// 256: meters as Ardour's LED strip: a 16-bit value, one bit per LED, all below the
        /// level's lit (bit 128 wins when both are asked for, as in Ardour).
        public static let ledMeters = Feedback(rawValue: 256)
        /// 512: `/strip/signal`, 1 while the strip's peak is above −40 dB.
        public static let signal = Feedback(rawValue: 512)
        /// 1024: the playhead as `/position/samples`.
        public static let samples = Feedback(rawValue: 1024)
        /// 2048: the playhead as `/position/time`.
        public static let time = Feedback(rawValue: 2048)
        /// 8192: the select page (`/select/…`).
        public static let select = Feedback(rawValue: 8192)
        /// 16384: `/strip/list` rows as `/reply` (else `#reply`, as Ardour).
        public static let slashReply = Feedback(rawValue: 16384)
        /// Everything, for a surface that sends `/set_surface` with no arguments.
        public static let all: Feedback = [.buttons, .values, .heartbeat, .master, .barsBeats, .timecode, .meters, .ledMeters,
                                           .signal, .samples, .time, .select, .slashReply, .idInAddress]
        /// What a surface that sends `/set_surface` with no arguments gets: everything but the
        /// strip number in the address.
        public static let standard: Feedback = all.subtracting(.idInAddress)
    }

    /// Ardour's strip types: which strips a surface's banks hold.
    public struct StripTypes: OptionSet, Equatable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// 1: audio tracks.
        public static let audioTracks = StripTypes(rawValue: 1)
        /// 2: MIDI tracks.
        public static let midiTracks = StripTypes(rawValue: 2)
        /// 4: audio buses (Tapedeck's buses).
        public static let audioBuses = StripTypes(rawValue: 4)
    }

    /// Strips per bank (0: every strip, no banks).
    public var bankSize = 0
    /// Which strips the banks hold (none of Tapedeck's kinds: every strip).
    public var stripTypes: StripTypes = []
    /// Which feedback the surface gets.
    public var feedback: Feedback = .standard
    /// Ardour's gain mode: 0 `/strip/gain` in dB only, 1 and 3 `/strip/fader` 0…1 only,
    /// 2 (Tapedeck's default) both.
    public var faderMode = 2
    /// Where feedback goes: 0 answers the port the registration came from.
    public var replyPort = 0
    /// Parameters per page of the plugin page (`/select/plug_page` steps by it; 0: all).
    public var pluginPageSize = 0

    /// Everything, both gain forms, to the sender.
    public init(bankSize: Int = 0, stripTypes: StripTypes = [], feedback: Feedback = .standard, faderMode: Int = 2, replyPort: Int = 0,
                pluginPageSize: Int = 0) {
        self.pluginPageSize = pluginPageSize
        self.bankSize = bankSize
        self.stripTypes = stripTypes
        self.feedback = feedback
        self.faderMode = faderMode
        self.replyPort = replyPort
    }

    /// Whether `/strip/gain` (dB) is sent.
    public var sendsDecibels: Bool { faderMode == 0 || faderMode == 2 }
    /// Whether `/strip/fader` (0…1) is sent.
    public var sendsPosition: Bool { faderMode != 0 }
}
