import TapedeckCore

/// Where a `NODE.PARAM` lane lands in a chain: the node by its name (the first entry of that
/// name, any case, as written in the chain: `lpf`, `lv2:http://…`) or its 1-based place, the
/// parameter by its id (any case).
public enum AutomationTargets {
    /// The index of the entry `node` names in `chain`, or nil.
    public static func nodeIndex(_ node: String, in chain: Chain) -> Int? {
        if let place = Int(node), place >= 1, place <= chain.entries.count { return place - 1 }
        let key = node.lowercased()
        return chain.entries.firstIndex { $0.node.lowercased() == key }
    }

    /// The index of parameter `id` among `parameters`, or nil.
    public static func parameterIndex(_ id: String, in parameters: NodeParameters) -> Int? {
        let key = id.lowercased()
        return parameters.definitions.firstIndex { $0.id.lowercased() == key }
    }
}

extension Track {
    /// The playback chain's node `node` names (its name or place, as a lane does) and the
    /// definition of its parameter `id` (any case), if both are there, in `chain`: this
    /// track's playback chain as its owner's ``SessionChains`` read it (nil: it does not
    /// parse). There is no form that takes the stored text: a lookup never parses.
    public func nodeParameter(_ node: String, _ id: String, in chain: Chain?) -> (chain: Chain, entry: Int, definition: ParameterDefinition)? {
        guard let chain, let at = AutomationTargets.nodeIndex(node, in: chain),
              let d = NodeRegistry.standard.descriptor(named: chain.entries[at].node)?.parameters.first(where: { $0.id.lowercased() == id.lowercased() })
        else { return nil }
        return (chain, at, d)
    }

    /// The control's own value for `parameter` (what plays when no lane does): the fader in
    /// dB, the pan, the mute (0 or 1), a node's parameter as `chain` sets it or its default.
    /// `chain` is this track's playback chain as its owner's ``SessionChains`` read it (nil:
    /// it does not parse, or the caller asks for no node parameter).
    public func controlValue(_ parameter: AutomationParameter, chain: Chain?) -> Double? {
        switch parameter {
        case .gain: return gainDecibels
        case .pan: return pan
        case .mute: return mute ? 1 : 0
        case .send(let bus): return sends.first { $0.bus.lowercased() == bus.lowercased() }?.levelDecibels
        case .node(let node, let id):
            guard let (chain, at, d) = nodeParameter(node, id, in: chain) else { return nil }
            if case .number(let v)? = chain.entries[at].settings.last(where: { $0.parameter.lowercased() == d.id.lowercased() })?.value { return v }
            return d.defaultValue
        }
    }
}
