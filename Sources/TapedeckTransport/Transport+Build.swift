import Foundation
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO

/// A graph spec built on a worker for the screen's edits (issue 42: nothing slow on the UI
/// thread). Making a spec opens every region's file and renders each stretched region
/// offline with Rubber Band (seconds for a long one); making a new node can load a
/// SoundFont or instantiate a plugin. The screen's edit hands the session to a worker, which
/// makes the spec and then the nodes the graph will need new (``GraphNodeStockPlan``), and
/// goes on; a later snapshot swaps the new graph in on the control thread, taking those nodes
/// (``Engine/apply(_:stock:)`` stays there: the engine has one control thread, and the build
/// retunes strips the running graph shares). One build at a time: edits that come meanwhile
/// are built together once it ends, and a result older than the newest build is dropped.
final class TransportGraphBuild {
    /// A build running on its worker thread.
    final class Running: Sendable {
        let number: Int
        /// The session it builds.
        let session: Session
        let result = Mutex<Result<Made, SpecFailure>?>(nil)
        /// A stretched region's render under way: its progress in thousandths (-1: none).
        let stretchPermille = Atomic<Int>(-1)
        /// Set when a newer session no longer needs a render this build makes: the render
        /// stops at its next block, leaving nothing in the cache (``Transport/cancelIfStale(for:)``).
        let cancelled = Atomic<Bool>(false)
        init(number: Int, session: Session) {
            self.number = number
            self.session = session
        }
    }

    /// A build stopped because what it rendered was wanted no more.
    struct Cancelled: Error {}

    /// What a worker made: the spec and the nodes its graph will need new.
    struct Made: Sendable {
        let spec: GraphSpec
        let stock: NodeStock
    }

    /// Why a spec could not be made, in words (errors need not be Sendable; words are).
    struct SpecFailure: Error { let text: String }

    var running: Running?
    /// The session changed since the running build started (or none runs): build it next.
    var pending = false
    /// The newest build's number (a worker's or one made on the control thread).
    var latest = 0
    /// Mixer values moved since the session the newest build was asked for: written once it
    /// is in (a strip new to the graph starts at its spec's values).
    var moved: [MixerChange] = []

    /// Whether a build runs or waits.
    var isBusy: Bool { running != nil || pending }

    /// A graph is being built now on the control thread: any build on a worker is older.
    /// Returns the mixer values that waited for it.
    func supersede() -> [MixerChange] {
        latest += 1
        pending = false
        defer { moved = [] }
        return moved
    }
}

extension Transport {
    /// Asks for the current session's graph to be built on a worker (or after the one building).
    func buildInBackground(moved: [MixerChange]) {
        graphBuild.moved += moved
        graphBuild.pending = true
        cancelIfStale(for: session)
        startPendingBuild()
    }

    /// Stops the build running on the worker when it renders a stretched region that
    /// `newest` (the session to be built next, which supersedes it) does not play: an undo
    /// of a stretch, a second rate over the first. Its render would take as long again as
    /// it has and then be dropped, and the next build would wait for it. A build whose
    /// renders the newest session also needs goes on (what it renders is kept for that one).
    /// Control thread.
    func cancelIfStale(for newest: Session) {
        guard let running = graphBuild.running, !running.cancelled.load(ordering: .relaxed) else { return }
        let cache = StretchedRegionCache(folder: folder ?? SessionFolder(path: FileManager.default.currentDirectoryPath))
        // Only the renders not made yet: one in the cache already costs the build nothing.
        let renders = cache.renderPaths(of: running.session).filter { access($0, F_OK) != 0 }
        guard !renders.isEmpty, !renders.isSubset(of: cache.renderPaths(of: newest)) else { return }
        running.cancelled.store(true, ordering: .relaxed)
    }

    /// Whether a graph for an edit is still being built on a worker (the old one plays on).
    public var isBuildingGraph: Bool { graphBuild.isBusy }

    /// How far the render of a stretched region for that graph is, 0…1 (nil: none runs).
    var graphStretchProgress: Double? {
        guard let permille = graphBuild.running?.stretchPermille.load(ordering: .relaxed), permille >= 0 else { return nil }
        return Double(permille) / 1000
    }

