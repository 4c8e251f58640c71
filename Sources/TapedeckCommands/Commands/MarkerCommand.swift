import TapedeckCore
import TapedeckIO

/// `tapedeck marker`: lists, adds, renames, moves and deletes named markers.
struct MarkerCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "marker", summary: "list, add, rename, move or delete named markers",
        synopsis: ["marker SESSION", "marker SESSION add TIME [NAME]", "marker SESSION rename MARKER NAME",
                   "marker SESSION move MARKER TIME", "marker SESSION delete MARKER"],
        positionals: [PositionalSpec("SESSION", complete: .session),
                      PositionalSpec("ACTION", complete: .choices, choices: ["add", "rename", "move", "delete"])],
        details: """
        Without an action, lists the markers in timeline order. add puts a marker at TIME (named
        M1, M2… without NAME). MARKER is a marker's name (any case; an unknown one suggests the
        nearest) or its number in the listing. TIME is seconds, m:ss.mmm, frames (90000f) or
        bar.beat.sixteenth.
        """,
        examples: ["tapedeck marker song.tapedeck add 1:00 Chorus",
                   "tapedeck marker song.tapedeck rename chorus \"Last chorus\""])

    /// What to do.
    enum Edit: Codable {
        case add(time: String, name: String), rename(String, to: String), move(String, to: String), delete(String)
    }

    let folder: SessionFolder
    let edit: Edit?

    init(arguments: inout Arguments) throws {
        folder = SessionFolder(path: try arguments.required("a session folder"))
        guard let verb = arguments.positional() else { edit = nil; return }
        func operand(_ what: String) throws(UsageError) -> String {
            guard let v = arguments.positional() else { throw UsageError("marker: \(verb) needs \(what)") }
            return v
        }
        let verbs = ["add", "rename", "move", "delete"]
        switch verb.lowercased() {
        case "add": edit = .add(time: try operand("a time"), name: arguments.remainingPositionals().joined(separator: " "))
        case "rename": edit = .rename(try operand("the marker"), to: try operand("the new name"))
        case "move": edit = .move(try operand("the marker"), to: try operand("a time"))
        case "delete", "remove": edit = .delete(try operand("the marker"))
        default: throw UsageError("marker: unknown action '\(verb)'\(NameMatch.suggestion(verb, in: verbs)) (add, rename, move or delete)")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // One writer per session (see SessionLock): only a change takes the lock; showing reads.
        let lock = edit != nil ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let map = document.session.tempoMap
        guard let edit else {
            let s = document.session
            context.console.out(s.markers.isEmpty ? "no markers" : s.markers.enumerated().map { "  \($0.offset + 1)  \(s.clockText($0.element.frame))  \($0.element.name)\($0.element.isLostInput ? "  (lost input)" : "")" }.joined(separator: "\n"))
            return ExitCode.ok
        }
        let said: String
        // Said only once the edit is saved: a refused one says only why.
        var farWarning: String?
        switch edit {
        case .add(let time, let name):
            let at = try TimeText.frames(from: time, tempoMap: map)
            farWarning = document.session.farPastEndWarning(at, typed: time)
            let index = try document.apply(.add(name: name, atFrame: at)) ?? 0
            said = "marker \(document.session.markers[index].name) at \(document.session.clockText(at))"
        case .rename(let which, let name):
            let i = try document.session.markerIndex(named: which)
            try document.apply(.rename(index: i, to: name))
            said = "marker at \(document.session.clockText(document.session.markers[i].frame)) is now \(document.session.markers[i].name)"
        case .move(let which, let time):
            let i = try document.session.markerIndex(named: which)
            let at = try TimeText.frames(from: time, tempoMap: map)
            farWarning = document.session.farPastEndWarning(at, typed: time)
            let index = try document.apply(.move(index: i, toFrame: at)) ?? i
            said = "marker \(document.session.markers[index].name) at \(document.session.clockText(at))"
        case .delete(let which):
            let i = try document.session.markerIndex(named: which)
            let m = document.session.markers[i]
            try document.apply(.delete(index: i))
            said = "deleted marker \(m.name) at \(document.session.clockText(m.frame))"
        }
        try context.save(document.session, to: folder)
        if let farWarning { context.console.err("tapedeck: warning: \(farWarning)\n") }
        context.console.out(said)
        return ExitCode.ok
    }
}
