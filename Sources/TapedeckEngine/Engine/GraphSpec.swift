import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// What the engine should play and hear: every track's material, chain, mixer settings and
/// (for tracks that listen to the device) input, plus the master chain. A value built on the
/// control thread from a session; ``Engine/apply(_:)`` turns it into a live graph, reusing
/// whatever did not change.
public struct GraphSpec: Sendable, Equatable {
    /// One region and the file it plays from: an audio file, or for a MIDI region its
    /// Standard MIDI File. Audio regions with a rate other than 1 have already been resolved
    /// to their 1× render (``StretchedRegionCache``).
    public struct Source: Sendable, Equatable {
        /// Absolute path of the file.
        public var path: String
        /// The region (an audio one at rate 1, with its gain and fades).
        public var region: Region

        /// Creates a source.
        public init(path: String, region: Region) {
            self.path = path
            self.region = region
        }
    }

    /// A MIDI learn binding with its track found: what a controller moves in this graph.
    public struct Binding: Sendable, Equatable {
        /// The binding as the session holds it.
        public var binding: MIDIBinding
        /// The track it names, by index (nil: the master, or a track that no longer exists).
        public var track: Int?

        /// Creates a binding.
        public init(binding: MIDIBinding, track: Int?) {
            self.binding = binding
            self.track = track
        }
    }

    /// Where a track listens: device channels, the chain recorded through, monitoring.
    public struct Input: Sendable, Equatable {
        /// Device input channels, 1-based, in file order (one, or a stereo pair).
        public var deviceChannels: [Int]
        /// The input chain (what is recorded, and what monitoring hears).
        public var chain: Chain
        /// When the input is heard in place of the track's playback.
        public var monitoring: MonitoringMode

        /// Creates an input.
        public init(deviceChannels: [Int], chain: Chain = Chain(), monitoring: MonitoringMode = .off) {
            self.deviceChannels = deviceChannels
            self.chain = chain
            self.monitoring = monitoring
        }
    }

    /// A send of a strip to a bus: level and pan are values the engine glides to (atomics),
    /// the target and the tap point shape the graph.
    public struct Send: Sendable, Equatable {
        /// The bus, by strip index.
        public var target: Int
        /// Taken before the fader (and mute and solo).
        public var preFader: Bool
        /// Level in dB.
        public var levelDecibels: Double
        /// −1 … +1.
        public var pan: Double

        /// Creates a send.
        public init(target: Int, preFader: Bool = false, levelDecibels: Double = 0, pan: Double = 0) {
            self.target = target
            self.preFader = preFader
            self.levelDecibels = levelDecibels
            self.pan = pan
        }
    }

    /// Where a strip's output goes.
    public enum Output: Sendable, Equatable {
        /// The master bus.
        case master
        /// A bus, by strip index.
        case strip(Int)
        /// Device outputs, 1-based (one, or a pair).
        case device([Int])
    }

    /// One track.
    public struct Track: Sendable, Equatable {
        /// Display name.
        public var name: String
        /// The regions that play.
        public var sources: [Source]
        /// 1 (mono) or 2 (stereo): the widest source or input, capped at 2.
        public var channelCount: Int
        /// The playback chain (empty: none), before the fader.
        public var chain: Chain
        /// Fader in dB (−∞ allowed).
        public var gainDecibels: Double
        /// −1 hard left … +1 hard right.
        public var pan: Double
        /// Silenced.
        public var mute: Bool
        /// Soloed: when any track is, only soloed tracks are heard.
        public var solo: Bool
        /// The track's input while it is armed (nil: it does not listen).
        public var input: Input?
        /// Its MIDI regions, played into its chain while rolling.
        public var midiSources: [Source] = []
        /// Whether it hears the MIDI inputs (armed): its chain then gets them instead of its
        /// MIDI regions.
        public var listensToMIDI = false
        /// A bus: no material of its own, it plays what other strips send or output to it.
        public var isBus = false
        /// Heard whatever is soloed.
        public var soloSafe = false
        /// Its sends, each to a bus strip.
        public var sends: [Send] = []
        /// Where its output goes.
        public var output: Output = .master
        /// The bus each of ``sends`` goes to, by its name in the session (send lanes name it so).
        public var sendBuses: [String] = []
        /// Its automation lanes that play (mode play, touch or latch, with points); a send's
        /// lane names the send by its bus as the session does.
        public var automation: [AutomationLane] = []

