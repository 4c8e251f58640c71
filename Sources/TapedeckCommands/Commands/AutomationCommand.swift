import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckEngine

/// `tapedeck automation`: a strip's lanes from the command line — add points, list them,
/// clear a range, set a lane's mode, and a lane in and out as CSV for scripts.
struct AutomationCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "automation", summary: "automate a strip's fader, pan, mute, sends and node parameters over time",
        synopsis: ["automation SESSION TRACK", "automation SESSION TRACK PARAM [list [RANGE]]",
                   "automation SESSION TRACK PARAM add TIME VALUE [--curve linear|exponential]",
                   "automation SESSION TRACK PARAM clear [RANGE]", "automation SESSION TRACK PARAM mode off|play|touch|latch|write",
                   "automation SESSION TRACK PARAM csv [--output FILE]", "automation SESSION TRACK PARAM import FILE.csv [--replace]"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("TRACK", complete: .none),
                      PositionalSpec("PARAM", complete: .choices, choices: ["gain", "pan", "mute"]),
                      PositionalSpec("ACTION", complete: .choices, choices: ["list", "add", "clear", "mode", "csv", "import"])],
        options: [
            OptionSpec("--curve", value: "CURVE", "add: how the lane goes from this point to the next: linear (default) or exponential"),
            OptionSpec("--output", value: "FILE", "csv: write the CSV here rather than to standard output"),
            OptionSpec(flag: "--replace", "import: the CSV's points replace the lane's (default: added to them)"),
        ],
        details: """
        PARAM is gain (the fader, dB), pan (L100…C…R100), mute (on/off), send:BUS (a send's
        level, dB) or NODE.PARAM, a parameter of the strip's chain: the node by its name (the
        first of that name) or its place, the parameter by its id (lpf.cutoff, 2.feedback; an
        LV2 plugin's port symbol). A lane with points plays unless its mode says otherwise: off
        (the control's own value is heard), play, touch, latch or write (a control moved while
        rolling is written into the lane: touch until released, latch until stopped, write
        throughout). Between two points a lane moves along the first one's curve: linear (in
        amplitude for levels), or exponential (in dB for levels: an even fade; in octaves for a
        cutoff). Mute steps. The fader is applied frame by frame, other values at least every
        32 frames through the node's own smoothing, live and in export alike; at another
        speed the lane follows the timeline. RANGE is START-END (1:00-1:30, 10.1.1-12.1.1).
        The CSV is one point a line, `time,value[,curve]`, time in seconds (or 90000f frames,
        or bars), a `time,value` header allowed.
        """,
        examples: ["tapedeck automation song.tapedeck Vocal gain add 1:00 -inf",
                   "tapedeck automation song.tapedeck Vocal gain add 1:01 0 --curve exponential",
                   "tapedeck automation song.tapedeck Keys lpf.cutoff add 30 8000",
                   "tapedeck automation song.tapedeck Vocal send:Reverb csv > verb.csv",
                   "tapedeck automation song.tapedeck Vocal gain mode off"])

    /// What to do.
    enum Action: Codable {
        case lanes, list(String?), add(String, String, AutomationCurve), clear(String?), mode(AutomationMode), csv(String?)
        case importCSV(String, replace: Bool)
    }

    let folder: SessionFolder
    let track: String
    let parameter: AutomationParameter?
    let action: Action

    init(arguments: inout Arguments) throws {
        folder = SessionFolder(path: try arguments.required("a session folder"))
        track = try arguments.required("a track (its number or name)")
        let curveText = try arguments.option("--curve")
        let output = try arguments.option("--output")
        let replace = arguments.flag("--replace")
        guard let paramText = arguments.positional() else {
            parameter = nil
            action = .lanes
            return
        }
        do { parameter = try AutomationParameter.parse(paramText) } catch { throw UsageError("automation: \(error.description)") }
        let verb = arguments.positional()?.lowercased() ?? "list"
        func operand(_ what: String) throws(UsageError) -> String {
            guard let v = arguments.positional() else { throw UsageError("automation: \(verb) needs \(what)") }
            return v
        }
        switch verb {
        case "list", "show": action = .list(arguments.positional())
        case "add":
            let time = try operand("a time")
            let value = try operand("a value")
            var curve = AutomationCurve.linear
            if let curveText {
                guard let c = AutomationCurve(rawValue: curveText.lowercased()) else {
                    throw UsageError("automation: --curve '\(curveText.terminalSafe)' is not linear or exponential")
                }
                curve = c
            }
            action = .add(time, value, curve)
        case "clear": action = .clear(arguments.positional())
        case "mode":
            let word = try operand("a mode (off, play, touch, latch or write)")
            guard let m = AutomationMode(rawValue: word.lowercased()) else {
                throw UsageError("automation: '\(word.terminalSafe)' is not a mode\(NameMatch.suggestion(word, in: AutomationMode.allCases.map(\.rawValue))) (off, play, touch, latch or write)")
            }
            action = .mode(m)
        case "csv", "export": action = .csv(output)
        case "import": action = .importCSV(try operand("a CSV file"), replace: replace)
        default:
            let verbs = ["list", "add", "clear", "mode", "csv", "import"]
            throw UsageError("automation: unknown action '\(verb.terminalSafe)'\(NameMatch.suggestion(verb, in: verbs)) (\(verbs.joined(separator: ", ")))")
        }
        if curveText != nil, case .add = action {} else if curveText != nil { throw UsageError("automation: --curve goes with add") }
        if output != nil, case .csv = action {} else if output != nil { throw UsageError("automation: --output goes with csv") }
        if replace, case .importCSV = action {} else if replace { throw UsageError("automation: --replace goes with import") }
    }

    /// Whether the action changes the session (and so takes its lock).
    private var changes: Bool {
        switch action {
        case .add, .clear, .mode, .importCSV: return true
        default: return false
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let lock = changes ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let session = document.session
        let index = try TrackSelector.index(of: track, in: session, command: "automation")
        let strip = session.tracks[index]
        let map = session.tempoMap
        guard let parameter else {
            context.console.out(strip.automation.isEmpty ? "\(strip.name.terminalSafe): no automation"
                : strip.automation.map { lane in
                    let span = lane.points.isEmpty ? "" : "  \(session.clockText(lane.points[0].frame))-\(session.clockText(lane.points[lane.points.count - 1].frame))"
                    return "  \(lane.parameter.description.terminalSafe)  \(lane.mode.rawValue)  \(lane.points.count) point\(lane.points.count == 1 ? "" : "s")\(span)"
                }.joined(separator: "\n"))
            return ExitCode.ok
        }
        // The session's chains, read once for this run: a node's lane is checked against them.
        let chains = SessionChains(session)
        try AutomationCommand.check(parameter, on: strip, chain: chains.slot(index).chain)
        let lane = strip.laneIndex(parameter).map { strip.automation[$0] } ?? AutomationLane(parameter: parameter)
        func range(_ text: String?) throws -> FrameRange? {
            guard let text else { return nil }
            do { return try TimeText.range(from: text, tempoMap: map, defaultEnd: SessionLimits.maximumTimelineFrames) } catch {
                throw UsageError("automation: \(error)")
            }
        }
        switch action {
        case .lanes: return ExitCode.ok
        case .list(let text):
            let r = try range(text)
            let shown = lane.points.filter { r == nil || ($0.frame >= r!.startFrame && $0.frame < r!.endFrame) }
            var lines = ["\(strip.name.terminalSafe) \(parameter.description.terminalSafe): \(lane.mode.rawValue), \(lane.points.count) point\(lane.points.count == 1 ? "" : "s")"]
            lines += shown.map { "  \(session.clockText($0.frame))  \(parameter.valueText($0.value))\($0.curve == .exponential ? "  exponential" : "")" }
            context.console.out(lines.joined(separator: "\n"))
            return ExitCode.ok
        case .csv(let output):
            let text = AutomationCSV.text(lane, sampleRate: session.sampleRate)
            if let output {
                // Never over anything a session owns (this one's session.json, its recordings,
                // its history…), atomically, also when the screen runs this for the asker.
                try WriteGuard.write(Array(text.utf8), to: output, as: "automation: --output",
                                     sessions: [SessionReferences.protected(session, folder: folder, chains: chains)])
            } else {
                context.console.out(text, newline: false)
            }
            return ExitCode.ok
        default: break
        }
        // Said only once the point is saved: a refused edit says only why.
        var farWarning: String?
        // The words resolve to the change the screen's lane keys make (AutomationChange).
        let change: AutomationChange
        switch action {
        case .add(let timeText, let valueText, let curve):
            let frame: Int64
            do { frame = try TimeText.frames(from: timeText, tempoMap: map) } catch { throw UsageError("automation: \(error)") }
            farWarning = session.farPastEndWarning(frame, typed: timeText)
            let value: Double
            do { value = try parameter.parseValue(valueText) } catch { throw UsageError("automation: \(error.description)") }
            change = .add(strip: index, parameter, [AutomationPoint(frame: frame, value: value, curve: curve)], replacing: false)
        case .clear(let text):
            change = .clear(strip: index, parameter, try range(text), droppingEmptyLane: true)
        case .mode(let mode):
            change = .mode(strip: index, parameter, mode)
        case .importCSV(let path, let replace):
            if let why = RegularFile.refusal(path: path) { throw UsageError("automation: \(path.terminalSafe): \(why)") }
            let text: String
            do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw UsageError("automation: cannot read \(path.terminalSafe): \(error.localizedDescription)")
            }
            let points: [AutomationPoint]
            do { points = try AutomationCSV.points(text, parameter: parameter, tempoMap: map) } catch {
                throw UsageError("automation: \(path.terminalSafe): \(error.description)")
            }
            change = .add(strip: index, parameter, points, replacing: replace)
        default: return ExitCode.ok
        }
        let cleared = try TrackSelector.refusing("automation") { try document.apply(change) }
        let after = document.session.tracks[index]
        let count = after.laneIndex(parameter).map { after.automation[$0].points.count } ?? 0
        let points = { (n: Int) in "\(n) point\(n == 1 ? "" : "s")" }
        let said: String
        switch change {
        case .add(_, _, let added, _):
            if case .importCSV(let path, _) = action {
                said = "\(strip.name.terminalSafe) \(parameter): \(points(added.count)) from \(path.terminalSafe); \(count) in the lane"
            } else {
                let p = added[0]
                said = "\(strip.name.terminalSafe) \(parameter): \(parameter.valueText(p.value)) at \(session.clockText(p.frame))\(p.curve == .exponential ? " (exponential to the next)" : ""); \(points(count))"
            }
        case .clear(_, _, let r, _):
            said = "\(strip.name.terminalSafe) \(parameter): \(points(cleared)) cleared\(r.map { " in \(session.clockText($0.startFrame))-\(session.clockText($0.endFrame))" } ?? "")"
        case .mode(_, _, let mode):
            said = "\(strip.name.terminalSafe) \(parameter): \(mode.rawValue)"
        case .move:
            said = "" // not a command-line edit: the screen's
        }
        if let problem = SessionValidator.problem(in: document.session) { throw UsageError("automation: \(problem)") }
        try context.save(document.session, to: folder)
        if let farWarning { context.console.err("tapedeck: warning: \(farWarning)\n") }
        context.console.out(said)
        return ExitCode.ok
    }

    /// Refuses a parameter the strip does not have: a send to a bus it does not send to, a
    /// node not in its chain, a built-in node's parameter it does not have (with the choices).
    /// `chain` is the strip's playback chain as the session's chains read it (or why not).
    static func check(_ parameter: AutomationParameter, on strip: Track, chain read: Result<Chain, ChainError>) throws {
        switch parameter {
        case .gain, .pan, .mute: return
        case .send(let bus):
            guard strip.sends.contains(where: { $0.bus.lowercased() == bus.lowercased() }) else {
                let names = strip.sends.map(\.bus)
                throw UsageError("automation: \(strip.name.terminalSafe) has no send to \(bus.terminalSafe)"
                                 + (names.isEmpty ? " (it has no sends: tapedeck send adds one)" : " (its sends: \(names.joined(separator: ", ")))"))
            }
        case .node(let node, let id):
            let chain: Chain
            do { chain = try read.get() } catch { throw UsageError("automation: \(strip.name.terminalSafe) chain: \(error)") }
            guard let at = AutomationTargets.nodeIndex(node, in: chain) else {
                let names = chain.entries.map(\.node)
                throw UsageError("automation: \(strip.name.terminalSafe)'s chain has no node \(node.terminalSafe)"
                                 + (names.isEmpty ? " (its chain is empty)" : " (its nodes: \(names.joined(separator: ", ")))"))
            }
            // Built-in nodes say their parameters; a provider's (LV2) are known once loaded.
            if let type = NodeRegistry.standard.type(named: chain.entries[at].node) {
                let ids = type.descriptor.parameters.map(\.id)
                guard ids.contains(where: { $0.lowercased() == id.lowercased() }) else {
                    throw UsageError("automation: \(chain.entries[at].node) has no parameter \(id.terminalSafe)\(NameMatch.suggestion(id, in: ids)) (\(ids.joined(separator: ", ")))")
                }
            }
        }
    }
}
