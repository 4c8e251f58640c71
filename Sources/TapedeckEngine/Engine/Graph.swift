import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Everything the audio thread renders: one strip per track, the inputs of the listening
/// tracks, the master chain. Built whole on the control thread (files opened, chains
/// prepared, buffers allocated), swapped in at a period boundary, and freed on the control
/// thread once the audio thread has moved on to a newer one. Strips whose track did not
/// change are shared with the previous graph, so they play on without a seam.
///
/// The audio thread reaches strips through unmanaged tables: rendering moves no reference
/// counts.
final class Graph: @unchecked Sendable {
    /// Increases with every graph an engine builds.
    let generation: Int
    /// What it was built from.
    let spec: GraphSpec
    /// One per track, in track order.
    let strips: [PlaybackStrip]
    /// The listening tracks' inputs.
    let inputs: [InputStrip]
    let masterChain: ChainInstance?
    /// The values the master chain's nodes play now (``spec``'s master chain, retuned since by
    /// typed changes). Control thread only.
    var masterChainSpec: Chain
    let stripTable: UnsafeMutablePointer<Unmanaged<PlaybackStrip>>
    let inputTable: UnsafeMutablePointer<Unmanaged<InputStrip>>
    /// For each track, the index of its input strip, or -1.
    let inputForTrack: UnsafeMutablePointer<Int>
    /// For each input strip, its track.
    let trackOfInput: UnsafeMutablePointer<Int>
    let trackCount: Int
    let inputCount: Int
    /// Frames the master's output lags the timeline: the master chain and the slowest path
    /// into the master (``RouteTable/outputLatencyFrames``).
    let outputLatencyFrames: Int
    /// Who feeds whom, in what order, with which delays.
    let routes: RouteTable
    /// The strips as a process graph for several threads.
    let processPlan: ProcessPlan
    /// The strips the workers may render ahead: playing only from disk (not a bus, not fed by
    /// an input — armed or monitored —, not listening to MIDI, no MIDI regions), with an
    /// ahead buffer.
    let aheadStrips: UnsafeMutablePointer<Int>
    let aheadCount: Int
    /// Those strips' ahead buffers, in the same order: what the workers look through for the
    /// emptiest without going through each strip.
    let aheadBuffers: UnsafeMutablePointer<Unmanaged<AheadBuffer>>
    /// The most blocks any of them holds (its capacity in blocks).
    let aheadLevels: Int
    /// Each strip's automation in this graph (nil: none), kept alive here; the audio thread
    /// hands each strip its own as the graph is installed.
    let automations: [StripAutomation?]
    let automationTable: UnsafeMutablePointer<Unmanaged<StripAutomation>?>
    /// Where each strip's next block lies in its ring, fetched a strip ahead by the mix.
    let prefetch: StripPrefetch
    /// The session's tempo map (control thread; the audio thread reads ``tempoTable``).
    let tempoMap: TempoMap
    /// The tempo map's segments for the audio thread.
    let tempoTable: TempoTable
    /// For each track, whether it hears the MIDI inputs (armed).
    let listensToMIDI: UnsafeMutablePointer<Bool>
    /// Each track's MIDI regions as the audio thread reads them (kept alive here).
    let playlists: [MIDIPlaylist?]
    /// The MIDI learn bindings, resolved to what they move (nil: none).
    private(set) var bindings: BindingTable?

