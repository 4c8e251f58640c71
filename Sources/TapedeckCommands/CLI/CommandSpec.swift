/// What a shell should offer after an option or in a positional slot.
enum CompletionKind: Sendable, Equatable {
    /// Nothing to offer (a number, a time, a chain).
    case none
    /// Any file.
    case file
    /// Audio files libsndfile reads.
    case audioFile
    /// A folder.
    case directory
    /// A session folder (`NAME.tapedeck`).
    case session
    /// One of the option's allowed values.
    case choices
}

/// One option a command accepts: the single declaration that parsing (unknown options,
/// allowed values), `tapedeck help COMMAND`, the man page and the shell completions all read.
struct OptionSpec: Sendable {
    /// Every spelling, long first by convention (`--output`, `-o`).
    let names: [String]
    /// The value's placeholder (`FILE`, `DB`); nil for a flag that takes no value.
    let value: String?
    /// One sentence or two for help and the man page.
    let help: String
    /// The only values accepted, when the option is a choice (checked while parsing).
    let allowed: [String]
    /// What a shell completes for the value.
    let completion: CompletionKind

    /// An option that takes a value.
    init(_ names: String..., value: String, _ help: String, allowed: [String] = [], complete: CompletionKind? = nil) {
        self.names = names
        self.value = value
        self.help = help
        self.allowed = allowed
        self.completion = complete ?? (allowed.isEmpty ? .none : .choices)
    }

    /// A flag: present or not.
    init(flag name: String, _ help: String) {
        self.names = [name]
        self.value = nil
        self.help = help
        self.allowed = []
        self.completion = .none
    }

    /// The first long name (`--output`), the one help and completions lead with.
    var primaryName: String { names.first { $0.hasPrefix("--") } ?? names[0] }
    /// The help, plus the allowed values when it does not name them all itself.
    var fullHelp: String {
        allowed.allSatisfy({ help.contains($0) }) ? help : help + " (" + allowed.joined(separator: ", ") + ")"
    }
    /// Whether the option takes a value.
    var takesValue: Bool { value != nil }
}

/// A positional argument, for the synopsis, the man page and completions.
struct PositionalSpec: Sendable {
    /// Its placeholder (`SESSION`, `FILE`).
    let name: String
    /// What a shell completes there.
    let completion: CompletionKind
    /// The words a shell offers when the slot is a fixed choice (`bench`'s benchmarks).
    let choices: [String]

    init(_ name: String, complete: CompletionKind, choices: [String] = []) {
        self.name = name
        self.completion = complete
        self.choices = choices
    }
}

/// Everything Tapedeck says about one command, declared once.
struct CommandSpec: Sendable {
    /// The word after `tapedeck`.
    let name: String
    /// One line for `tapedeck help` and the man page's command list.
    let summary: String
    /// The forms of the command line after `tapedeck` (`SESSION -o FILE [options]`).
    let synopsis: [String]
    /// The positional slots, in order.
    let positionals: [PositionalSpec]
    /// Every option, in the order help lists them.
    let options: [OptionSpec]
    /// Prose paragraphs after the synopsis.
    let details: String
    /// Whole command lines, each shown as `example: …`.
    let examples: [String]

    init(name: String, summary: String, synopsis: [String], positionals: [PositionalSpec] = [],
         options: [OptionSpec] = [], details: String, examples: [String] = []) {
        self.name = name
        self.summary = summary
        self.synopsis = synopsis
        self.positionals = positionals
        self.options = options
        self.details = details
        self.examples = examples
    }

    /// The option one of whose spellings is `name`.
    func option(named name: String) -> OptionSpec? {
        options.first { $0.names.contains(name) }
    }

    /// Every spelling of every option.
    var optionNames: [String] { options.flatMap(\.names) }
}

