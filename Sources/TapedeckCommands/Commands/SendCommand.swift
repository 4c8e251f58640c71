import Foundation
import TapedeckCore
import TapedeckIO

/// `tapedeck send`: a strip's sends to buses, listed, added, changed and removed. One send
/// per strip and bus; a change that would make a cycle is refused before anything is saved.
struct SendCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "send", summary: "list a track's or bus's sends, or add, change or remove its send to a bus",
        synopsis: ["send SESSION TRACK [--json]", "send SESSION TRACK BUS [--level DB] [--pre|--post] [--pan P]",
                   "send SESSION TRACK BUS --remove"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("TRACK", complete: .none),
                      PositionalSpec("BUS", complete: .none)],
        options: [
            OptionSpec("--level", value: "DB", "the send's level: -inf...+12 dB (a new send starts at 0)"),
            OptionSpec(flag: "--pre", "taken before the fader, mute and solo (a cue mix: the fader does not move it)"),
            OptionSpec(flag: "--post", "taken after the fader (the default: an effect return follows the fader)"),
            OptionSpec("--pan", value: "P", "where the send sits in the bus: L100...C...R100 (or -1...1)"),
            OptionSpec(flag: "--remove", "remove the send"),
            OptionSpec(flag: "--json", "list the sends as JSON (levels in dB, null for -inf)"),
        ],
        details: """
        TRACK is a track or a bus (a number or a name, any case); BUS is a bus by its name.
        Without BUS, lists TRACK's output and sends. With BUS, adds the send (0 dB, post-fader,
        centred unless told otherwise) or changes only what is given; --remove takes it away.
        A send to a track, to the strip itself, or one that closes a loop (a bus sending back
        to what feeds it) is refused with the line naming it, and nothing is saved. A
        pre-fader send keeps sounding with the strip's fader at -inf or the strip muted: the
        way to build a headphone mix that the main faders do not move.
        """,
        examples: ["tapedeck send song.tapedeck vocal Reverb --level -12",
                   "tapedeck send song.tapedeck drums Cue --level -6 --pre",
                   "tapedeck send song.tapedeck vocal Reverb --remove",
                   "tapedeck send song.tapedeck vocal"])

    let folder: SessionFolder
    let stripText: String
    let busText: String?
    let level: Double?
    let preFader: Bool?
    let pan: Double?
    let remove: Bool
    let json: Bool

    init(arguments: inout Arguments) throws {
        if let text = try arguments.option("--level") {
            guard let db = Fader.parse(text) else { throw UsageError("send: --level '\(text)' is not a level in dB (e.g. -6, +1.5, -inf)") }
            if let problem = Fader.problem(db) { throw UsageError("send: --level \(text): \(problem.replacingOccurrences(of: "the fader", with: "a send"))") }
            level = Fader.stored(db)
        } else { level = nil }
        if let text = try arguments.option("--pan") {
            guard let p = Pan.parse(text) else { throw UsageError("send: --pan '\(text)' must be L100...C...R100 or -1...1") }
            pan = p
        } else { pan = nil }
        let pre = arguments.flag("--pre"), post = arguments.flag("--post")
        if pre && post { throw UsageError("send: --pre and --post cannot be combined") }
        preFader = pre ? true : (post ? false : nil)
        remove = arguments.flag("--remove")
        json = arguments.flag("--json")
        folder = SessionFolder(path: try arguments.required("a session folder"))
        stripText = try arguments.required("the track (or bus) that sends")
        busText = arguments.positional()
        let changes = level != nil || pan != nil || preFader != nil
        if busText == nil && (changes || remove) {
            throw UsageError("send: name the bus the send goes to (send SESSION TRACK BUS …)")
        }
        if remove && changes { throw UsageError("send: --remove takes the send away; --level, --pan, --pre and --post change one") }
        if json && busText != nil { throw UsageError("send: --json lists a strip's sends (send SESSION TRACK --json)") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // One writer per session (see SessionLock): only a change takes the lock; listing reads.
        let lock = busText != nil ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let strip = try TrackSelector.index(of: stripText, in: document.session, command: "send")
        guard let busText else {
            let s = document.session
            if json {
                try RoutingText.printJSON(["strip": s.tracks[strip].name, "output": s.tracks[strip].output.description,
                                           "sends": s.tracks[strip].sends.map(RoutingText.json)], to: context.console)
            } else {
                context.console.out(SendCommand.listing(s, strip))
            }
            return ExitCode.ok
        }
        let bus = try TrackSelector.bus(of: busText, in: document.session, command: "send")
        let busName = document.session.tracks[bus].name
        let from = document.session.tracks[strip].name
        let existing = document.session.tracks[strip].sends.firstIndex { $0.bus.lowercased() == busName.lowercased() }
        if remove {
            guard existing != nil else {
                throw UsageError("send: \(from.terminalSafe) has no send to \(busName.terminalSafe)")
            }
            try TrackSelector.refusing("send") { try document.apply(.removeSend(strip: strip, bus: busName)) }
            try context.save(document.session, to: folder)
            context.console.out("removed \(from.terminalSafe)'s send to \(busName.terminalSafe)")
            return ExitCode.ok
        }
        var send = existing.map { document.session.tracks[strip].sends[$0] } ?? Send(bus: busName)
        // The bus's own spelling, so the session reads as the bus is named.
        send.bus = busName
        if let level { send.levelDecibels = level }
        if let pan { send.pan = pan }
        if let preFader { send.preFader = preFader }
        // A send to itself or one closing a cycle is refused and leaves the file as it was.
        if existing.map({ document.session.tracks[strip].sends[$0] }) != send {
            try TrackSelector.refusing("send") { try document.apply(.setSend(strip: strip, send)) }
            try context.save(document.session, to: folder)
        }
        context.console.out("\(from.terminalSafe) → \(busName.terminalSafe): \(RoutingText.settings(send))\(existing == nil ? " (new send)" : "")")
        return ExitCode.ok
    }

    /// A strip's output and every send, one a line.
    static func listing(_ s: Session, _ strip: Int) -> String {
        let t = s.tracks[strip]
        var lines = ["\(RoutingText.label(s, strip))  output \(t.output.description.terminalSafe)"]
        if t.sends.isEmpty { lines.append("  no sends (add one: tapedeck send SESSION \(t.name.terminalSafe) BUS --level -6)") }
        for send in t.sends { lines.append("  send to \(send.bus.terminalSafe): \(RoutingText.settings(send))") }
        return lines.joined(separator: "\n")
    }
}