    private init(generation: Int, spec: GraphSpec, strips: [PlaybackStrip], inputs: [InputStrip], inputTracks: [Int],
                 masterChain: ChainInstance?, playlists: [MIDIPlaylist?], routes: RouteTable, automations: [StripAutomation?]) {
        self.routes = routes
        processPlan = ProcessPlan(routes: routes)
        self.automations = automations
        automationTable = .allocate(capacity: max(strips.count, 1))
        automationTable.initialize(repeating: nil, count: max(strips.count, 1))
        for (i, a) in automations.enumerated() where i < strips.count { automationTable[i] = a.map { Unmanaged.passUnretained($0) } }
        prefetch = StripPrefetch(strips: strips)
        self.generation = generation
        self.spec = spec
        self.strips = strips
        self.inputs = inputs
        self.masterChain = masterChain
        masterChainSpec = spec.masterChain
        trackCount = strips.count
        inputCount = inputs.count
        stripTable = .allocate(capacity: max(strips.count, 1))
        for (i, s) in strips.enumerated() { (stripTable + i).initialize(to: Unmanaged.passUnretained(s)) }
        inputTable = .allocate(capacity: max(inputs.count, 1))
        for (i, s) in inputs.enumerated() { (inputTable + i).initialize(to: Unmanaged.passUnretained(s)) }
        inputForTrack = .allocate(capacity: max(strips.count, 1))
        inputForTrack.initialize(repeating: -1, count: max(strips.count, 1))
        trackOfInput = .allocate(capacity: max(inputs.count, 1))
        trackOfInput.initialize(repeating: -1, count: max(inputs.count, 1))
        for (i, t) in inputTracks.enumerated() {
            inputForTrack[t] = i
            trackOfInput[i] = t
        }
        outputLatencyFrames = routes.outputLatencyFrames
        tempoMap = spec.tempoMap
        tempoTable = TempoTable(spec.tempoMap)
        self.playlists = playlists
        listensToMIDI = .allocate(capacity: max(strips.count, 1))
        listensToMIDI.initialize(repeating: false, count: max(strips.count, 1))
        for (i, t) in spec.tracks.enumerated() { listensToMIDI[i] = t.listensToMIDI }
        let listening = Set(inputTracks)
        let ahead = strips.indices.filter { i in
            strips[i].ahead != nil && !strips[i].isBus && !listening.contains(i) && !spec.tracks[i].listensToMIDI && playlists[i] == nil
        }
        aheadStrips = .allocate(capacity: max(ahead.count, 1))
        aheadStrips.initialize(repeating: 0, count: max(ahead.count, 1))
        for (k, i) in ahead.enumerated() { aheadStrips[k] = i }
        aheadCount = ahead.count
        aheadBuffers = .allocate(capacity: max(ahead.count, 1))
        for (k, i) in ahead.enumerated() { (aheadBuffers + k).initialize(to: Unmanaged.passUnretained(strips[i].ahead!)) }
        aheadLevels = ahead.map { i in strips[i].ahead.map { $0.capacityFrames / max($0.blockFrames, 1) } ?? 1 }.max() ?? 1
        if !spec.midiBindings.isEmpty {
            var byTrack: [Int: InputStrip] = [:]
            for (i, t) in inputTracks.enumerated() { byTrack[t] = inputs[i] }
            bindings = BindingTable(spec.midiBindings, strips: strips, inputs: byTrack, tracks: spec.tracks, sendStates: routes.sendStates)
        }
    }

    deinit {
        aheadStrips.deallocate()
        aheadBuffers.deallocate()
        automationTable.deallocate()
        prefetch.deallocate()
        listensToMIDI.deallocate()
        stripTable.deallocate()
        inputTable.deallocate()
        inputForTrack.deallocate()
        trackOfInput.deallocate()
    }

    /// Every voice the disk thread must serve while this graph may play: the strips' and
    /// those of fallbacks not yet handed over.
    var voices: [TrackVoice] {
        var out: [TrackVoice] = []
        for s in strips {
            out.append(s.voice)
            if let f = s.fallback, !s.handedOver.load(ordering: .acquiring) { out.append(f.voice) }
        }
        return out
    }

    /// Most frames a playback strip renders at once: a period, and at least 1024 so the mix's
    /// time-pitch path (which reads speed × the period) renders in few, long blocks.
    static func stripFrames(periodFrames: Int) -> Int { max(periodFrames, 1024) }

    /// The format the master chain is prepared for.
    static func masterFormat(sampleRate: Int, isRealtime: Bool) -> NodeFormat {
        NodeFormat(sampleRate: Double(sampleRate), channelCount: 2, isRealtime: isRealtime)
    }