        /// Creates a track.
        public init(name: String, sources: [Source], channelCount: Int, chain: Chain = Chain(), gainDecibels: Double = 0,
                    pan: Double = 0, mute: Bool = false, solo: Bool = false, input: Input? = nil) {
            self.name = name
            self.sources = sources
            self.channelCount = channelCount
            self.chain = chain
            self.gainDecibels = gainDecibels
            self.pan = pan
            self.mute = mute
            self.solo = solo
            self.input = input
        }
    }

    /// The tracks, in session order (the engine's track numbers are these indices).
    public var tracks: [Track]
    /// Frames per second of every position.
    public var sampleRate: Int
    /// The master chain (empty: none), on the stereo mix.
    public var masterChain = Chain()
    /// The master fader in dB.
    public var masterGainDecibels = 0.0
    /// Tempo and meter, for tempo-synced nodes and the click.
    public var tempoMap: TempoMap
    /// Seconds of every input kept in memory for retroactive capture (nil: none).
    public var retroSeconds: Double?
    /// The session's plugin-state folder, where chains' `@state=` entries are read from
    /// (nil: none; plugins start from their defaults).
    public var pluginStateFolder: String?
    /// The session folder, which files named in chains (`sampler:file=…`) are relative to
    /// (nil: the current folder).
    public var sessionFolder: String?
    /// Controllers bound to faders, pans, mutes and node parameters, in the session's order.
    public var midiBindings: [Binding] = []

