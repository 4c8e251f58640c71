import TapedeckCore
import TapedeckDSP

// MARK: - The chain panel: the selected track's chain, edited through the DSP's one chain
// parser (``Chain``), so what the screen stores is canonical and what the engine reads.

extension ScreenModel {
    /// The panel's "track" for the master's chain (the mixer's master strip selected).
    static let masterChainTrack = -1

    /// What the chain panel edits: the selected track's chain, or the master's when the
    /// mixer's master strip is selected.
    var chainTrack: Int { actsOnMaster ? ScreenModel.masterChainTrack : selectedTrack }

    /// The chain text the panel edits for `track` (``masterChainTrack``: the master's).
    func chainText(_ track: Int) -> String {
        if track == ScreenModel.masterChainTrack { return session.masterChain }
        guard session.tracks.indices.contains(track) else { return "" }
        return chainIsInput ? session.tracks[track].inputChain : session.tracks[track].playbackChain
    }

    /// `Drums`, or `master`.
    func chainOwnerName(_ track: Int) -> String {
        track == ScreenModel.masterChainTrack ? "master" : session.tracks.indices.contains(track) ? session.tracks[track].name : "?"
    }

    /// Track `track`'s chain of `kind` (``masterChainTrack``: the master's) as the session's
    /// chains read it: parsed when its text last changed, never here (this runs while drawing).
    public func chain(_ track: Int, _ kind: SessionChains.Kind = .playback) -> SessionChains.Slot {
        chains.update(to: session)
        return track == ScreenModel.masterChainTrack ? chains.masterSlot : chains.slot(track, kind)
    }

    /// The session's chains, brought up to the session (only text not read before is parsed).
    func keptChains() -> SessionChains {
        chains.update(to: session)
        return chains
    }

    /// The registry the panel's chains were read against (built-in nodes and, once the LV2
    /// provider is installed, every LV2 plugin): an LV2 plugin's parameters show and step in
    /// the panel as a built-in node's do.
    var chainRegistry: NodeRegistry { chains.registry }

    /// The panel's chain for `track`; throws the chain error when the session holds text the
    /// parser refused (then only Enter, retyping it, can help).
    func parsedChain(_ track: Int) throws(ChainError) -> Chain {
        try chain(track, chainIsInput ? .input : .playback).chain.get()
    }

    /// Stores `chain` (its canonical text) as `track`'s chain: the ``ChainChange`` `tapedeck
    /// chain` makes too, one undoable step named by what was done (`remove node on Drums`).
    /// The parsed value is kept, so the chain is not read again. Returns the chain's place in
    /// words (`tone's input chain`), or nil when refused (said).
    @discardableResult
    func applyChain(_ chain: Chain, track: Int, kind: ChainChange.Kind = .edit) -> String? {
        chains.handIn(chain)
        guard let place = panelChainPlace(track) else { return nil }
        do { try owner.change { try $0.apply(ChainChange(place: place, chain: chain, kind: kind)) } } catch {
            say("\(error)", error: true)
            return nil
        }
        switch place {
        case .master: return "the master chain"
        case .input(let s): return "\(session.tracks[s].name)'s input chain"
        case .playback(let s): return "\(session.tracks[s].name)'s chain"
        }
    }

    /// Which chain of `track` the panel edits (`masterChainTrack`: the master's); nil when
    /// there is no such track, or, said with the key that unfreezes (a change's own line
    /// names no key), when it is a frozen track's playback chain.
    private func panelChainPlace(_ track: Int) -> ChainValueChange.Place? {
        if track == ScreenModel.masterChainTrack { return .master }
        guard session.tracks.indices.contains(track) else { return nil }
        if !chainIsInput, session.tracks[track].frozen != nil {
            say("\(session.tracks[track].name) is frozen: unfreeze it (\(keyName(.freeze))) to change its chain", error: true)
            return nil
        }
        return chainIsInput ? .input(strip: track) : .playback(strip: track)
    }

    /// One value of one node of the panel's chain moved (a parameter stepped, a bypass): one
    /// undoable step, and the transport gets exactly that value (``ChainValueChange``), heard
    /// through the node's smoothing without a new graph. False (nothing done) on a frozen
    /// track, said as ``applyChain(_:track:kind:)`` says it.
    @discardableResult
    func applyChainValue(_ value: ChainValueChange.Value, node: Int, track: Int, name: String) -> Bool {
        guard let place = panelChainPlace(track) else { return false }
        let change = ChainValueChange(place: place, node: node, value: value)
        owner.editChainValue("\(name) on \(chainOwnerName(track))", change, chains: &chains)
        return true
    }

