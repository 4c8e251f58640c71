import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// `tapedeck learn`: the MIDI controllers bound to faders, pans, mutes and node parameters
/// (what MIDI learn on the screen makes), listed, added and removed from a script.
struct LearnCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "learn", summary: "list, bind or remove MIDI controllers moving faders, pans, mutes, send levels and node parameters",
        synopsis: ["learn SESSION",
                   "learn SESSION --cc N [--channel C] --fader TRACK|--pan TRACK|--mute TRACK|--master|--param TRACK:NODE:PARAM [--input-chain]|--send TRACK:BUS",
                   "learn SESSION --remove N | --clear"],
        positionals: [PositionalSpec("SESSION", complete: .session)],
        options: [
            OptionSpec("--cc", value: "N", "the controller number, 0...127"),
            OptionSpec("--channel", value: "C", "only on MIDI channel C, 1...16 (default: any)"),
            OptionSpec("--fader", value: "TRACK", "move the track's fader (CC 0 is -inf, 100 is 0 dB, 127 +4.2 dB)"),
            OptionSpec("--pan", value: "TRACK", "move the track's pan (64 is the centre)"),
            OptionSpec("--mute", value: "TRACK", "switch the track's mute (on from 64)"),
            OptionSpec(flag: "--master", "move the master fader"),
            OptionSpec("--param", value: "TRACK:NODE:PARAM", "move a node's parameter across its range (node 1-based in the chain, e.g. synth:2:cutoff)"),
            OptionSpec(flag: "--input-chain", "with --param: the node is in the track's input chain"),
            OptionSpec("--send", value: "TRACK:BUS", "move the level of the track's send to BUS, as a fader"),
            OptionSpec("--remove", value: "N", "remove binding N (as listed)"),
            OptionSpec(flag: "--clear", "remove every binding"),
        ],
        details: """
        Bindings are saved in the session and work wherever the session plays (the screen,
        record, play): the controller moves its target at once, on the audio thread, and the
        screen shows the new value. One binding per controller and channel: binding a
        controller again replaces it. On the screen, ctrl-l learns the next controller you move.
        Tracks are named by number or name (any case); a binding follows its track's renames.
        """,
        examples: ["tapedeck learn song.tapedeck --cc 7 --fader vocal",
                   "tapedeck learn song.tapedeck --cc 74 --channel 1 --param synth:2:cutoff",
                   "tapedeck learn song.tapedeck --cc 12 --send vocal:Reverb",
                   "tapedeck learn song.tapedeck --remove 2"])

    let folder: SessionFolder
    let controller: Int?
    let channel: Int?
    let target: Target?

    /// What the controller moves: its kind and the text naming it (`vocal:Reverb`).
    struct Target: Codable {
        var kind: MIDIBinding.Kind
        var text: String?
    }
    let inputChain: Bool
    let remove: Int?
    let clear: Bool

    init(arguments: inout Arguments) throws {
        controller = try arguments.intOption("--cc", in: 0...127)
        channel = try arguments.intOption("--channel", in: 1...16)
        remove = try arguments.intOption("--remove", in: 1...SessionLimits.maximumMIDIBindings)
        clear = arguments.flag("--clear")
        inputChain = arguments.flag("--input-chain")
        var targets: [(MIDIBinding.Kind, String?)] = []
        if let t = try arguments.option("--fader") { targets.append((.fader, t)) }
        if let t = try arguments.option("--pan") { targets.append((.pan, t)) }
        if let t = try arguments.option("--mute") { targets.append((.mute, t)) }
        if arguments.flag("--master") { targets.append((.master, nil)) }
        if let t = try arguments.option("--param") { targets.append((.parameter, t)) }
        if let t = try arguments.option("--send") { targets.append((.send, t)) }
        folder = SessionFolder(path: try arguments.required("a session folder"))
        if targets.count > 1 { throw UsageError("learn: bind a controller to one thing (--fader, --pan, --mute, --master, --param or --send)") }
        target = targets.first.map { Target(kind: $0.0, text: $0.1) }
        try validate()
    }

    /// What goes with what, and the numbers' ranges: checked here for the command line and
    /// again for a value handed over as JSON (``HandedCommand``).
    func validate() throws(UsageError) {
        try HandedCheck.within(controller, 0...127, "learn", "--cc")
        try HandedCheck.within(channel, 1...16, "learn", "--channel")
        try HandedCheck.within(remove, 1...SessionLimits.maximumMIDIBindings, "learn", "--remove")
        let binding = controller != nil || target != nil
        if binding && (remove != nil || clear) { throw UsageError("learn: bind, --remove or --clear: one at a time") }
        if remove != nil && clear { throw UsageError("learn: --remove N or --clear, not both") }
        if let controller, target == nil { throw UsageError("learn: --cc \(controller) needs what it moves (--fader TRACK, --pan TRACK, --mute TRACK, --master, --param TRACK:NODE:PARAM or --send TRACK:BUS)") }
        if target != nil && controller == nil { throw UsageError("learn: give the controller with --cc N (0...127)") }
        if channel != nil && !binding { throw UsageError("learn: --channel goes with --cc") }
        if inputChain && target?.kind != .parameter { throw UsageError("learn: --input-chain goes with --param") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let changes = controller != nil || remove != nil || clear
        let lock = changes ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let session = document.session
        // The words resolve to the change the screen's MIDI learn makes too (BindingChange).
        if clear {
            let n = try TrackSelector.refusing("learn") { try document.apply(.removeAll) }.count
            try context.save(document.session, to: folder)
            context.console.out("removed \(n) binding\(n == 1 ? "" : "s")")
            return ExitCode.ok
        }
        if let remove {
            let gone = try TrackSelector.refusing("learn") { try document.apply(.remove(index: remove - 1)) }
            try context.save(document.session, to: folder)
            context.console.out("removed \(gone.map(\.description).joined(separator: ", "))")
            return ExitCode.ok
        }
        if let controller, let target {
            // The session's chains, read once for this run (a node parameter is checked against them).
            let binding = try makeBinding(controller: controller, kind: target.kind, text: target.text, session: session,
                                          chains: SessionChains(session))
            try TrackSelector.refusing("learn") { try document.apply(.bind(binding)) }
            try context.save(document.session, to: folder)
            context.console.out("bound \(binding)")
            return ExitCode.ok
        }
        if session.midiBindings.isEmpty {
            context.console.out("no MIDI controllers are bound (learn one: tapedeck learn SESSION --cc 7 --fader TRACK, or ctrl-l on the screen)")
        }
        for (i, b) in session.midiBindings.enumerated() { context.console.out("\(i + 1)  \(b)") }
        return ExitCode.ok
    }

    /// The binding the flags describe, its track and parameter checked against the session
    /// and its chains as `chains` read them.
    private func makeBinding(controller: Int, kind: MIDIBinding.Kind, text: String?, session: Session,
                             chains: SessionChains) throws -> MIDIBinding {
        switch kind {
        case .master:
            return MIDIBinding(controller: controller, channel: channel, kind: .master)
        case .fader, .pan, .mute:
            let t = try TrackSelector.index(of: text ?? "", in: session, command: "learn")
            return MIDIBinding(controller: controller, channel: channel, kind: kind, track: session.tracks[t].name)
        case .parameter:
            // TRACK:NODE:PARAM, where the track's name may itself hold ':' (the last two parts are the node and parameter).
            let parts = (text ?? "").split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 3, let node = Int(parts[parts.count - 2]), node >= 1 else {
                throw UsageError("learn: --param '\(text ?? "")' must be TRACK:NODE:PARAM (node 1-based, e.g. synth:2:cutoff)")
            }
            let t = try TrackSelector.index(of: parts.dropLast(2).joined(separator: ":"), in: session, command: "learn")
            if inputChain { try TrackSelector.refuseBus(t, in: session, command: "learn", "has no input, so no input chain") }
            let track = session.tracks[t]
            let chain = try chains.slot(t, inputChain ? .input : .playback).chain.get()
            guard chain.entries.indices.contains(node - 1) else {
                throw UsageError("learn: the \(inputChain ? "input" : "playback") chain of \(track.name) has \(chain.entries.count) node\(chain.entries.count == 1 ? "" : "s"); there is no node \(node)")
            }
            let entry = chain.entries[node - 1]
            let ids = NodeRegistry.standard.descriptor(named: entry.node)?.parameters.map(\.id) ?? []
            let id = parts[parts.count - 1]
            guard let match = ids.first(where: { $0.lowercased() == id.lowercased() }) else {
                throw UsageError("learn: node \(node) (\(NodeReference.text(ofNode: entry.node))) has no parameter '\(id)'\(NameMatch.suggestion(id, in: ids)) (it has \(ids.joined(separator: ", ")))")
            }
            return MIDIBinding(controller: controller, channel: channel, kind: .parameter, track: track.name, node: node,
                               parameter: match, inputChain: inputChain ? true : nil)
        case .send:
            // TRACK:BUS, where the track's name may itself hold ':' (the last part is the bus).
            let parts = (text ?? "").split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, !parts[parts.count - 1].isEmpty else {
                throw UsageError("learn: --send '\(text ?? "")' must be TRACK:BUS (vocal:Reverb)")
            }
            let t = try TrackSelector.index(of: parts.dropLast().joined(separator: ":"), in: session, command: "learn")
            let track = session.tracks[t], bus = parts[parts.count - 1]
            guard let send = track.sends.first(where: { $0.bus.lowercased() == bus.lowercased() }) else {
                let buses = track.sends.map(\.bus)
                throw UsageError("learn: \(track.name) has no send to '\(bus)'\(NameMatch.suggestion(bus, in: buses))"
                                 + (buses.isEmpty ? " (it has no sends: tapedeck send SESSION TRACK BUS)" : " (it sends to \(buses.joined(separator: ", ")))"))
            }
            return MIDIBinding(controller: controller, channel: channel, kind: .send, track: track.name, bus: send.bus)
        }
    }
}
