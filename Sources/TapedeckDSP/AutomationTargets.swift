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
