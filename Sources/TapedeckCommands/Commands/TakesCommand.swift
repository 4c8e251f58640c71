import TapedeckCore
import TapedeckIO

/// `tapedeck takes`: lists a track's stacked takes, cycles or chooses the one that plays.
struct TakesCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "takes", summary: "list a track's take lanes, or cycle / choose the active take",
        synopsis: ["takes SESSION TRACK [--cycle GROUP | --choose GROUP.TAKE]"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("TRACK", complete: .none)],
        options: [
            OptionSpec("--cycle", value: "GROUP", "make the group's next take active (after the last comes the first)"),
            OptionSpec("--choose", value: "GROUP.TAKE", "make this take active, e.g. 1.3"),
        ],
        details: """
        Loop recording (`record --loop`) stacks every pass as a take over the same range; exactly
        one take of each stack (group) plays. Without options: every group on track TRACK
        (1-based number or name) with its takes, the active one marked. Saved at once; the
        screen's undo reverts it.
        """,
        examples: ["tapedeck takes song.tapedeck 2 --choose 1.2"])

    let folder: SessionFolder
    let trackText: String
    let cycle: Int?
    let choose: Choice?

    /// `--choose GROUP.TAKE`.
    struct Choice: Codable {
        var group: Int
        var take: Int
    }

    init(arguments: inout Arguments) throws {
        cycle = try arguments.intOption("--cycle", in: 1...1_000_000)
        if let text = try arguments.option("--choose") {
            let parts = text.split(separator: ".")
            guard parts.count == 2, let g = Int(parts[0]), let t = Int(parts[1]), g > 0, t > 0 else {
                throw UsageError("takes: --choose '\(text)' must be GROUP.TAKE, e.g. 1.3")
            }
            choose = Choice(group: g, take: t)
        } else {
            choose = nil
        }
        if cycle != nil && choose != nil { throw UsageError("takes: --cycle and --choose cannot be combined") }
        folder = SessionFolder(path: try arguments.required("a session folder"))
        trackText = try arguments.required("a track number or name")
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // Only a change needs the session's lock; listing reads.
        let lock = cycle != nil || choose != nil ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let track = try TrackSelector.material(of: trackText, in: document.session, command: "takes",
                                               doing: "has no takes (nothing is recorded onto it)")
        if let group = cycle {
            _ = try document.cycleTake(track: track, group: group)
            try context.save(document.session, to: folder)
        } else if let choose {
            try document.chooseTake(track: track, group: choose.group, take: choose.take)
            try context.save(document.session, to: folder)
        }
        let t = document.session.tracks[track]
        let rate = document.session.sampleRate
        if t.takeGroups.isEmpty {
            context.console.out("track \(track + 1) (\(t.name.terminalSafe)) has no stacked takes")
            return ExitCode.ok
        }
        var lines: [String] = []
        for group in t.takeGroups {
            let active = t.activeTakeNumber(group: group)
            lines.append("group \(group):")
            for i in t.takeIndices(group: group) {
                let r = t.regions[i]
                let number = r.takeNumber ?? 0
                let span = "\(TimeText.clock(frames: r.timelineStartFrame, sampleRate: rate))-\(TimeText.clock(frames: r.timelineEndFrame, sampleRate: rate))"
                lines.append("  \(number == active ? "▶" : " ") take \(group).\(number)  \(span)  \(r.file.terminalSafe)")
            }
        }
        context.console.out(lines.joined(separator: "\n"))
        return ExitCode.ok
    }
}
