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
    /// A new node is taken from `stock` when it holds one made for the same entry and format
    /// (prepared there, on a worker), else made and prepared here. Off the audio thread.
    public func instantiate(reusing old: ChainInstance?, registry: NodeRegistry = .standard, stateFolder: String? = nil,
                            files: (any NodeFiles)? = nil, format: NodeFormat, maxFrames: Int,
                            stock: NodeStock? = nil) -> (instance: ChainInstance, kept: Int) {
        let usable = old.flatMap { $0.format == format && $0.maxFrames == maxFrames && !$0.isReleased ? $0 : nil }
        let matches = Chain.matches(entries, in: usable?.chain.entries ?? [])
        var nodes: [any Node] = []
        // New to this chain and still to be prepared here (a node from `stock` is prepared).
        var unprepared = Set<Int>()
        var borrowed = Set<ObjectIdentifier>()
        for (k, entry) in entries.enumerated() {
            let node: any Node
            if let j = matches[k], let usable {
                node = usable.nodes[j]
                borrowed.insert(ObjectIdentifier(node))
                Chain.setValues(of: node, to: entry)
            } else if let made = stock?.take(entry, format: format, maxFrames: maxFrames) {
                // Made and prepared on a worker with this entry's values (NodeStock).
                node = made
            } else {
                node = Chain.makeNode(for: entry, registry: registry, stateFolder: stateFolder, files: files)
                unprepared.insert(k)
            }
            nodes.append(node)
        }
        let instance = ChainInstance(chain: self, nodes: nodes)
        instance.borrowed = borrowed
        for (k, entry) in entries.enumerated() where entry.bypassed { instance.setBypassed(k, true) }
        instance.prepare(format: format, maxFrames: maxFrames, only: unprepared)
        return (instance, borrowed.count)
    }

    /// Every parameter of `node` to what `entry` says, its default where it says nothing (a
    /// node taken over from another chain, or made ahead for another text of the same node).
    /// Nodes smooth what changes. Off the audio thread.
    static func setValues(of node: any Node, to entry: Entry) {
        for (index, definition) in node.parameters.definitions.enumerated() {
            if let setting = entry.settings.first(where: { $0.parameter == definition.id }) {
                node.parameters.set(index, setting.value)
            } else {
                node.parameters.set(index, definition.defaultValue)
            }
        }
    }

    /// A new node for `entry` with its values and files (not prepared). Off the audio thread.
    static func makeNode(for entry: Entry, registry: NodeRegistry, stateFolder: String?, files: (any NodeFiles)?) -> any Node {
        let node = registry.makeNode(for: entry, stateFolder: stateFolder)
        for s in entry.settings {
            if let i = node.parameters.index(of: s.parameter) { node.parameters.set(i, s.value) }
        }
        if let textNode = node as? any TextParameterNode {
            for t in entry.texts { textNode.setText(t.parameter, t.value, files: files) }
        }
        return node
    }

    /// For each of `new`'s entries, the index of the node in `old` a chain built against it
    /// takes over (nil: a new node). Matches go in order: each takes the first node of the
    /// same kind after the last one taken. The one rule both the build
    /// (``instantiate(reusing:registry:stateFolder:files:format:maxFrames:stock:)``) and the
    /// worker that makes new nodes ahead of it (``NodeStock``) follow.
    public static func matches(_ new: [Entry], in old: [Entry]) -> [Int?] {
        var next = 0
        return new.map { entry in
            var j = next
            while j < old.count {
                if sameNode(old[j], entry) { next = j + 1; return j }
                j += 1
            }
            return nil
        }
    }
}