    /// Creates a spec.
    public init(tracks: [Track], sampleRate: Int, tempoMap: TempoMap? = nil) {
        self.tracks = tracks
        self.sampleRate = sampleRate
        self.tempoMap = tempoMap ?? TempoMap(sampleRate: sampleRate, tempoBPM: 120,
                                             timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
    }

    /// First timeline frame after the last region (audio or MIDI).
    public var endFrame: Int64 {
        max(tracks.flatMap(\.sources).map(\.region.timelineEndFrame).max() ?? 0,
            tracks.flatMap(\.midiSources).map(\.region.timelineEndFrame).max() ?? 0)
    }

    /// Every track of `session` with its active regions, chains and mixer settings; tracks in
    /// `listening` (default: the armed ones) get their input. Opens each distinct file once to learn
    /// its channel count; renders regions with a rate other than 1 into the session's cache
    /// first (once; later specs reuse the render). A chain that does not parse throws
    /// ``ChainContextError``. Control thread.
    /// `stretching` hears each render's progress, 0…1 (a screen's progress line); what it
    /// throws stops the render and the spec (a build nobody wants any more). The chains
    /// are taken from `chains` as their owner keeps them (brought up to `session`: only text it
    /// has not read is parsed); without one each is parsed here, once.
    public init(session: Session, folder: SessionFolder, listening: Set<Int>? = nil, chains: SessionChains? = nil,
                stretching: (Double) throws -> Void = { _ in }) throws {
        var chains = chains ?? SessionChains()
        chains.update(to: session)
        let cache = StretchedRegionCache(folder: folder)
        var tracks: [Track] = []
        // Channels of each distinct file, learned once however many regions play from it.
        var widths: [String: Int] = [:]
        if let problem = session.routingProblem() { throw RoutingError(problem) }
        for (i, t) in session.tracks.enumerated() {
            if t.isBus {
                let chain: Chain
                do { chain = try chains.slot(i).chain.get() } catch {
                    throw ChainContextError(place: "bus \(i + 1) (\(t.name)) chain", error: error)
                }
                var bus = Track(name: t.name, sources: [], channelCount: t.busChannelCount, chain: chain,
                                gainDecibels: t.gainDecibels, pan: t.pan, mute: t.mute, solo: t.solo)
                bus.isBus = true
                bus.soloSafe = t.isSoloSafe
                tracks.append(bus)
                continue
            }
            var sources: [Source] = []
            // A MIDI track's instrument plays in stereo.
            var width = t.isMIDI ? 2 : 1
            // Of each stack of takes only the chosen one plays; a frozen track plays its render.
            for r in (t.frozen.map { [$0.region] } ?? t.activeAudioRegions) where r.lengthFrames > 0 {
                let (region, path) = try cache.playable(r, progress: stretching)
                if widths[path] == nil {
                    let reader = try AudioFileReader(path: path, blockFrames: 16)
                    widths[path] = min(reader.channelCount, 2)
                    reader.close()
                }
                width = max(width, widths[path] ?? 1)
                sources.append(Source(path: path, region: region))
            }
            let midiSources = t.frozen != nil ? [] : t.activeMIDIRegions.filter { $0.lengthFrames > 0 }.map {
                Source(path: folder.absolutePath(of: $0.file), region: $0)
            }
            let chain: Chain
            do { chain = t.frozen != nil ? Chain() : try chains.slot(i).chain.get() } catch {
                throw ChainContextError(place: "track \(i + 1) (\(t.name)) chain", error: error)
            }
            let listens = listening?.contains(i) ?? t.armed
            var input: Input?
            if listens && !t.isMIDI && t.frozen == nil {
                let inputChain: Chain
                do { inputChain = try chains.slot(i, .input).chain.get() } catch {
                    throw ChainContextError(place: "track \(i + 1) (\(t.name)) input chain", error: error)
                }
                let channels = t.inputChannels.isEmpty ? [1] : Array(t.inputChannels.prefix(2))
                input = Input(deviceChannels: channels, chain: inputChain, monitoring: t.monitoring)
                width = max(width, channels.count)
            }
            var track = Track(name: t.name, sources: sources, channelCount: width, chain: chain,
                              gainDecibels: t.gainDecibels, pan: t.pan, mute: t.mute, solo: t.solo, input: input)
            track.midiSources = midiSources
            track.listensToMIDI = listens && t.frozen == nil
            tracks.append(track)
        }
        // Routing, by strip index (the names were checked above).
        for (i, t) in session.tracks.enumerated() {
            switch t.output {
            case .master: tracks[i].output = .master
            case .bus(let name): tracks[i].output = session.busIndex(named: name).map { .strip($0) } ?? .master
            case .device(let channels): tracks[i].output = .device(channels)
            }
            tracks[i].automation = t.automation.filter { $0.mode.plays && !$0.points.isEmpty }
            tracks[i].sendBuses = t.sends.filter { session.busIndex(named: $0.bus) != nil }.map(\.bus)
            tracks[i].sends = t.sends.compactMap { send in
                session.busIndex(named: send.bus).map {
                    Send(target: $0, preFader: send.preFader, levelDecibels: send.levelDecibels, pan: send.pan)
                }
            }
        }
        self.init(tracks: tracks, sampleRate: session.sampleRate, tempoMap: session.tempoMap)
        pluginStateFolder = folder.pluginStateFolder
        sessionFolder = folder.path
        midiBindings = session.midiBindings.map { b in
            Binding(binding: b, track: b.track.flatMap { name in session.tracks.firstIndex { $0.name.lowercased() == name.lowercased() } })
        }
        masterGainDecibels = session.masterGainDecibels
        do { masterChain = try chains.masterSlot.chain.get() } catch {
            throw ChainContextError(place: "master chain", error: error)
        }
    }

    /// One file from its start, as a single centred track.
    public init(file path: String) throws(AudioFileError) {
        let reader = try AudioFileReader(path: path, blockFrames: 16)
        let region = Region(file: path, timelineStartFrame: 0, lengthFrames: reader.frameCount)
        let track = Track(name: path, sources: [Source(path: path, region: region)], channelCount: min(reader.channelCount, 2))
        self.init(tracks: [track], sampleRate: reader.sampleRate)
    }
}

extension GraphSpec {
    /// Applies a typed mixer change, as ``Session/apply(_:)-(MixerChange)`` does to the session
    /// it was built from (the transport keeps its spec in step with its session). Strips and
    /// sends count as the session's do.
    public mutating func apply(_ change: MixerChange) {
        guard let change = change.held else { return }
        if let s = change.strip, !tracks.indices.contains(s) { return }
        switch change {
        case .gain(let s, let dB): tracks[s].gainDecibels = dB
        case .pan(let s, let v): tracks[s].pan = v
        case .mute(let s, let on): tracks[s].mute = on
        case .solo(let s, let on): tracks[s].solo = on
        case .sendLevel(let s, let k, let dB): if tracks[s].sends.indices.contains(k) { tracks[s].sends[k].levelDecibels = dB }
        case .sendPan(let s, let k, let v): if tracks[s].sends.indices.contains(k) { tracks[s].sends[k].pan = v }
        case .masterGain(let dB): masterGainDecibels = dB
        }
    }

    /// Applies a typed chain change to the chain it names (a track's input only while it
    /// listens).
    public mutating func apply(_ change: ChainValueChange) {
        switch change.place {
        case .master: _ = masterChain.apply(change.value, entry: change.node)
        case .playback(let s): if tracks.indices.contains(s) { _ = tracks[s].chain.apply(change.value, entry: change.node) }
        case .input(let s): if tracks.indices.contains(s) { _ = tracks[s].input?.chain.apply(change.value, entry: change.node) }
        }
    }
}
