import TapedeckCore
import TapedeckIO

/// `tapedeck new DIR`: creates an empty session folder.
struct NewCommand: Command {
    static let spec = CommandSpec(
        name: "new", summary: "create an empty session folder NAME.tapedeck",
        synopsis: ["new DIR [--sample-rate HZ] [--tempo BPM] [--meter 4/4]"],
        positionals: [PositionalSpec("DIR", complete: .directory)],
        options: [
            OptionSpec("--sample-rate", value: "HZ", "the session's rate, 8000...384000 (default 48000)"),
            OptionSpec("--tempo", value: "BPM", "tempo, 20...999 (default 120)"),
            OptionSpec("--meter", value: "N/D", "time signature such as 4/4, 6/8, 7/8 (default 4/4)"),
        ],
        details: """
        Creates DIR.tapedeck/ (or DIR when it already ends in .tapedeck) with session.json,
        audio/, peaks/ and exports/. Defaults: 48000 Hz, 120 BPM, 4/4.
        """,
        examples: ["tapedeck new song --sample-rate 44100 --tempo 96 --meter 6/8"])

    let folder: SessionFolder
    let session: Session

    init(arguments: inout Arguments) throws {
        let rate = try arguments.intOption("--sample-rate", in: 8000...384_000) ?? 48000
        let tempo = try arguments.doubleOption("--tempo", in: 20...999) ?? 120
        let meter = try arguments.option("--meter").map(NewCommand.parseMeter) ?? TimeSignature(beatsPerBar: 4, beatUnit: 4)
        folder = SessionFolder(path: try arguments.required("session folder DIR"))
        session = Session(sampleRate: rate, tempoBPM: tempo, timeSignature: meter)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try folder.create(session)
        Terminal.out("created \(folder.path.terminalSafe) (\(session.sampleRate) Hz, \(session.tempoBPM) BPM, \(session.timeSignature))")
        return ExitCode.ok
    }

    /// Reads `N/D` such as 4/4, 6/8, 7/8.
    static func parseMeter(_ text: String) throws(UsageError) -> TimeSignature {
        guard let signature = TempoMap.signature(parsing: text) else {
            throw UsageError("new: --meter '\(text)' must be N/D like 4/4 or 6/8 (N 1...64, D 1, 2, 4, 8, 16 or 32)")
        }
        return signature
    }
}
