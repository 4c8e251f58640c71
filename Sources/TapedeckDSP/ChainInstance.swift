import Synchronization
import TapedeckCore

/// Live nodes built from a ``Chain``, processing blocks in place.
///
/// Host lifecycle: `chain.instantiate()` and `prepare(format:maxFrames:)` off the audio
/// thread → `process(_:)` once per block on the audio thread → `release()` off the audio
/// thread after the audio thread has dropped the instance. Bypass flags and node parameters
/// may be set from any thread at any time.
public final class ChainInstance: @unchecked Sendable {
    /// The description it was built from.
    public let chain: Chain
    /// The live nodes in processing order (a host may reach in, e.g. to give a sampler its
    /// sample before `prepare`).
    public let nodes: [any Node]
    private let bypassFlags: UnsafeMutablePointer<Atomic<Bool>>
    /// The same nodes, unowned, in a table (kept for the control thread's walks).
    private let nodeTable: UnsafeMutablePointer<UnretainedNode>
    /// The same nodes again, each behind a ``NodeCall`` (held by ``calls``), in a table of
    /// unretained references the audio thread calls through with no reference counting.
    /// Taking a node out of the array cost three retain/release pairs per node and block; out
    /// of an `unowned(unsafe)` field or a table of existentials, one pair (1.8 % of a
    /// 256-track period in perf).
    private let callTable: UnsafeMutablePointer<Unmanaged<NodeCall>>
    private let calls: [NodeCall]
    private let nodeCount: Int
    /// NaN and infinite samples found at node outputs (and replaced by silence) so far.
    private let nonFiniteCounter = Atomic<Int64>(0)
    /// For each node, whether its whole output is scanned for NaN and infinity after it runs:
    /// a plugin's always; a built-in node's only when the chain's input may carry them (see
    /// ``inputIsClean``).
    private let scansOutput: UnsafeMutablePointer<Bool>
    /// The host promises the input holds no NaN or infinity (the engine's track chains, whose
    /// files are scanned as they are read; buses and the master, fed by scanned strips): then
    /// a built-in node, which makes none from finite input, is not scanned after it runs —
    /// only its output's last frame is looked at, so a node whose state went bad (an extreme
    /// gain overflowing) is caught and reset. The scans were 5.7 % of an export. Set before
    /// the chain plays.
    public var inputIsClean = false
    private var wasBypassed = UnsafeStorage<Bool>()
    /// Nodes taken over from the chain this one replaced (``Chain/instantiate(reusing:registry:stateFolder:files:format:maxFrames:)``).
    var borrowed = Set<ObjectIdentifier>()
    /// Whether ``release()`` ran (it runs once: at the latest when the chain is freed).
    private var released = false
    /// The format and block size of the last `prepare`.
    public private(set) var format = NodeFormat(sampleRate: 48000, channelCount: 0)
    /// Largest block `process` accepts.
    public private(set) var maxFrames = 0

    /// Wraps `nodes`; use ``Chain/instantiate(registry:)``.
    init(chain: Chain, nodes: [any Node]) {
        self.chain = chain
        self.nodes = nodes
        bypassFlags = .allocate(capacity: max(nodes.count, 1))
        for i in 0..<max(nodes.count, 1) { (bypassFlags + i).initialize(to: Atomic(false)) }
        nodeTable = .allocate(capacity: max(nodes.count, 1))
        for i in 0..<nodes.count { (nodeTable + i).initialize(to: UnretainedNode(node: nodes[i])) }
        nodeCount = nodes.count
        calls = nodes.map { NodeCall.make($0) }
        callTable = .allocate(capacity: max(nodes.count, 1))
        for i in 0..<nodes.count { (callTable + i).initialize(to: .passUnretained(calls[i])) }
        scansOutput = .allocate(capacity: max(nodes.count, 1))
        scansOutput.initialize(repeating: true, count: max(nodes.count, 1))
        for i in 0..<nodes.count where nodes[i] is any BuiltInNode { scansOutput[i] = false }
    }

    deinit {
        // The last owner let go (a graph replaced by an edit, an engine closed): the nodes'
        // buffers go too. Off the audio thread: it holds chains unretained and never frees.
        // Nodes taken over from another chain are that chain's to free (an instance dropped
        // without a release — a graph that failed to build — must not free what plays on).
        if !released { for node in nodes where !borrowed.contains(ObjectIdentifier(node)) { node.release() } }
        nodeTable.deinitialize(count: nodes.count)
        nodeTable.deallocate()
        callTable.deallocate()
        bypassFlags.deinitialize(count: max(nodes.count, 1))
        bypassFlags.deallocate()
        scansOutput.deallocate()
        wasBypassed.free()
    }

