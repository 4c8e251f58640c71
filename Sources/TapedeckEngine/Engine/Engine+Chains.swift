import TapedeckDSP

/// Releasing the chains graphs leave behind. A chain's nodes hold buffers (a delay's line, a
/// reverb's tanks, an LV2 plugin's instance) that only ``ChainInstance/release()`` frees; the
/// live engine never called it, so every chain edit while playing leaked its old chain.
/// A chain is released once no graph the audio thread can reach holds it: not the installed
/// graph or a newer one, not a strip's fallback still playing, not a strip or input reused
/// from an older graph (the same instance lives on in the new one).
extension Engine {
    /// Every chain `graph` renders through, its strips' fallbacks' included. Control thread.
    private func chains(of graph: Graph) -> [ChainInstance] {
        var list: [ChainInstance] = []
        for strip in graph.strips {
            // A fallback can have its own while edits come faster than the disk.
            var next: PlaybackStrip? = strip
            while let s = next {
                if let chain = s.chain { list.append(chain) }
                next = s.fallback
            }
        }
        for input in graph.inputs { if let chain = input.chain { list.append(chain) } }
        if let master = graph.masterChain { list.append(master) }
        return list
    }

    /// Remembers `graph`'s chains, to release them when it is gone. Control thread.
    func noteChains(of graph: Graph) {
        for chain in chains(of: graph) { chainsMade[ObjectIdentifier(chain)] = chain }
    }

    /// Releases every remembered chain no current graph holds; nodes a held chain took over
    /// from it (a chain edit keeps the nodes it did not change) stay. Control thread, after
    /// the graphs the audio thread has left were dropped.
    func releaseUnreachableChains() {
        var reachable = Set<ObjectIdentifier>()
        var liveNodes = Set<ObjectIdentifier>()
        for g in graphs {
            for chain in chains(of: g) {
                reachable.insert(ObjectIdentifier(chain))
                for node in chain.nodes { liveNodes.insert(ObjectIdentifier(node)) }
            }
        }
        for (id, chain) in chainsMade where !reachable.contains(id) {
            chain.release(keeping: liveNodes)
            chainsMade[id] = nil
        }
    }

    /// Releases every chain, each node once: the audio thread is gone (``close()``). Control
    /// thread.
    func releaseAllChains() {
        var done = Set<ObjectIdentifier>()
        for chain in chainsMade.values {
            chain.release(keeping: done)
            for node in chain.nodes { done.insert(ObjectIdentifier(node)) }
        }
        chainsMade = [:]
    }
}