/// Option groups more than one command shares (declared once, listed in each command's table).
enum SharedOptions {
    /// `--device`, `--period`, `--periods`, `--device-format` (read by `DeviceOptions`), and
    /// the JACK flags.
    static let device: [OptionSpec] = [
        OptionSpec("--device", value: "D", "ALSA PCM name (default: default; see 'tapedeck devices'), or jack (jack:CLIENT) to run as a JACK client"),
        OptionSpec("--period", value: "FRAMES", "frames per period (default 256; ALSA only: JACK's server sets its own)"),
        OptionSpec("--periods", value: "N", "periods in the device buffer (default 3; ALSA only)"),
        OptionSpec("--device-format", value: "F", "force the device sample format (ALSA only)",
                   allowed: ["float", "s32", "s24", "s24_3", "s16"]),
        RenderThreadsOption.spec,
    ] + jack

    /// `--connect`, `--timebase`, `--jack-transport` (read by `JACKOptions`).
    static let jack: [OptionSpec] = [
        OptionSpec("--connect", value: "PATTERN", "JACK: connect the ports to the ports matching PATTERN (a regular expression, e.g. 'system:' or 'ardour:'); physical (default) or none"),
        OptionSpec(flag: "--timebase", "JACK: be the timebase master, publishing bar, beat, tick and tempo from the session's tempo map"),
        OptionSpec("--jack-transport", value: "MODE", "JACK: follow and drive JACK's transport (sync, default) or keep Tapedeck's own (off)",
                   allowed: ["sync", "off"]),
    ]

    /// `--speed`, `--mode`, `--pitch` (read by `TimePitchOptions`).
    static let timePitch: [OptionSpec] = [
        OptionSpec("--speed", value: "R", "speed, 1/32...32 (0.5, 1/2, 50%, 2x)"),
        OptionSpec("--mode", value: "MODE", "stretch keeps the pitch (Rubber Band, default); varispeed (or vari) lets it follow the speed",
                   allowed: ["stretch", "varispeed", "vari"]),
        OptionSpec("--pitch", value: "SEMITONES", "shift pitch (stretch mode), e.g. -2 or 0.5 (50 cents)"),
    ]

    /// `--click`, `--click-level`, `--click-channels`.
    static let click: [OptionSpec] = [
        OptionSpec(flag: "--click", "metronome at the session's tempo and meter (accented downbeat; never recorded)"),
        OptionSpec("--click-level", value: "DB", "the metronome's level (default -6)"),
        OptionSpec("--click-channels", value: "3,4", "device outputs of its own for the metronome"),
    ]

    /// `--midi-in`, `--midi-out`, `--midi-surface`, `--midi-xt` (read by `MIDIOptions`).
    static let midi: [OptionSpec] = [
        OptionSpec("--midi-in", value: "PORT", "MIDI input (repeatable): an ALSA sequencer port (20:0, a client's name), jack:CLIENT:PORT, jack, or none (default: every ALSA hardware port)"),
        OptionSpec("--midi-out", value: "PORT", "send MIDI thru to this JACK port (jack:CLIENT:PORT; repeatable)"),
        OptionSpec("--midi-surface", value: "SURFACE", "transport buttons besides MMC: mackie (Mackie Control notes), cc (CC 41-46), or mcu (a whole Mackie Control surface: on the screen its faders, buttons and displays too)",
                   allowed: ["off", "mackie", "cc", "mcu"]),
        OptionSpec("--midi-xt", value: "PORT", "a Mackie Control XT extender after the mcu surface (repeatable, strips 9-16, 17-24, ...): jack (ports mackie_xtN_in/out, connected by hand), jack:IN[,OUT] (the XT's JACK ports), or an ALSA sequencer port"),
    ]

    /// The line every command that opens a device ends its details with.
    static let alsaEnvironment = "Environment: TAPEDECK_ALSA_CONFIG=FILE opens devices through that ALSA config only; JACK_DEFAULT_SERVER=NAME picks the JACK server (one is never started)."
}
