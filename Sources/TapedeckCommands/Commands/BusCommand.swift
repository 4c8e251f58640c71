import Foundation
import TapedeckCore
import TapedeckIO

/// `tapedeck bus`: adds, removes and lists buses, the strips other strips send or output to
/// (a reverb return, a drum group, a headphone cue mix). Once made, a bus answers to `track`
/// (fader, pan, mute, solo, name, output, solo-safe), `chain` and `send` by its name.
struct BusCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "bus", summary: "add, remove or list buses (what sends and outputs feed: returns, groups, cue mixes)",
        synopsis: ["bus SESSION [list] [--json]", "bus SESSION add NAME [--stereo|--mono]", "bus SESSION remove NAME"],
        positionals: [PositionalSpec("SESSION", complete: .session),
                      PositionalSpec("ACTION", complete: .choices, choices: ["add", "remove", "list"]),
                      PositionalSpec("NAME", complete: .none)],
        options: [
            OptionSpec(flag: "--stereo", "add: a stereo bus (the default)"),
            OptionSpec(flag: "--mono", "add: a mono bus"),
            OptionSpec(flag: "--json", "list: the buses as JSON (levels in dB, null for -inf)"),
        ],
        details: """
        A bus is a strip with no regions and no input: it sums what other strips send to it
        (`tapedeck send`) or route their output to (`tapedeck track SESSION N --output
        bus:NAME`), runs its chain, fader and pan, and goes to its own output (the master
        unless told otherwise: another bus, or device outputs such as out:3-4). Buses are
        numbered with the tracks and named like them (unique ignoring case, never master).
        `track SESSION NAME` sets a bus's fader, pan, mute, solo, name, output and
        --solo-safe; `chain SESSION NAME CHAIN` its chain. remove sends what went to the bus to
        the master, drops the sends to it, and says so. Without an action, lists the buses:
        width, fader, output, solo-safe, what feeds each, and its chain.
        """,
        examples: ["tapedeck bus song.tapedeck add Reverb",
                   "tapedeck bus song.tapedeck add Cue --stereo",
                   "tapedeck bus song.tapedeck list",
                   "tapedeck bus song.tapedeck remove cue"])

    /// What to do.
    enum Action: Codable { case list, add(String), remove(String) }

    let folder: SessionFolder
    let action: Action
    let mono: Bool
    let json: Bool

    init(arguments: inout Arguments) throws {
        let stereo = arguments.flag("--stereo")
        mono = arguments.flag("--mono")
        json = arguments.flag("--json")
        if stereo && mono { throw UsageError("bus: --stereo and --mono cannot be combined") }
        folder = SessionFolder(path: try arguments.required("a session folder"))
        let verbs = ["add", "remove", "list"]
        let verb = arguments.positional()
        switch verb?.lowercased() {
        case nil, "list", "ls":
            action = .list
        case "add", "new":
            let words = arguments.remainingPositionals()
            guard !words.isEmpty else { throw UsageError("bus: add needs the bus's name (bus SESSION add Reverb)") }
            action = .add(words.joined(separator: " "))
        case "remove", "delete", "rm":
            guard let name = arguments.positional() else { throw UsageError("bus: remove needs the bus's name") }
            action = .remove(name)
        default:
            throw UsageError("bus: unknown action '\(verb ?? "")'\(NameMatch.suggestion(verb ?? "", in: verbs)) (add, remove or list)")
        }
        if case .add = action {} else if stereo || mono {
            throw UsageError("bus: --stereo and --mono go with add (a bus's width is chosen when it is made)")
        }
        if json, case .list = action {} else if json { throw UsageError("bus: --json goes with list") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // One writer per session (see SessionLock): only a change takes the lock; listing reads.
        let changes: Bool
        if case .list = action { changes = false } else { changes = true }
        let lock = changes ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        switch action {
        case .list:
            let s = document.session
            if json {
                try RoutingText.printJSON(["buses": s.buses.map { RoutingText.busJSON(s, $0.index) }], to: context.console)
            } else {
                context.console.out(s.buses.isEmpty ? "no buses (add one: tapedeck bus SESSION add NAME)"
                             : s.buses.map { BusCommand.describe(s, $0.index) }.joined(separator: "\n"))
            }
        case .add(let text):
            let name = text.trimmingCharacters(in: .whitespaces)
            try TrackSelector.checkName(name, index: -1, bus: true, in: document.session, command: "bus")
            try TrackSelector.refusing("bus") { try document.apply(.addBus(name: name, channelCount: mono ? 1 : 2)) }
            try context.save(document.session, to: folder)
            context.console.out("added " + BusCommand.describe(document.session, document.session.tracks.count - 1))
        case .remove(let text):
            let index = try TrackSelector.bus(of: text, in: document.session, command: "bus")
            let gone = document.session.tracks[index]
            let said = try TrackSelector.refusing("bus") { try document.apply(.removeStrip(index)) }
            try context.save(document.session, to: folder)
            context.console.out((["removed bus \(index + 1) (\(gone.name.terminalSafe))"] + said.map { "  " + $0 }).joined(separator: "\n"))
        }
        return ExitCode.ok
    }

    /// A bus in two or three lines: number, name, width, fader, pan, output, flags; what feeds
    /// it; its chain and its own sends when it has them.
    static func describe(_ s: Session, _ index: Int) -> String {
        let t = s.tracks[index]
        var flags: [String] = []
        if t.isSoloSafe { flags.append("solo-safe") }
        if t.mute { flags.append("muted") }
        if t.solo { flags.append("solo") }
        var lines = ["bus \(index + 1) (\(t.name.terminalSafe))  \(RoutingText.width(t))  fader \(Fader.text(t.gainDecibels)) dB  pan \(Pan.text(t.pan))  output \(t.output.description.terminalSafe)"
                     + (flags.isEmpty ? "" : "  [" + flags.joined(separator: " ") + "]"),
                     "    fed by: \(RoutingText.feedersText(of: index, in: s))",
                     "    chain: \(t.playbackChain.isEmpty ? "(none)" : t.playbackChain.terminalSafe)"]
        if !t.sends.isEmpty { lines.append("    sends: " + t.sends.map(RoutingText.short).joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }
}
