import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckRemote
import TapedeckTransport

// MARK: - MIDI on the screen: MIDI tracks, quantise, freeze, MIDI learn, and following what
// MIDI changed (a binding learnt, controllers moved, the loop switched by a surface).

extension ScreenModel {
    /// Adds a MIDI track playing through the General MIDI instrument, selected.
    func newMIDITrack() {
        var n = 1
        while session.tracks.contains(where: { $0.name.lowercased() == "midi \(n)" }) { n += 1 }
        guard trackEdit(.add(name: "MIDI \(n)", midi: true)) else { return }
        selectTrack(session.tracks.count - 1)
        say("new MIDI track: arm it (\(keyName(.arm))) to play it from a MIDI keyboard and record MIDI takes")
    }

    /// Asks for the grid and strength to quantise the target MIDI region to.
    func openQuantize() {
        guard let ref = targetRegion(), let region = try? session.region(ref) else { return }
        guard region.isMIDI else { say("\(describe(ref)) is audio: quantise moves MIDI notes", error: true); return }
        overlay = .text(TextInput(purpose: .quantize(ref), prompt: "Quantise \(describe(ref)) to (grid strength: 1/16 100%, 1/8t 50%, beat):",
                                  text: lastQuantize, offered: true))
    }

    /// Quantises the region to `text` (`GRID [STRENGTH]`): a new file with the moved notes, the
    /// region pointing at it, as one undoable edit. Nil when done, else why not.
    func applyQuantize(_ text: String, to ref: RegionRef) -> String? {
        guard let folder else { return "save the session first: quantised notes are written into its midi/ folder" }
        let words = text.split(separator: " ").map(String.init)
        guard let grid = words.first, words.count <= 2 else { return "write a grid and a strength, e.g. 1/16 100%" }
        let setting: QuantizeSetting
        switch QuantizeSetting.parse(grid: grid, strength: words.count > 1 ? words[1] : nil, timeSignature: session.timeSignature) {
        case .success(let s): setting = s
        case .failure(let e): return e.description
        }
        guard let region = try? session.region(ref) else { return "the region is gone" }
        do { try session.checkNotFrozen(ref.track) } catch { return error.description }
        let quantized: Region
        do { quantized = try MIDIRegionFile.quantized(region, setting: setting, folder: folder, tempoMap: session.tempoMap) } catch {
            return error.description
        }
        lastQuantize = text
        if regionEdit(.replace(with: quantized), ref) {
            say("quantised \(describe(ref)) to \(setting)")
        }
        return nil
    }

    /// Freezes the selected track (rendered in the background, then put on the track), or
    /// unfreezes it; each is one undoable step (the render stays on disk for undo).
    func toggleFreeze() {
        guard let t = requireNonBus("regions to freeze") else { return }
        let track = session.tracks[t]
        if track.frozen != nil {
            guard trackEdit(.unfreeze(strip: t)) else { return }
            say("\(track.name) unfrozen: its regions and chain play again")
            return
        }
        guard freezing == nil else { say("a freeze is already running", error: true); return }
        guard let folder, folder.exists else { say("save the session first: the render goes into its audio/ folder", error: true); return }
        guard let hook = hooks.freeze else { say("freezing is not available here", error: true); return }
        guard !track.regions.isEmpty else { say("\(track.name) has no regions: nothing to freeze", error: true); return }
        freezing = (track.name, FreezeJob(session: session, folderPath: folder.path, track: t, hook: hook))
        say("freezing \(track.name)…")
    }

    /// Puts a finished freeze on its track (found by name: tracks may have moved meanwhile).
    /// Called every tick.
    func followFreeze() {
        guard let (name, job) = freezing else { return }
        switch job.status {
        case .running(let fraction):
            if message?.isError != true { say("freezing \(name)… \(Int((fraction * 100).rounded()))%") }
        case .done(let frozen, let summary):
            freezing = nil
            guard let t = session.tracks.firstIndex(where: { $0.name == name }) else {
                say("\(name) is gone; its render stays in \(frozen.file)", error: true)
                return
            }
            guard trackEdit(.freeze(strip: t, render: frozen)) else { return }
            say(summary)
        case .failed(let why):
            freezing = nil
            say("cannot freeze \(name): \(why)", error: true)
        }
    }

    /// What a learnt controller's move at `value` (0…127) asks, as the command every front-end
    /// sends for that control (the transport's own translation, ``Session/change(for:value:chains:)``);
    /// nil when the binding names nothing in the session now (a track renamed, a node removed).
    func command(for binding: MIDIBinding, controllerValue value: Int) -> SurfaceCommand? {
        switch session.change(for: binding, value: value, chains: keptChains()) {
        case .mixer(let change)?: .mixer(change)
        case .chain(let change)?: .chain(change)
        case nil: nil
        }
    }

    /// MIDI learn, one press at a time: in the chain panel, the selected parameter; elsewhere
    /// the selected track's fader, then its pan, then its mute, then off.
    func cycleLearning() {
        guard let t = requireTrack() else { return }
        let name = session.tracks[t].name
        var next: MIDIBinding?
        if focus == .chain {
            if learning == nil, let chain = try? parsedChain(t), chain.entries.indices.contains(chainNode) {
                let states = chain.parameters(of: chainNode, registry: .standard)
                if states.indices.contains(chainParameter) {
                    next = MIDIBinding(controller: 0, kind: .parameter, track: name, node: chainNode + 1,
                                       parameter: states[chainParameter].definition.id, inputChain: chainIsInput ? true : nil)
                }
            }
        } else {
            switch learning?.kind {
            case nil: next = MIDIBinding(controller: 0, kind: .fader, track: name)
            case .fader?: next = MIDIBinding(controller: 0, kind: .pan, track: name)
            case .pan?: next = MIDIBinding(controller: 0, kind: .mute, track: name)
            default: next = nil
            }
        }
        learning = next
        link.learnController(for: next)
        if let next {
            let what = next.kind == .parameter ? "node \(next.node ?? 0) \(next.parameter ?? "")" : next.kind.rawValue
            say("MIDI learn: move a controller for \(name) \(what) (\(keyName(.learn)) again: \(next.kind == .fader ? "pan" : next.kind == .pan ? "mute" : "cancel"))")
        } else {
            say("MIDI learn off")
        }
    }

    /// Follows what MIDI changed: a learnt binding joins the session, controllers' moves set
    /// their faders, pans, mutes, sends and parameters (one undoable step per controller
    /// turned), a hand's automation pass is written. Called with every snapshot.
    func followMIDI() {
        followFreeze()
        let changes = link.collectMIDIChanges()
        if changes.isEmpty { return }
        if let learned = changes.learned {
            learning = nil
            // A bind is never refused (it replaces the controller's old binding).
            _ = try? owner.change { try $0.apply(BindingChange.bind(learned)) }
            say("learnt \(learned)")
        }
        // Each move is the command any surface sends for that control, carried out by the one
        // perform (checked, one undo step a turn, said); the transport and the engine have the
        // value already, so nothing is handed back (``SurfaceSource/controller``).
        for move in changes.moves {
            guard let command = command(for: move.binding, controllerValue: move.value) else { continue }
            if let why = perform(command, from: .controller, continuing: true) { say("MIDI \(move.binding): \(why)", error: true) }
        }
        if !changes.automationWrites.isEmpty {
            // One undo step per pass a hand wrote.
            let names = owner.writeAutomation(changes.automationWrites)
            if !names.isEmpty { say("automation written: \(names.joined(separator: ", "))") }
        }
    }
}
