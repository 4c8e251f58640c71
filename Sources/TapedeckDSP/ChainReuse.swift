/// A chain edit keeps the nodes it did not change: instantiating a chain against the live
/// instance it replaces takes over every node of the same kind, files, preset and state in
/// the same order (a reverb keeps its tail when an EQ is added before it, an LV2 plugin is not
/// loaded again when a compressor after it is removed), sets its parameters to the new
/// values (nodes smooth them) and builds only what is new.
extension Chain {
    /// Whether a live node built for `old` can play `new`: the same node type with the same
    /// files, preset and state (parameters and bypass are values it takes in place).
    static func sameNode(_ old: Entry, _ new: Entry) -> Bool {
        old.node == new.node && old.texts == new.texts && old.preset == new.preset && old.state == new.state
            && !old.isMissing && !new.isMissing
    }

    /// The live chain for this description, taking over `old`'s nodes where they match (in
    /// order), prepared for `format` and blocks of `maxFrames` (a kept node keeps its state:
    /// only new nodes are prepared). Returns the instance and how many nodes were kept. `old`
    /// keeps running until the caller swaps the new one in; the two then share the kept nodes,
    /// so the old must be released with those kept (``ChainInstance/release(keeping:)``).
    /// Off the audio thread.
    public func instantiate(reusing old: ChainInstance?, registry: NodeRegistry = .standard, stateFolder: String? = nil,
                            files: (any NodeFiles)? = nil, format: NodeFormat, maxFrames: Int) -> (instance: ChainInstance, kept: Int) {
        let usable = old.flatMap { $0.format == format && $0.maxFrames == maxFrames && !$0.isReleased ? $0 : nil }
        var next = 0
        var nodes: [any Node] = []
        var fresh = Set<Int>()
        for (k, entry) in entries.enumerated() {
            var match: Int?
            if let usable {
                var j = next
                while j < usable.nodes.count {
                    if Chain.sameNode(usable.chain.entries[j], entry) { match = j; break }
                    j += 1
                }
            }
            let node: any Node
            if let j = match, let usable {
                node = usable.nodes[j]
                next = j + 1
                // Every parameter to what the new text says, defaults where it says nothing.
                for (index, definition) in node.parameters.definitions.enumerated() {
                    if let setting = entry.settings.first(where: { $0.parameter == definition.id }) {
                        node.parameters.set(index, setting.value)
                    } else {
                        node.parameters.set(index, definition.defaultValue)
                    }
                }
            } else {
                node = registry.makeNode(for: entry, stateFolder: stateFolder)
                for s in entry.settings {
                    if let i = node.parameters.index(of: s.parameter) { node.parameters.set(i, s.value) }
                }
                if let textNode = node as? any TextParameterNode {
                    for t in entry.texts { textNode.setText(t.parameter, t.value, files: files) }
                }
                fresh.insert(k)
            }
            nodes.append(node)
        }
        let instance = ChainInstance(chain: self, nodes: nodes)
        instance.borrowed = Set(nodes.indices.filter { !fresh.contains($0) }.map { ObjectIdentifier(nodes[$0]) })
        for (k, entry) in entries.enumerated() where entry.bypassed { instance.setBypassed(k, true) }
        instance.prepare(format: format, maxFrames: maxFrames, only: fresh)
        return (instance, entries.count - fresh.count)
    }
}
