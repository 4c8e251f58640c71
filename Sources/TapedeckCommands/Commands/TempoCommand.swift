import TapedeckCore
import TapedeckIO

/// `tapedeck tempo` and `tapedeck meter`: the session's tempo map, listed and edited.
struct TempoMapCommand: Codable {
    /// Which kind of change.
    enum Which: String, Codable { case tempo, meter }
    /// What to do.
    enum Edit: Codable { case add(bar: String, value: String, ramp: Bool), remove(bar: String) }

    let which: Which
    let folder: SessionFolder
    let edit: Edit?

    init(_ which: Which, arguments: inout Arguments) throws {
        self.which = which
        let ramp = which == .tempo && arguments.flag("--ramp")
        folder = SessionFolder(path: try arguments.required("a session folder"))
        let name = which.rawValue
        guard let verb = arguments.positional() else {
            if ramp { throw UsageError("tempo: --ramp goes with add (tempo SESSION add BAR BPM --ramp)") }
            edit = nil
            return
        }
        func operand(_ what: String) throws(UsageError) -> String {
            guard let v = arguments.positional() else { throw UsageError("\(name): \(verb) needs \(what)") }
            return v
        }
        switch verb.lowercased() {
        case "list": edit = nil
        case "add", "set": edit = .add(bar: try operand("a bar"), value: try operand(which == .tempo ? "a tempo in BPM" : "a meter N/D"), ramp: ramp)
        case "remove", "delete": edit = .remove(bar: try operand("a bar"))
        default:
            throw UsageError("\(name): unknown action '\(verb)'\(NameMatch.suggestion(verb, in: ["add", "remove", "list"])) (add, remove or list)")
        }
        if ramp, case .remove = edit { throw UsageError("tempo: --ramp goes with add") }
    }

    /// A bar as typed: `17`, `17.1.1` or `17|1|0` (changes sit on a bar's first beat).
    static func bar(_ text: String, command: String) throws(UsageError) -> Int {
        let t = text.trimmingCharacters(in: .whitespaces)
        let parts = t.split(separator: t.contains("|") ? "|" : ".", omittingEmptySubsequences: false)
        if let first = parts.first, first.count > 9, first.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw UsageError("\(command): bar \(first) lies past the timeline's end")
        }
        guard let first = parts.first, !first.isEmpty, first.allSatisfy({ $0.isASCII && $0.isNumber }), let bar = Int(first), bar >= 1 else {
            throw UsageError("\(command): '\(text.terminalSafe)' is not a bar (write 17, 17.1.1 or 17|1|0; bars count from 1)")
        }
        let rest = parts.dropFirst()
        let first1 = rest.first.map { $0 == "1" } ?? true
        let zeros = rest.dropFirst().allSatisfy { $0.allSatisfy { $0 == "0" } || $0 == "1" }
        guard rest.count <= 3, first1, zeros else {
            throw UsageError("\(command): changes sit on a bar's first beat: '\(text.terminalSafe)' is inside bar \(bar) (write \(bar) or \(bar).1.1)")
        }
        return bar
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // One writer per session (see SessionLock): only a change takes the lock; showing reads.
        let lock = edit != nil ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let name = which.rawValue
        if let edit {
            // The words resolve to the change the screen's tempo dialog makes (TempoMapChange).
            let change: TempoMapChange
            switch (which, edit) {
            case (.tempo, .add(let barText, let value, let ramp)):
                let bar = try TempoMapCommand.bar(barText, command: name)
                guard let bpm = Double(value.lowercased().replacingOccurrences(of: "bpm", with: "")), bpm.isFinite else {
                    throw UsageError("tempo: '\(value.terminalSafe)' is not a tempo (write BPM such as 140 or 92.5)")
                }
                change = .tempo(bar: bar, bpm: bpm, ramp: ramp)
            case (.meter, .add(let barText, let value, _)):
                change = .meter(bar: try TempoMapCommand.bar(barText, command: name), try TempoMapCommand.meter(value))
            case (.tempo, .remove(let barText)):
                change = .removeTempo(bar: try TempoMapCommand.bar(barText, command: name))
            case (.meter, .remove(let barText)):
                change = .removeMeter(bar: try TempoMapCommand.bar(barText, command: name))
            }
            // One step: MIDI regions keep their bars and beats (audio regions keep their time).
            let moved: Int
            do {
                moved = try document.apply(change, keepingMIDIBarsIn: folder)
            } catch let error as TempoEditError {
                throw UsageError("\(name): \(error.description)")
            }
            try context.save(document.session, to: folder)
            if moved > 0 { context.console.err("\(moved) MIDI region\(moved == 1 ? "" : "s") moved to keep \(moved == 1 ? "its" : "their") bars\n") }
        }
        context.console.out(document.session.tempoMapListing)
        return ExitCode.ok
    }

    /// `N/D` such as 7/8.
    static func meter(_ text: String) throws(UsageError) -> TimeSignature {
        guard let signature = TempoMap.signature(parsing: text) else {
            throw UsageError("meter: '\(text.terminalSafe)' must be N/D like 4/4 or 7/8 (N 1...64, D 1, 2, 4, 8, 16 or 32)")
        }
        return signature
    }
}