    /// What a build needs to know about the engine.
    struct Context {
        var sampleRate: Int
        var periodFrames: Int
        var captureChannels: Int
        var ringFrames: Int
        var blockFrames: Int
        var meterWindowFrames: Int
        var waitNanoseconds: Int64
        /// What nodes are told: false while freewheeling (``EngineOptions/rendersOffline``).
        var isRealtime = true
        /// How far playback is rendered ahead (none with one thread, or freewheeling).
        var ahead = Ahead.none
        /// Voices decode straight into their strips once their rings are done with (a
        /// freewheeling export at 1×: ``EngineOptions/readsDiskInline``).
        var readsDirect = false
        /// New nodes a worker made ahead for this build (taken where they fit).
        var stock: NodeStock?
    }

    /// Builds the graph for `spec`, reusing what `previous` has: a strip whose track has the
    /// same material and chain (a chain that differs only in parameter values gets the new
    /// values, smoothed, in place), an input with the same settings, the master chain.
    /// Opens every new file first, so a missing file throws before anything changes.
    /// Control thread.
    static func build(_ spec: GraphSpec, previous: Graph?, generation: Int, context: Context) throws -> Graph {
        let files = SessionNodeFiles(folder: spec.sessionFolder)
        var unused = previous?.strips ?? []
        var strips: [PlaybackStrip] = []
        // Mixer values are the engine's own once set: a strip kept (or followed) for the same
        // track keeps what it plays now, which may be a controller's move the control thread
        // has not seen yet. The transport writes what the user changed (``MixerChange``);
        // only a strip new to its track takes the spec's values.
        var predecessors: [ObjectIdentifier?] = []
        func sameTrack(_ old: PlaybackStrip, _ name: String) -> Bool {
            guard let previous, let k = previous.strips.firstIndex(where: { $0 === old }) else { return false }
            return previous.spec.tracks[k].name == name
        }
        for (i, track) in spec.tracks.enumerated() {
            if let at = unused.firstIndex(where: { $0.isBus == track.isBus && $0.voice.sources == track.sources
                && $0.channelCount == track.channelCount
                && ($0.voice.ring?.capacityFrames ?? .max) >= context.ringFrames }) {
                let old = unused[at]
                if Graph.canRetune(old.chainSpec, to: track.chain, instance: old.chain) {
                    unused.remove(at: at)
                    if old.chainSpec != track.chain, let chain = old.chain {
                        Graph.retune(chain, from: old.chainSpec, to: track.chain)
                        old.chainSpec = track.chain
                    }
                    old.dropFallbackIfDone()
                    let keeps = sameTrack(old, track.name)
                    if !keeps { old.controls.set(gainDecibels: track.gainDecibels, pan: track.pan, mute: track.mute, solo: track.solo) }
                    predecessors.append(keeps ? ObjectIdentifier(old) : nil)
                    strips.append(old)
                    continue
                }
                // Another chain on the same material: the nodes it keeps keep their state, and
                // as long as the chain delays by as much as before, the material plays on
                // through the same voice (no read, no hand-over).
                if let next = Graph.successor(of: old, chain: track.chain, context: context, files: files,
                                              stateFolder: spec.pluginStateFolder, isBus: track.isBus) {
                    unused.remove(at: at)
                    old.dropFallbackIfDone()
                    let keeps = sameTrack(old, track.name)
                    if keeps {
                        next.controls.copy(from: old.controls)
                    } else {
                        next.controls.set(gainDecibels: track.gainDecibels, pan: track.pan, mute: track.mute, solo: track.solo)
                    }
                    predecessors.append(keeps ? ObjectIdentifier(old) : nil)
                    strips.append(next)
                    continue
                }
            }
            let voice = try TrackVoice(sources: track.sources, channelCount: track.channelCount, ringFrames: context.ringFrames,
                                       blockFrames: context.blockFrames, waitNanoseconds: context.waitNanoseconds,
                                       readsDirect: context.readsDirect)
            // The same track (by name, at the same place) plays its old material until the new is read.
            var fallback: PlaybackStrip?
            if !track.isBus, let previous, i < previous.strips.count, previous.spec.tracks[i].name == track.name,
               !previous.strips[i].isBus {
                fallback = previous.strips[i]
                fallback?.dropFallbackIfDone()
            }
            let strip = PlaybackStrip(voice: voice, chain: track.chain, reusing: nil, sampleRate: context.sampleRate,
                                      maxFrames: Graph.stripFrames(periodFrames: context.periodFrames),
                                      meterWindowFrames: context.meterWindowFrames, fallback: fallback, stateFolder: spec.pluginStateFolder,
                                      files: files, isRealtime: context.isRealtime, isBus: track.isBus, ahead: context.ahead,
                                      stock: context.stock)
            if let fallback, sameTrack(fallback, track.name) {
                // The same track on new material: its fader as it stands.
                strip.controls.copy(from: fallback.controls)
                predecessors.append(ObjectIdentifier(fallback))
            } else {
                strip.controls.set(gainDecibels: track.gainDecibels, pan: track.pan, mute: track.mute, solo: track.solo)
                predecessors.append(nil)
            }
            strips.append(strip)
        }
        var unusedInputs = previous.map { p in zip(p.inputs, (0..<p.inputCount).map { p.trackOfInput[$0] }).map { ($0.0, p.spec.tracks[$0.1].name) } } ?? []
        var inputs: [InputStrip] = []
        var inputTracks: [Int] = []
        for (i, track) in spec.tracks.enumerated() {
            guard let input = track.input else { continue }
            // The same input whose chain differs only in values: kept, its nodes retuned in
            // place (a compressor's envelope, a plugin's state go on; a take is not disturbed).
            func sameButValues(_ old: InputStrip) -> Bool {
                var was = old.spec, now = input
                was.chain = Chain()
                now.chain = Chain()
                return was == now && Graph.canRetune(old.chainSpec, to: input.chain, instance: old.chain)
            }
            if let at = unusedInputs.firstIndex(where: { $0.1 == track.name && sameButValues($0.0) }) {
                let kept = unusedInputs.remove(at: at).0
                if kept.chainSpec != input.chain, let chain = kept.chain {
                    Graph.retune(chain, from: kept.chainSpec, to: input.chain)
                    kept.chainSpec = input.chain
                }
                inputs.append(kept)
            } else {
                inputs.append(InputStrip(spec: input, captureChannels: context.captureChannels, sampleRate: context.sampleRate,
                                         periodFrames: context.periodFrames, meterWindowFrames: context.meterWindowFrames,
                                         retroSeconds: spec.retroSeconds, stateFolder: spec.pluginStateFolder, files: files,
                                         stock: context.stock))
            }
            inputTracks.append(i)
        }
        // Every track's MIDI regions, read now (a file that cannot be read throws before any
        // strip plays something new); unchanged ones are reused.
        var playlists: [MIDIPlaylist?] = []
        for (i, track) in spec.tracks.enumerated() {
            if track.midiSources.isEmpty { playlists.append(nil); continue }
            if let same = strips[i].midi.playlist, same.sources == track.midiSources { playlists.append(same); continue }
            if let same = previous?.playlists.lazy.compactMap({ $0 }).first(where: { $0.sources == track.midiSources }) {
                playlists.append(same)
                continue
            }
            playlists.append(try MIDIPlaylist(sources: track.midiSources, sampleRate: context.sampleRate))
        }
        for (strip, playlist) in zip(strips, playlists) { strip.midi.setPlaylist(playlist, generation: generation) }
        var master: ChainInstance?
        if let previous, previous.masterChainSpec == spec.masterChain {
            master = previous.masterChain
        } else if let previous, let old = previous.masterChain, Graph.canRetune(previous.masterChainSpec, to: spec.masterChain, instance: old) {
            Graph.retune(old, from: previous.masterChainSpec, to: spec.masterChain)
            master = old
        } else if !spec.masterChain.entries.isEmpty {
            // Diffed by node against the master chain playing: what is kept keeps its state.
            master = spec.masterChain.instantiate(reusing: previous?.masterChain, stateFolder: spec.pluginStateFolder, files: files,
                                                  format: Graph.masterFormat(sampleRate: context.sampleRate, isRealtime: context.isRealtime),
                                                  maxFrames: context.periodFrames, stock: context.stock).instance
        }
        // The master bus is scanned for NaN before its chain (RenderCore.master).
        master?.inputIsClean = true
        let routes = RouteTable(spec: spec, strips: strips, predecessors: predecessors, masterLatencyFrames: master?.latencyFrames ?? 0,
                                maxFrames: Graph.stripFrames(periodFrames: context.periodFrames), previous: previous?.routes)
        let automations = zip(spec.tracks, strips).map { track, strip in
            StripAutomation.make(track, chain: strip.chain, maxFrames: Graph.stripFrames(periodFrames: context.periodFrames))
        }
        return Graph(generation: generation, spec: spec, strips: strips, inputs: inputs, inputTracks: inputTracks,
                     masterChain: master, playlists: playlists, routes: routes, automations: automations)
    }

