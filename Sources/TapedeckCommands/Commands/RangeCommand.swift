import TapedeckCore
import TapedeckIO

/// `tapedeck loop` and `tapedeck punch`: the session's loop and punch ranges, each its own.
struct RangeCommand: Codable {
    /// Which range.
    enum Which: String, Codable { case loop, punch }

    /// The switches both commands take.
    static let options = [
        OptionSpec(flag: "--on", "switch it on"),
        OptionSpec(flag: "--off", "switch it off"),
    ]

    let which: Which
    let folder: SessionFolder
    let rangeText: String?
    let clear: Bool
    let enable: Bool?

    init(_ which: Which, arguments: inout Arguments) throws {
        self.which = which
        let on = arguments.flag("--on"), off = arguments.flag("--off")
        if on && off { throw UsageError("\(which.rawValue): --on and --off cannot be combined") }
        enable = on ? true : (off ? false : nil)
        folder = SessionFolder(path: try arguments.required("a session folder"))
        let text = arguments.positional()
        clear = text == "clear" || text == "none"
        rangeText = clear ? nil : text
        if clear && enable == true { throw UsageError("\(which.rawValue): a cleared range cannot be on") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // One writer per session (see SessionLock): only a change takes the lock; showing reads.
        let lock = (rangeText != nil || clear || enable != nil) ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let current = which == .loop ? document.session.loopRange : document.session.punchRange
        var range = current
        if let rangeText {
            range = try TimeText.range(from: rangeText, tempoMap: document.session.tempoMap, defaultEnd: document.session.endFrame)
        } else if clear {
            range = nil
        } else if enable == true && current == nil {
            throw UsageError("\(which.rawValue): no \(which.rawValue) range yet; give one, e.g. 1:00-1:30")
        }
        if rangeText != nil || clear || enable != nil {
            try document.apply(which == .loop ? .loop(range, enabled: enable) : .punch(range, enabled: enable))
            try context.save(document.session, to: folder)
        }
        let s = document.session
        let shown = which == .loop ? s.loopRange : s.punchRange
        let on = which == .loop ? s.loopEnabled : s.punchEnabled
        context.console.out(shown.map { "\(which.rawValue) \(s.clockText($0.startFrame))-\(s.clockText($0.endFrame)) (\(on ? "on" : "off"))" } ?? "no \(which.rawValue) range")
        return ExitCode.ok
    }
}

/// `tapedeck loop SESSION [A-B|clear] [--on|--off]`.
struct LoopCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "loop", summary: "show or set the loop range (and turn looping on or off)",
        synopsis: ["loop SESSION [A-B | clear] [--on | --off]"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("A-B|clear", complete: .none)],
        options: RangeCommand.options,
        details: """
        Without a range, shows it. A-B sets the range the screen and `play --loop` cycle over
        (and `record --loop` stacks takes in); --on and --off switch looping. The loop and punch
        ranges are independent: setting one never moves the other.
        """,
        examples: ["tapedeck loop song.tapedeck 1:00-1:30 --on"])

    let command: RangeCommand

    init(arguments: inout Arguments) throws { command = try RangeCommand(.loop, arguments: &arguments) }
    func run(_ context: CommandContext) throws -> Int32 { try command.run(context) }
}

/// `tapedeck punch SESSION [A-B|clear] [--on|--off]`.
struct PunchCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "punch", summary: "show or set the punch range (and turn punching on or off)",
        synopsis: ["punch SESSION [A-B | clear] [--on | --off]"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("A-B|clear", complete: .none)],
        options: RangeCommand.options,
        details: """
        Without a range, shows it. A-B sets the range recording punches in and out at (the
        screen's punch switch, and what lies there is replaced with 5 ms crossfades); --on and
        --off switch punching. Independent of the loop range.
        """,
        examples: ["tapedeck punch song.tapedeck 1:10-1:20 --on"])

    let command: RangeCommand

    init(arguments: inout Arguments) throws { command = try RangeCommand(.punch, arguments: &arguments) }
    func run(_ context: CommandContext) throws -> Int32 { try command.run(context) }
}