/// `tapedeck tempo SESSION [add BAR BPM [--ramp] | remove BAR | list]`.
struct TempoCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "tempo", summary: "list the tempo map, or add or remove a tempo change at a bar",
        synopsis: ["tempo SESSION [list]", "tempo SESSION add BAR BPM [--ramp]", "tempo SESSION remove BAR"],
        positionals: [PositionalSpec("SESSION", complete: .session),
                      PositionalSpec("ACTION", complete: .choices, choices: ["add", "remove", "list"])],
        options: [OptionSpec(flag: "--ramp", "add: glide into this tempo from the change before (linearly in time)")],
        details: """
        Lists the tempo map (each change's bar, where it falls, tempo and meter). add sets the
        tempo from BAR on (BAR is 17, 17.1.1 or 17|1|0: changes sit on a bar's first beat; bar
        1 is the session's own tempo); with --ramp the tempo glides there from the change
        before, arriving at BAR. A tempo counts beats of the meter in force (in 7/8, eighths).
        The click, count-in, snap, quantise, bars|beats, typed bar times, what nodes and JACK
        are told and export --midi follow the map; audio regions keep their time, MIDI regions
        their bars and beats (their notes go to a new file).
        """,
        examples: ["tapedeck tempo song.tapedeck add 17 140", "tapedeck tempo song.tapedeck add 33.1.1 90 --ramp"])

    let command: TempoMapCommand

    init(arguments: inout Arguments) throws { command = try TempoMapCommand(.tempo, arguments: &arguments) }
    func run(_ context: CommandContext) throws -> Int32 { try command.run(context) }
}

/// `tapedeck meter SESSION [add BAR N/D | remove BAR | list]`.
struct MeterCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "meter", summary: "list the tempo map, or add or remove a meter change at a bar",
        synopsis: ["meter SESSION [list]", "meter SESSION add BAR N/D", "meter SESSION remove BAR"],
        positionals: [PositionalSpec("SESSION", complete: .session),
                      PositionalSpec("ACTION", complete: .choices, choices: ["add", "remove", "list"])],
        details: """
        Lists the tempo map. add sets the time signature from BAR on (bar 1: the session's own);
        a meter change cannot fall inside a tempo ramp.
        """,
        examples: ["tapedeck meter song.tapedeck add 33 7/8"])

    let command: TempoMapCommand

    init(arguments: inout Arguments) throws { command = try TempoMapCommand(.meter, arguments: &arguments) }
    func run(_ context: CommandContext) throws -> Int32 { try command.run(context) }
}
