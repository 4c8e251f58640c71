import TapedeckCore

/// One value of one node moved (a parameter, or its bypass), as the one who moved it says
/// it: the chain panel's keys hand these to the transport, which writes that value to the
/// playing node and nothing else (no new graph, no other parameter written back over a
/// controller's newer move). Anything that changes what the chain *is* (a node added,
/// removed, moved, a file, the text retyped) is an edit of the session, diffed by node.
public struct ChainValueChange: Equatable, Sendable {
    /// Which chain.
    public enum Place: Equatable, Sendable {
        /// The playback chain of strip `strip` (the session's track order).
        case playback(strip: Int)
        /// The input chain of track `strip`.
        case input(strip: Int)
        /// The master chain.
        case master
    }

    /// What moved.
    public enum Value: Equatable, Sendable {
        /// Parameter `id` (as the chain text names it) to a value.
        case parameter(String, ParameterValue)
        /// The node bypassed (true) or back in.
        case bypass(Bool)
    }

    /// Which chain.
    public var place: Place
    /// The node's place in its chain (0-based).
    public var node: Int
    /// What moved.
    public var value: Value

    /// Whether its value can be played and stored: a parameter's number is finite.
    public var isPlayable: Bool {
        if case .parameter(_, .number(let n)) = value { return n.isFinite }
        return true
    }

    /// A change of node `node` of the chain at `place`.
    public init(place: Place, node: Int, value: Value) {
        self.place = place
        self.node = node
        self.value = value
    }
}

extension Chain {
    /// Applies `value` to entry `index`: a parameter set in the node's order of parameters
    /// (or in place of its setting; a node this registry does not know takes a setting it
    /// already has only: the standard registry knows installed LV2 plugins), a bypass switched. False when it names nothing, or is so already.
    public mutating func apply(_ value: ChainValueChange.Value, entry index: Int, registry: NodeRegistry = .standard) -> Bool {
        guard entries.indices.contains(index) else { return false }
        switch value {
        case .bypass(let on):
            guard entries[index].bypassed != on else { return false }
            entries[index].bypassed = on
        case .parameter(let id, let v):
            if case .number(let n) = v, !n.isFinite { return false }
            if let at = entries[index].settings.firstIndex(where: { $0.parameter == id }) {
                guard entries[index].settings[at].value != v else { return false }
                entries[index].settings[at].value = v
                return true
            }
            let order = parameters(of: index, registry: registry).map(\.definition.id)
            guard let p = order.firstIndex(of: id) else { return false }
            let position = entries[index].settings.firstIndex { (order.firstIndex(of: $0.parameter) ?? 0) > p } ?? entries[index].settings.count
            entries[index].settings.insert(Setting(parameter: id, value: v), at: position)
        }
        return true
    }
}

extension Session {
    /// The text of the chain at `place`; nil when there is no such strip.
    public func chainText(at place: ChainValueChange.Place) -> String? {
        switch place {
        case .master: return masterChain
        case .playback(let s): return tracks.indices.contains(s) ? tracks[s].playbackChain : nil
        case .input(let s): return tracks.indices.contains(s) ? tracks[s].inputChain : nil
        }
    }

    /// Applies `change`: the chain's text written again with the one value changed (in the
    /// parser's canonical form). False, changing nothing, when it names no strip, no node or
    /// no parameter, the chain does not parse, or the value is so already.
    ///
    /// The chain is taken as `chains` read it (no parsing); the changed chain is handed back
    /// to `chains`, so the text written is not read again either. There is no form that
    /// parses the stored text: whoever applies changes keeps the session's chains.
    @discardableResult
    public mutating func apply(_ change: ChainValueChange, chains: inout SessionChains) -> Bool {
        guard chainText(at: change.place) != nil else { return false }
        chains.update(to: self)
        let slot: SessionChains.Slot
        switch change.place {
        case .master: slot = chains.masterSlot
        case .playback(let s): slot = chains.slot(s, .playback)
        case .input(let s): slot = chains.slot(s, .input)
        }
        guard let chain = slot.value, let changed = apply(change, to: chain) else { return false }
        chains.handIn(changed)
        return true
    }

    /// `chain` (the chain at `change.place`) with the change made, written back as text; nil,
    /// changing nothing, when the change names no node or parameter or the value is so already.
    private mutating func apply(_ change: ChainValueChange, to chain: Chain) -> Chain? {
        var chain = chain
        guard chain.apply(change.value, entry: change.node) else { return nil }
        switch change.place {
        case .master: masterChain = chain.text
        case .playback(let s): tracks[s].playbackChain = chain.text
        case .input(let s): tracks[s].inputChain = chain.text
        }
        return chain
    }
}
