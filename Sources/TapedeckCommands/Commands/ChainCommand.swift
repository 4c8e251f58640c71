import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckTransport

/// `tapedeck chain`: sets or shows a track's, a bus's or the master's effect chain.
struct ChainCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "chain", summary: "set or show a track's input or playback chain, a bus's chain, or the master chain",
        synopsis: ["chain SESSION TRACK|BUS|master [--input] [CHAIN]"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("TRACK|master", complete: .none),
                      PositionalSpec("CHAIN", complete: .none)],
        options: [OptionSpec(flag: "--input", "set or show the chain recording goes through, not the playback chain")],
        details: """
        TRACK is a 1-based number or a track name. Without --input the playback chain is set
        (it runs on the track before its fader); with --input, the chain recording goes through.
        `master` sets the chain on the mix. A bus is named like a track and has one chain (it
        runs on what the bus sums, before its fader; a bus has no input chain). Without CHAIN the current one is printed; an empty
        CHAIN ('') clears it. The chain is checked before anything is saved and the session
        stores it in canonical form.

        LV2 plugins are written lv2:URI or lv2:SHORTNAME (`tapedeck nodes --lv2`). Setting a
        chain starts its plugins once: a plugin that keeps state (an impulse response, a
        sample) has it saved in SESSION/plugins/ and its entry says @state=NAME; a preset
        (@preset=NAME) is applied first. A plugin that is not installed is kept, passed through,
        and named in a warning.

        Instruments go first in a MIDI track's chain: `gm` (General MIDI through FluidSynth,
        gm:font=FILE.sf2 for another SoundFont, gm:program=N) or `sampler:file=kick.wav`
        (root=NOTE, mode=gate|oneshot|loop). A sample outside the session is copied into
        SESSION/samples/ and the chain names the copy.
        """,
        examples: ["tapedeck chain song.tapedeck 2 'hpf:80,comp:threshold=-18:ratio=4'",
                   "tapedeck chain song.tapedeck Vocal --input 'gate:-50,hpf:100'",
                   "tapedeck chain song.tapedeck master 'limiter:ceiling=-1'",
                   "tapedeck chain song.tapedeck Reverb 'reverb:size=0.8:mix=1'",
                   "tapedeck chain song.tapedeck 1 'lv2:amp:-3,lv2:zeroconvolv-mono:@preset=No-OP Mono'",
                   "tapedeck chain song.tapedeck drums 'sampler:file=kick.wav:root=36:mode=oneshot'",
                   "tapedeck chain song.tapedeck piano 'gm:program=0,reverb'"])

    let folder: SessionFolder
    let trackText: String
    let input: Bool
    let chainText: String?

    init(arguments: inout Arguments) throws {
        input = arguments.flag("--input")
        folder = SessionFolder(path: try arguments.required("a session folder"))
        trackText = try arguments.required("a track number, name or 'master'")
        chainText = arguments.positional()
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // Only a change needs the session's lock; showing the chain reads.
        let lock = try chainText.map { _ throws(SessionError) in try SessionLock.acquire(folder) }
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let isMaster = trackText == "master"
        if isMaster && input { throw UsageError("chain: the master has no input chain") }
        let index = isMaster ? nil : try TrackSelector.index(of: trackText, in: document.session, command: "chain")
        if let index, input { try TrackSelector.refuseBus(index, in: document.session, command: "chain", "has no input, so no input chain (its one chain runs on what it sums)") }
        guard let chainText else {
            // The session's chains, read once for this run: the text shown and the chain its
            // missing nodes are named from are one slot.
            let chains = SessionChains(document.session)
            let slot = index.map { chains.slot($0, input ? .input : .playback) } ?? chains.masterSlot
            let current = slot.text
            context.console.out(current.isEmpty ? "(no effects)" : current.terminalSafe)
            if let chain = slot.value {
                for (i, entry) in chain.entries.enumerated() where entry.isMissing {
                    context.console.out("  node \(i + 1) (\(NodeReference.text(ofNode: entry.node).terminalSafe)) is not installed here: passed through")
                }
            }
            return ExitCode.ok
        }
        if let index, !input, document.session.tracks[index].frozen != nil {
            throw UsageError("chain: \(document.session.tracks[index].name.terminalSafe) is frozen: unfreeze it first (tapedeck track SESSION \(index + 1) --unfreeze)")
        }
        let parsed = try ChainFiles.adopt(try Chain(parsing: chainText), into: folder, workingFolder: context.workingFolder)
        let (chain, problems) = try startedChain(parsed, sampleRate: document.session.sampleRate)
        // The change the screen's chain dialog makes (ChainChange).
        let at: ChainValueChange.Place = index.map { input ? .input(strip: $0) : .playback(strip: $0) } ?? .master
        try TrackSelector.refusing("chain") { try document.apply(ChainChange(place: at, chain: chain)) }
        try context.save(document.session, to: folder)
        SessionPluginStates.removeUnreferenced(in: folder)
        let place = index.map { i in
            document.session.tracks[i].isBus ? RoutingText.label(document.session, i) : "\(RoutingText.label(document.session, i)) \(input ? "input" : "playback")"
        } ?? "master"
        context.console.out("\(place) chain: \(chain.text.isEmpty ? "(no effects)" : chain.text)")
        for problem in problems { context.console.err("tapedeck: warning: \(problem.terminalSafe)\n") }
        return ExitCode.ok
    }

    /// Starts a chain that holds plugins once, offline, as export will, and returns it with
    /// every plugin's state saved into the session (`@state=`), and what did not work.
    private func startedChain(_ chain: Chain, sampleRate: Int) throws -> (Chain, [String]) {
        // Plugins (state to save) and nodes that read files (a sample, a SoundFont) are started
        // once, so what does not work is said now.
        guard chain.entries.contains(where: { ($0.node.contains(":") && !$0.isMissing) || !$0.texts.isEmpty
                                              || NodeRegistry.standard.descriptor(named: $0.node)?.name == "gm" }) else {
            return (chain, chain.entries.enumerated().filter(\.element.isMissing).map {
                "node \($0.offset + 1) (\(NodeReference.text(ofNode: $0.element.node))): not installed; passed through"
            })
        }
        let instance = chain.instantiate(stateFolder: folder.pluginStateFolder, files: SessionNodeFiles(folder: folder.path))
        defer { instance.release() }
        instance.prepare(format: NodeFormat(sampleRate: Double(sampleRate), channelCount: 2, isRealtime: false), maxFrames: 1024)
        return (try instance.capturingState(in: folder.pluginStateFolder), instance.problems)
    }
}