    func openChainText() {
        if actsOnMaster {
            overlay = .text(TextInput(purpose: .chain(track: ScreenModel.masterChainTrack),
                                      prompt: "master chain (after the master fader's mix), e.g. comp:-12,limiter:-1 (!name bypasses)",
                                      text: session.masterChain))
            return
        }
        guard requireTrack() != nil else { return }
        let which = chainIsInput ? "input" : "playback"
        overlay = .text(TextInput(purpose: .chain(track: selectedTrack),
                                  prompt: "\(which) chain of \(session.tracks[selectedTrack].name), e.g. hpf:80,comp:-18:ratio=4 (!name bypasses)",
                                  text: chainText(selectedTrack)))
    }

    /// Switches the panel between the input and the playback chain; a bus has only the one
    /// it plays through.
    private func toggleInputChain(_ t: Int) {
        guard t != ScreenModel.masterChainTrack else {
            say("the master has one chain, the one its mix plays through", error: true)
            return
        }
        guard !session.tracks[t].isBus else {
            say("\(session.tracks[t].name) is a bus: a bus has no input chain, only the chain it plays through", error: true)
            return
        }
        chainIsInput.toggle()
    }

    /// Keys the chain panel takes before the key map. Returns whether the key was used.
    func handleChainKey(_ key: Key) -> Bool {
        let t = chainTrack
        guard t == ScreenModel.masterChainTrack || session.tracks.indices.contains(t) else { return false }
        let chain: Chain
        do { chain = try parsedChain(t) } catch {
            // Only retyping can mend a chain the parser refuses.
            guard key == .named(.enter) || key == .char("/") || key == .named(.up) || key == .named(.down) else { return false }
            if key == .named(.enter) { openChainText() }
            if key == .char("/") { toggleInputChain(t) }
            return true
        }
        var edited = chain
        let count = chain.entries.count
        switch key {
        case .named(.up): chainNode = max(0, chainNode - 1); chainParameter = 0
        case .named(.down): chainNode = min(max(0, count - 1), chainNode + 1); chainParameter = 0
        case .char(","), .char("."):
            let n = chain.parameters(of: chainNode, registry: chainRegistry).count
            if n > 0 { chainParameter = (chainParameter + (key == .char(".") ? 1 : n - 1)) % n }
        case .named(.left), .named(.right), .named(.shiftLeft), .named(.shiftRight), .named(.pgup), .named(.pgdn):
            let up = key == .named(.right) || key == .named(.shiftRight) || key == .named(.pgup)
            let coarse = key != .named(.left) && key != .named(.right)
            guard edited.step(entry: chainNode, parameter: chainParameter, steps: up ? 1 : -1, coarse: coarse, registry: chainRegistry) else {
                say("nothing to step here: choose a node and a numeric parameter (, and . pick it; note values are typed with Enter)", error: true)
                return true
            }
            guard let p = edited.parameters(of: chainNode, registry: chainRegistry)[safe: chainParameter],
                  applyChainValue(.parameter(p.definition.id, p.value), node: chainNode, track: t, name: "change parameter") else { return true }
            say("\(edited.entries[chainNode].node) \(p.definition.id) = \(p.displayText)")
        case .char("b"):
            guard chain.entries.indices.contains(chainNode) else { return true }
            let bypass = !chain.entries[chainNode].bypassed
            guard applyChainValue(.bypass(bypass), node: chainNode, track: t, name: bypass ? "bypass" : "un-bypass") else { return true }
            say("\(chain.entries[chainNode].node) \(bypass ? "bypassed" : "back in")")
        case .char("K"), .char("J"):
            let offset = key == .char("K") ? -1 : 1
            if edited.move(chainNode, by: offset) {
                chainNode += offset
                applyChain(edited, track: t, kind: .reorder)
            }
        case .char("x"), .named(.delete):
            if chain.entries.indices.contains(chainNode) { overlay = .confirm(.removeNode(track: t, node: chainNode)) }
        case .named(.enter): openChainText()
        case .char("/"):
            toggleInputChain(t)
            chainNode = 0
            chainParameter = 0
        default: return false
        }
        return true
    }
}

extension Array {
    /// The element at `index`, or nil outside the array.
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