    /// The strip that plays `old`'s material through `chain` instead, its nodes diffed against
    /// `old`'s (kept nodes keep their state), or nil when the new chain delays by another
    /// amount than the old (the voice must then read ahead by another amount: a new strip).
    /// Control thread.
    static func successor(of old: PlaybackStrip, chain: Chain, context: Context, files: SessionNodeFiles, stateFolder: String?,
                          isBus: Bool) -> PlaybackStrip? {
        // A strip still waiting for its material (its fallback playing) is replaced whole.
        guard old.handedOver.load(ordering: .acquiring) else { return nil }
        let maxFrames = Graph.stripFrames(periodFrames: context.periodFrames)
        var instance: ChainInstance?
        if !chain.entries.isEmpty {
            instance = chain.instantiate(reusing: old.chain, stateFolder: stateFolder, files: files,
                                         format: PlaybackStrip.nodeFormat(sampleRate: context.sampleRate, channelCount: old.channelCount,
                                                                          isRealtime: context.isRealtime),
                                         maxFrames: maxFrames, stock: context.stock).instance
        }
        guard (instance?.latencyFrames ?? 0) == old.latencyFrames else {
            // Built for nothing: its own nodes go, the ones it shares with the old stay.
            instance?.release(keeping: Set((old.chain?.nodes ?? []).map { ObjectIdentifier($0) }))
            return nil
        }
        return PlaybackStrip(voice: old.voice, chain: chain, reusing: instance, sampleRate: context.sampleRate, maxFrames: maxFrames,
                             meterWindowFrames: context.meterWindowFrames, fallback: nil, isRealtime: context.isRealtime,
                             isBus: isBus, predecessor: old, ahead: context.ahead)
    }