    /// Prepares every node for `format` and blocks of up to `maxFrames`. Off the audio thread.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        prepare(format: format, maxFrames: maxFrames, only: nil)
    }

    /// Prepares the nodes at `only` (nil: all) for `format` and blocks of up to `maxFrames`;
    /// the others were prepared so already (kept from a chain this one replaces, with their
    /// state) and are left alone. Off the audio thread.
    func prepare(format: NodeFormat, maxFrames: Int, only: Set<Int>?) {
        self.format = format
        self.maxFrames = maxFrames
        wasBypassed.allocate(nodes.count, fill: false)
        let fresh = nodes.indices.filter { only?.contains($0) ?? true }
        for i in fresh { nodes[i].prepare(format: format, maxFrames: maxFrames) }
        warmUp(fresh)
        // `restart` (not `reset`) so that plugins, whose sound a reset cannot silence from the
        // audio thread, start clean too; always, so nodes know their warm-up is over.
        for i in fresh { nodes[i].restart() }
    }

    /// Runs two silent blocks (one with a MIDI note) through each node at `indices`, alone.
    /// Why: the Swift runtime instantiates some type metadata lazily, on first use, and that
    /// allocates; doing the first pass here keeps those allocations off the audio thread.
    /// A short block does it as well as a long one (the metadata is made once, whatever the
    /// length): an export's 16384-frame blocks made the warm-up of eight tracks' chains a
    /// fifth of a short export's time. Nodes kept from another chain are not warmed again
    /// (they are, and a note into a kept sampler would sound).
    private func warmUp(_ indices: [Int]) {
        guard maxFrames > 0, format.channelCount > 0, !indices.isEmpty else { return }
        let frames = min(maxFrames, 256)
        let buffers = ChannelBuffers(channelCount: format.channelCount, capacityFrames: frames)
        let events: [MIDIEvent] = [.noteOn(note: 60, velocity: 1, frameOffset: 0), .noteOff(note: 60, frameOffset: 0)]
        events.withUnsafeBufferPointer { midi in
            for pass in 0..<2 {
                for i in indices {
                    var context = RenderContext(inPlace: buffers.channels, frameCount: frames,
                                                midiEvents: pass == 0 ? midi : UnsafeBufferPointer(start: nil, count: 0),
                                                transport: TransportInfo(sampleRate: format.sampleRate, isPlaying: true))
                    nodes[i].process(&context)
                    _ = scrub(buffers.channels, frameCount: frames)
                }
            }
        }
    }

    /// Audio thread: copies `input` to `output` unless they are the same buffers, then runs
    /// every non-bypassed node over `output` in place. A node returning from bypass is reset
    /// first so stale delay lines or envelopes do not burst out. Frames beyond `maxFrames`
    /// are left unprocessed rather than overrunning the nodes' buffers (split such blocks).
    ///
    /// After each node, NaN and infinite samples are replaced by silence and counted
    /// (``nonFiniteSampleCount``), and a node that produced any is reset, so one bad sample
    /// (or a node driven unstable) can never turn the rest of the chain, and the mix after
    /// it, into NaN. The check costs one multiply-add per sample when all is well; it does
    /// not allocate or lock.
    public func process(_ context: inout RenderContext) {
        let output = context.output
        let n = min(context.frameCount, maxFrames)
        for c in 0..<min(output.count, context.input.count)
        where UnsafePointer(output[c]) != UnsafePointer(context.input[c]) {
            output[c].update(from: context.input[c], count: n)
        }
        var nodeContext = RenderContext(input: output, output: output, frameCount: n,
                                        midiEvents: context.midiEvents, transport: context.transport)
        // Read once: each read of the stored property is an exclusivity check.
        let wasBypassed = self.wasBypassed
        let trusted = inputIsClean
        for i in 0..<nodeCount {
            if bypassFlags[i].load(ordering: .relaxed) {
                // Bypassed, a node passes audio on as it came: that is checked like any output
                // (a chain of bypassed nodes must not hand a NaN on either).
                wasBypassed[i] = true
                _ = scrub(output, frameCount: n)
                continue
            }
            let call = callTable[i]
            if wasBypassed[i] { call._withUnsafeGuaranteedRef { $0.reset() }; wasBypassed[i] = false }
            call._withUnsafeGuaranteedRef { $0.process(&nodeContext) }
            if !trusted || scansOutput[i] {
                if scrub(output, frameCount: n) { call._withUnsafeGuaranteedRef { $0.reset() } }
            } else if !lastFrameIsFinite(output, frameCount: n) {
                _ = scrub(output, frameCount: n)
                call._withUnsafeGuaranteedRef { $0.reset() }
            }
        }
    }

    /// Whether every channel's last frame is a finite number (a node whose state went bad
    /// shows it there). Audio thread: loads.
    @inline(__always)
    private func lastFrameIsFinite(_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frameCount n: Int) -> Bool {
        guard n > 0 else { return true }
        for c in 0..<channels.count where !channels[c][n - 1].isFinite { return false }
        return true
    }

    /// Replaces NaN and infinite samples with silence and counts them; true when there were
    /// any. Audio thread: no allocation, no locks.
    @inline(__always)
    private func scrub(_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frameCount n: Int) -> Bool {
        var replaced = 0
        for c in 0..<channels.count { replaced += NonFiniteSamples.replace(channels[c], count: n) }
        if replaced > 0 { nonFiniteCounter.add(Int64(replaced), ordering: .relaxed) }
        return replaced > 0
    }

    /// NaN and infinite samples replaced by silence at node outputs since the chain was
    /// built: export reports it, the engine can show it. Any thread.
    public var nonFiniteSampleCount: Int64 { nonFiniteCounter.load(ordering: .relaxed) }

    /// Audio thread: resets every node (after a locate, or when playback stops). An index
    /// loop: an unspecialised iterator (debug builds) allocates.
    public func reset() { for i in 0..<nodeCount { callTable[i]._withUnsafeGuaranteedRef { $0.reset() } } }

    /// Whether ``release()`` has run.
    public var isReleased: Bool { released }

    /// Frees every node's buffers. Off the audio thread, once the audio thread cannot reach it.
    public func release() { release(keeping: []) }

    /// Frees the buffers of every node but those in `kept` (nodes a chain still in use shares
    /// with this one: see ``Chain/instantiate(reusing:registry:stateFolder:files:format:maxFrames:)``).
    /// Off the audio thread, once the audio thread cannot reach this chain.
    public func release(keeping kept: Set<ObjectIdentifier>) {
        guard !released else { return }
        released = true
        for node in nodes where !kept.contains(ObjectIdentifier(node)) { node.release() }
        wasBypassed.free()
    }

    /// Bypasses (or re-enables) node `index`. Any thread.
    public func setBypassed(_ index: Int, _ bypassed: Bool) {
        guard nodes.indices.contains(index) else { return }
        bypassFlags[index].store(bypassed, ordering: .relaxed)
    }

    /// Whether node `index` is bypassed. Any thread.
    public func isBypassed(_ index: Int) -> Bool {
        nodes.indices.contains(index) && bypassFlags[index].load(ordering: .relaxed)
    }

    /// What does not work, one line per node, e.g. `node 2 (lv2:http://…/amp): not installed;
    /// passed through`. Such nodes pass audio through; the host shows these lines. Off the audio
    /// thread, after `prepare`.
    public var problems: [String] {
        nodes.enumerated().compactMap { i, node in
            (node.problem ?? node.warning).map { "node \(i + 1) (\(NodeReference.text(ofNode: node.descriptor.name))): \($0)" }
        }
    }

    /// The chain with the current state of every ``StatefulNode`` saved as a new folder in
    /// `stateFolder` and referred to by its entry (`@state=NAME`); the host stores the
    /// returned chain's text in the session, then (once the session is saved) removes the
    /// folders no chain refers to any longer (``PluginStateFolder/removeUnreferenced(in:keeping:)``).
    /// Control thread, while the audio thread keeps processing.
    public func capturingState(in stateFolder: String) throws(PluginStateError) -> Chain {
        var captured = chain
        for (i, node) in nodes.enumerated() where !chain.entries[i].isMissing {
            guard let stateful = node as? any StatefulNode, node.problem == nil else { continue }
            if let name = try stateful.saveState(into: stateFolder) {
                captured = captured.replacingState(ofEntry: i, with: name)
            }
        }
        return captured
    }

    /// Total delay the active nodes add (the host compensates by this many frames).
    public var latencyFrames: Int {
        nodes.indices.reduce(0) { $0 + (isBypassed($1) ? 0 : nodes[$1].latencyFrames) }
    }
}

