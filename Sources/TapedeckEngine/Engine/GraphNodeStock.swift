import TapedeckDSP

/// What a graph build for a new spec will have to make, foreseen from the specs alone, so a
/// worker can make it first (``NodeStock``). The build (``Graph/build(_:previous:generation:context:)``)
/// decides against the live graph; this follows the same rules against the spec that graph
/// was built from. Where the two differ (a strip still waiting for its material, a chain
/// whose delay changed), the build makes what is missing itself, as it always did, and a
/// node made for nothing is released: a wrong guess costs time, never sound.
public struct GraphNodeStockPlan: Sendable {
    let sampleRate: Int
    let periodFrames: Int
    let isRealtime: Bool

    /// Makes, on the calling thread, every node a build of `spec` after a graph of `old`
    /// would make new: the chains of tracks with new material or new nodes, the input chains
    /// of inputs that are new or changed, the master chain's new nodes. Any thread but the
    /// audio thread; slow (it is what the build would otherwise do on the control thread).
    public func stock(for spec: GraphSpec, after old: GraphSpec) -> NodeStock {
        let stock = NodeStock()
        let files = SessionNodeFiles(folder: spec.sessionFolder)
        func make(_ chain: Chain, against before: Chain?, format: NodeFormat, maxFrames: Int) {
            for (entry, match) in zip(chain.entries, Chain.matches(chain.entries, in: before?.entries ?? [])) where match == nil {
                stock.make(entry, format: format, maxFrames: maxFrames, stateFolder: spec.pluginStateFolder, files: files)
            }
        }
        // Strips: as the build, matched by material first (any place), then by chain.
        var unused = old.tracks
        let stripFrames = Graph.stripFrames(periodFrames: periodFrames)
        for track in spec.tracks {
            let format = PlaybackStrip.nodeFormat(sampleRate: sampleRate, channelCount: track.channelCount, isRealtime: isRealtime)
            if let at = unused.firstIndex(where: { $0.isBus == track.isBus && $0.sources == track.sources
                && $0.channelCount == track.channelCount }) {
                let was = unused.remove(at: at)
                if Graph.canRetune(was.chain, to: track.chain, hasInstance: !was.chain.entries.isEmpty) { continue }
                make(track.chain, against: was.chain, format: format, maxFrames: stripFrames)
            } else {
                make(track.chain, against: nil, format: format, maxFrames: stripFrames)
            }
        }
        // Inputs: kept by track name when only their chain's values differ.
        for track in spec.tracks {
            guard let input = track.input else { continue }
            let kept = old.tracks.contains { was in
                guard was.name == track.name, var before = was.input else { return false }
                var now = input
                let hasInstance = !before.chain.entries.isEmpty
                let chains = (before.chain, now.chain)
                before.chain = Chain()
                now.chain = Chain()
                return before == now && Graph.canRetune(chains.0, to: chains.1, hasInstance: hasInstance)
            }
            if kept { continue }
            make(input.chain, against: nil, format: InputStrip.nodeFormat(sampleRate: sampleRate, spec: input), maxFrames: periodFrames)
        }
        if !Graph.canRetune(old.masterChain, to: spec.masterChain, hasInstance: !old.masterChain.entries.isEmpty) {
            make(spec.masterChain, against: old.masterChain,
                 format: Graph.masterFormat(sampleRate: sampleRate, isRealtime: isRealtime), maxFrames: periodFrames)
        }
        return stock
    }
}

extension Engine {
    /// What a worker needs to make nodes ahead for this engine's graph builds (its rate,
    /// period and whether it runs against a clock). Control thread.
    public var nodeStockPlan: GraphNodeStockPlan {
        GraphNodeStockPlan(sampleRate: configuration.sampleRate, periodFrames: configuration.periodFrames,
                           isRealtime: !options.rendersOffline)
    }
}