    /// Whether a live `instance` of chain `old` can become `new` by setting parameters: the
    /// same nodes in the same order (an empty chain has no instance).
    static func canRetune(_ old: Chain, to new: Chain, instance: ChainInstance?) -> Bool {
        canRetune(old, to: new, hasInstance: instance != nil)
    }

    /// ``canRetune(_:to:instance:)`` for a chain that has a live instance or not.
    static func canRetune(_ old: Chain, to new: Chain, hasInstance: Bool) -> Bool {
        if old == new { return true }
        guard hasInstance, old.entries.count == new.entries.count, !new.entries.isEmpty else { return false }
        // A different file (a sample, a SoundFont) is a new node, not a new value.
        return zip(old.entries, new.entries).allSatisfy { $0.node == $1.node && $0.texts == $1.texts }
    }

    /// Moves `instance`, built for `old`, to what `chain` says: each parameter whose value
    /// differs between the two (a default where one says nothing), and each bypass that
    /// differs. Nothing else is written: a parameter a controller or a lane moved since keeps
    /// its value unless this edit changed it. Nodes smooth the change. Control thread
    /// (parameters and bypass flags are atomics).
    static func retune(_ instance: ChainInstance, from old: Chain, to chain: Chain) {
        for (index, (was, entry)) in zip(old.entries, chain.entries).enumerated() where index < instance.nodes.count {
            if was.bypassed != entry.bypassed { instance.setBypassed(index, entry.bypassed) }
        }
        for (node, (was, entry)) in zip(instance.nodes, zip(old.entries, chain.entries)) {
            let parameters = node.parameters
            for (index, definition) in parameters.definitions.enumerated() {
                let before = was.settings.first { $0.parameter == definition.id }?.value ?? .number(definition.defaultValue)
                let after = entry.settings.first { $0.parameter == definition.id }?.value ?? .number(definition.defaultValue)
                if before != after { parameters.set(index, after) }
            }
        }
    }
}
