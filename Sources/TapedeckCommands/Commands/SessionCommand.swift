import TapedeckCore
import TapedeckIO

/// `tapedeck session`: session-wide settings — its time-of-day origin and timecode rate.
struct SessionCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "session", summary: "show or set session-wide settings (the time-of-day origin, the timecode rate)",
        synopsis: ["session SESSION", "session SESSION [--time-of-day HH:MM:SS[.mmm]|none] [--timecode FPS]"],
        positionals: [PositionalSpec("SESSION", complete: .session)],
        options: [
            OptionSpec("--time-of-day", value: "HH:MM:SS|none", "the time of day timeline frame 0 stands for (24-hour clock); none removes it"),
            OptionSpec("--timecode", value: "FPS",
                       "the timecode rate surfaces show the playhead in: \(TimecodeRate.namesText) (df: drop-frame; default 30, as Ardour's)"),
        ],
        details: """
        Without an option, shows the settings. The time-of-day origin says what time of day the
        timeline's start stands for: `import --at original` then places a BWF file at its time
        reference less the origin (a file recorded before it is refused), so files from several
        recorders line up, and `info` shows it. `record --timestamp clock` sets it from the
        first take when the session has none.

        The timecode rate is the frame rate OSC `/position/smpte` and a Mackie surface's time
        display (in SMPTE mode) count in, as Ardour's session timecode format: 23.976, 24,
        24.975, 25, 29.97, 29.97df, 30, 30df, 59.94 or 60 (Ardour's spellings `29.97 drop`,
        `30 drop`, `23.98` and `24.98` are read too). At 29.97df and 30df frames 00 and 01 of
        every minute but each tenth are skipped (SMPTE drop-frame). Each change is one undo step.
        """,
        examples: ["tapedeck session field.tapedeck --time-of-day 09:30:00",
                   "tapedeck session field.tapedeck --time-of-day none",
                   "tapedeck session field.tapedeck --timecode 25"])

    let folder: SessionFolder
    /// `--time-of-day` as typed.
    let timeOfDayText: String?
    /// `--timecode`, read (an unknown rate is refused while parsing).
    let timecodeRate: TimecodeRate?

    init(arguments: inout Arguments) throws {
        folder = SessionFolder(path: try arguments.required("a session folder"))
        timeOfDayText = try arguments.option("--time-of-day")
        if let text = try arguments.option("--timecode") {
            guard let rate = TimecodeRate(text: text) else {
                throw UsageError("session: --timecode '\(text.terminalSafe)' is not a timecode rate (one of \(TimecodeRate.namesText))")
            }
            timecodeRate = rate
        } else {
            timecodeRate = nil
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        guard timeOfDayText != nil || timecodeRate != nil else {
            let s = try context.load(folder)
            context.console.out("time-of-day origin: " + (s.timeOfDayOrigin.map { TimeOfDay.text(frames: $0, sampleRate: s.sampleRate) } ?? "none"))
            context.console.out("timecode: " + s.timecodeRate.rawValue + " fps")
            return ExitCode.ok
        }
        let lock = try SessionLock.acquire(folder)
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let rate = document.session.sampleRate
        // Both values are read before anything is changed, so a bad one changes nothing.
        var origin: Int64??
        if let text = timeOfDayText {
            if text.lowercased() == "none" {
                origin = .some(nil)
            } else {
                guard let frames = TimeOfDay.frames(from: text, sampleRate: rate) else {
                    throw UsageError("session: --time-of-day '\(text.terminalSafe)' is not a time of day (write HH:MM:SS or HH:MM:SS.mmm, 00:00:00 to 23:59:59.999, or none)")
                }
                origin = .some(frames)
            }
        }
        let name = origin != nil && timecodeRate != nil ? "session settings" : origin != nil ? "time-of-day origin" : "timecode rate"
        document.editMerging(name) {
            if let origin { $0.timeOfDayOrigin = origin }
            if let timecodeRate { $0.timecodeRate = timecodeRate }
        }
        try context.save(document.session, to: folder)
        if let origin { context.console.out("time-of-day origin: " + (origin.map { TimeOfDay.text(frames: $0, sampleRate: rate) } ?? "none")) }
        if let timecodeRate { context.console.out("timecode: " + timecodeRate.rawValue + " fps") }
        return ExitCode.ok
    }
}
