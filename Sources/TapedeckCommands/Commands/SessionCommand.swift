import TapedeckCore
import TapedeckIO

/// `tapedeck session`: session-wide settings — for now its time-of-day origin.
struct SessionCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "session", summary: "show or set session-wide settings (the time-of-day origin)",
        synopsis: ["session SESSION", "session SESSION --time-of-day HH:MM:SS[.mmm]|none"],
        positionals: [PositionalSpec("SESSION", complete: .session)],
        options: [
            OptionSpec("--time-of-day", value: "HH:MM:SS|none", "the time of day timeline frame 0 stands for (24-hour clock); none removes it"),
        ],
        details: """
        Without an option, shows the settings. The time-of-day origin says what time of day the
        timeline's start stands for: `import --at original` then places a BWF file at its time
        reference less the origin (a file recorded before it is refused), so files from several
        recorders line up, and `info` shows it. `record --timestamp clock` sets it from the
        first take when the session has none.
        """,
        examples: ["tapedeck session field.tapedeck --time-of-day 09:30:00",
                   "tapedeck session field.tapedeck --time-of-day none"])

    let folder: SessionFolder
    /// `--time-of-day` as typed.
    let timeOfDayText: String?

    init(arguments: inout Arguments) throws {
        folder = SessionFolder(path: try arguments.required("a session folder"))
        timeOfDayText = try arguments.option("--time-of-day")
    }

    func run(_ context: CommandContext) throws -> Int32 {
        guard let text = timeOfDayText else {
            let s = try context.load(folder)
            context.console.out("time-of-day origin: " + (s.timeOfDayOrigin.map { TimeOfDay.text(frames: $0, sampleRate: s.sampleRate) } ?? "none"))
            return ExitCode.ok
        }
        let lock = try SessionLock.acquire(folder)
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let rate = document.session.sampleRate
        let origin: Int64?
        if text.lowercased() == "none" {
            origin = nil
        } else {
            guard let frames = TimeOfDay.frames(from: text, sampleRate: rate) else {
                throw UsageError("session: --time-of-day '\(text.terminalSafe)' is not a time of day (write HH:MM:SS or HH:MM:SS.mmm, 00:00:00 to 23:59:59.999, or none)")
            }
            origin = frames
        }
        document.editMerging("time-of-day origin") { $0.timeOfDayOrigin = origin }
        try context.save(document.session, to: folder)
        context.console.out("time-of-day origin: " + (origin.map { TimeOfDay.text(frames: $0, sampleRate: rate) } ?? "none"))
        return ExitCode.ok
    }
}