    private func startPendingBuild() {
        let build = graphBuild
        guard build.running == nil, build.pending else { return }
        build.pending = false
        build.latest += 1
        let session = self.session
        let running = TransportGraphBuild.Running(number: build.latest, session: session)
        build.running = running
        let make = specMaker()
        // The nodes are foreseen against the graph playing now; a graph applied meanwhile
        // (a build on the control thread) makes this one's result stale anyway.
        let plan = engine.nodeStockPlan, playing = spec
        let thread = Thread {
            ThreadName.setCurrent("tapedeck-build")
            let result: Result<TransportGraphBuild.Made, TransportGraphBuild.SpecFailure>
            do {
                let next = try make(session) {
                    if running.cancelled.load(ordering: .relaxed) { throw TransportGraphBuild.Cancelled() }
                    running.stretchPermille.store(Int($0 * 1000), ordering: .relaxed)
                }
                result = .success(.init(spec: next, stock: next == playing ? NodeStock() : plan.stock(for: next, after: playing)))
            } catch {
                result = .failure(.init(text: "\(error)"))
            }
            running.result.withLock { $0 = result }
        }
        thread.start()
    }

    /// Swaps in a graph a worker finished, if it is the newest; starts the next build when
    /// edits came meanwhile. Control thread (from ``snapshot()``).
    func completeBackgroundBuild() {
        let build = graphBuild
        guard let running = build.running, let result = running.result.withLock({ $0 }) else { return }
        build.running = nil
        if running.number == build.latest && !build.pending {
            let moved = build.moved
            build.moved = []
            switch result {
            case .success(let made):
                let next = made.spec
                do {
                    if next != spec {
                        try engine.apply(next, stock: made.stock)
                        spec = next
                    }
                    for change in moved { engine.set(change) }
                } catch {
                    report(problem: "\(error)", moved: moved)
                }
            case .failure(let failure):
                report(problem: failure.text, moved: moved)
            }
        }
        // Nodes made for a graph not built (stale, or the spec failed to apply) are released,
        // on a thread of their own: freeing a synth or a plugin is no work for the UI thread.
        if case .success(let made) = result, made.stock.count > 0 {
            let stock = made.stock
            Thread { stock.discard() }.start()
        }
        startPendingBuild()
    }

    /// A graph that could not be made: said, and the old one plays on with the values moved
    /// where its strips are the session's (by name at each place).
    private func report(problem: String, moved: [MixerChange]) {
        errors.append(problem)
        if spec.tracks.map(\.name) == session.tracks.map(\.name) { for change in moved { engine.set(change) } }
    }

    /// What ``makeSpec(_:)`` needs of this transport, taken now: a function of the session
    /// alone, for a worker thread.
    func specMaker() -> @Sendable (Session, _ stretching: (Double) throws -> Void) throws -> GraphSpec {
        let options = self.options, folder = self.folder, listening = self.listening
        let override = inputOverride.map { InputOverride(chain: $0.chain, channels: $0.channels) }
        let recording = recordingTracks, chains = self.chains
        return { session, stretching in
            try Transport.makeSpec(session, options: options, folder: folder, listening: listening,
                                   inputOverride: override, recordingTracks: recording, chains: chains, stretching: stretching)
        }
    }

    /// A running pass's input chain and channels, in place of the tracks' own.
    struct InputOverride: Sendable {
        var chain: Chain?
        var channels: [Int]?
    }

    /// The graph spec for `session`: every track, inputs for the listening ones (with a
    /// running pass's overrides), silent tracks when the session is not to be heard. The
    /// chains as the transport keeps them (what it has not read yet is read here). Any thread.
    static func makeSpec(_ session: Session, options: TransportOptions, folder: SessionFolder?, listening: Set<Int>,
                         inputOverride: InputOverride?, recordingTracks: Set<Int>, chains: SessionChains,
                         stretching: (Double) throws -> Void = { _ in }) throws -> GraphSpec {
        var s: GraphSpec
        if var material = options.material {
            var chains = chains
            chains.update(to: session)
            do { material.masterChain = try chains.masterSlot.chain.get() } catch {
                throw ChainContextError(place: "master chain", error: error)
            }
            s = material
        } else if let folder {
            s = try GraphSpec(session: session, folder: folder, listening: listening, chains: chains, stretching: stretching)
        } else {
            s = try GraphSpec(session: session, folder: SessionFolder(path: FileManager.default.currentDirectoryPath),
                              listening: listening, chains: chains, stretching: stretching)
        }
        if !options.playsSession {
            for i in s.tracks.indices {
                s.tracks[i].sources = []
                s.tracks[i].midiSources = []
            }
        }
        for i in s.tracks.indices where s.tracks[i].input != nil {
            if let mode = options.monitoring { s.tracks[i].input?.monitoring = mode }
            if let o = inputOverride, recordingTracks.contains(i) {
                if let chain = o.chain { s.tracks[i].input?.chain = chain }
                if let channels = o.channels {
                    s.tracks[i].input?.deviceChannels = Array(channels.prefix(2))
                    s.tracks[i].channelCount = max(s.tracks[i].channelCount, min(channels.count, 2))
                }
            }
        }
        s.retroSeconds = options.retroSeconds
        return s
    }
}
