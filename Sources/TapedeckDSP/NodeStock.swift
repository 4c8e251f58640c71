import Synchronization

/// New nodes made and prepared ahead, on a worker, for a chain build that will want them
/// (issue 42: nothing slow on the UI thread). Making a node can be slow: a General MIDI
/// node loads its SoundFont, an LV2 plugin is instantiated, a sampler reads its file. The
/// screen's edits build their graph on the control thread, which is the UI thread; a worker
/// that knows what the build will need makes those nodes first, and the build takes them
/// (``Chain/instantiate(reusing:registry:stateFolder:files:format:maxFrames:stock:)``)
/// instead of making them itself. A node the build does not take is released by
/// ``discard()``; one the worker did not foresee is made by the build, as before.
public final class NodeStock: Sendable {
    /// One made node, with what it was made for.
    private struct Item {
        let entry: Chain.Entry
        let format: NodeFormat
        let maxFrames: Int
        /// The one-node instance that prepared it (and warmed it up): it owns the node until
        /// the node is taken, and is then released keeping it.
        let holder: ChainInstance
    }

    private let items = Mutex<[Item]>([])

    /// An empty stock.
    public init() {}

    /// Makes and prepares a node for `entry` in `format`, for blocks of up to `maxFrames`, with
    /// its values and files, and keeps it. Any thread but the audio thread.
    public func make(_ entry: Chain.Entry, format: NodeFormat, maxFrames: Int, registry: NodeRegistry = .standard,
                     stateFolder: String? = nil, files: (any NodeFiles)? = nil) {
        var alone = entry
        // Bypass is the chain's flag (set by the build on its own instance), not the node's.
        alone.bypassed = false
        var chain = Chain()
        chain.entries = [alone]
        let holder = chain.instantiate(reusing: nil, registry: registry, stateFolder: stateFolder,
                                                         files: files, format: format, maxFrames: maxFrames).instance
        items.withLock { $0.append(Item(entry: entry, format: format, maxFrames: maxFrames, holder: holder)) }
    }

    /// Takes a node made for an entry that plays as `entry` does (the same node, files, preset
    /// and state) in `format` and `maxFrames`, with `entry`'s parameter values set; nil when
    /// none is kept. Control thread.
    func take(_ entry: Chain.Entry, format: NodeFormat, maxFrames: Int) -> (any Node)? {
        guard let item = items.withLock({ items -> Item? in
            guard let at = items.firstIndex(where: {
                $0.format == format && $0.maxFrames == maxFrames && Chain.sameNode($0.entry, entry)
            }) else { return nil }
            return items.remove(at: at)
        }), let node = item.holder.nodes.first else { return nil }
        item.holder.release(keeping: [ObjectIdentifier(node)])
        // Made with the values of the text the worker saw, which is this one unless the two
        // differ only in values: a value set again to itself changes nothing.
        Chain.setValues(of: node, to: entry)
        return node
    }

    /// How many nodes it keeps (made and not taken).
    public var count: Int { items.withLock { $0.count } }

    /// Releases every node not taken. Off the audio thread; the stock is empty after.
    public func discard() {
        let left = items.withLock { items -> [Item] in
            defer { items = [] }
            return items
        }
        for item in left { item.holder.release() }
    }
}