/// A node reference that costs no retain to use: ``ChainInstance/nodes`` keeps every node
/// alive for as long as the table that holds these.
struct UnretainedNode {
    unowned(unsafe) let node: any Node
}

/// Non-interleaved float channels owned by the host or a test, with the channel-pointer
/// table a ``RenderContext`` needs, all allocated up front.
public final class ChannelBuffers: @unchecked Sendable {
    /// Number of channels.
    public let channelCount: Int
    /// Frames each channel holds.
    public let capacityFrames: Int
    private let storage: UnsafeMutablePointer<Float>
    private let table: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// Allocates `channelCount` × `capacityFrames` zeroed floats. Off the audio thread.
    public init(channelCount: Int, capacityFrames: Int) {
        self.channelCount = channelCount
        self.capacityFrames = capacityFrames
        storage = .allocate(capacity: max(channelCount * capacityFrames, 1))
        storage.initialize(repeating: 0, count: max(channelCount * capacityFrames, 1))
        table = .allocate(capacity: max(channelCount, 1))
        for c in 0..<channelCount { (table + c).initialize(to: storage + c * capacityFrames) }
    }

    deinit {
        storage.deallocate()
        table.deallocate()
    }

    /// The channel pointers, for ``RenderContext``.
    public var channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>> {
        UnsafeBufferPointer(start: table, count: channelCount)
    }

    /// Channel `index`'s samples.
    public subscript(index: Int) -> UnsafeMutableBufferPointer<Float> {
        UnsafeMutableBufferPointer(start: table[index], count: capacityFrames)
    }

    /// Audio thread: zeroes the first `frameCount` frames of every channel.
    public func clear(frameCount: Int) {
        for c in 0..<channelCount { table[c].update(repeating: 0, count: min(frameCount, capacityFrames)) }
    }
}
