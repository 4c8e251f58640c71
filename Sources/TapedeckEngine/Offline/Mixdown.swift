import Dispatch
import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Renders a session offline to a stereo file: every audible track's regions through region
/// gain and fades, track gain and pan (see ``PanLaw``), summed on the master bus.
public struct Mixdown {
    /// What to render and where.
    public struct Request: Sendable {
        /// The session to mix.
        public var session: Session
        /// Its folder (region files are relative to it).
        public var folder: SessionFolder
        /// Timeline span to render.
        public var range: FrameRange
        /// Output file: WAV or FLAC, 16/24/32f.
        public var outputPath: String
        /// Output container and encoding; rate is the session's, two channels.
        public var container: AudioContainer
        /// Sample encoding of the output.
        public var encoding: SampleEncoding
        /// When set, each audible track is also written alone (post fader and pan) here.
        public var stemsFolder: String?
        /// Speed, mode and pitch of the whole export (1× leaves the mix untouched).
        public var timePitch: TimePitchSettings
        /// Engine for stretched material: per-region rates and the export's own speed.
        public var quality: StretchQuality
        /// Master chain text (the session's, or `--fx`); empty for none.
        public var masterChain: String
        /// Worker threads rendering tracks (1 renders on the calling thread only).
        public var workerCount: Int

        /// Creates a request.
        public init(session: Session, folder: SessionFolder, range: FrameRange, outputPath: String,
                    container: AudioContainer, encoding: SampleEncoding, stemsFolder: String? = nil,
                    timePitch: TimePitchSettings = .normal, quality: StretchQuality = .best,
                    masterChain: String? = nil, workerCount: Int = Mixdown.defaultWorkerCount) {
            self.masterChain = masterChain ?? session.masterChain
            self.workerCount = max(1, workerCount)
            self.timePitch = timePitch
            self.quality = quality
            self.session = session
            self.folder = folder
            self.range = range
            self.outputPath = outputPath
            self.container = container
            self.encoding = encoding
            self.stemsFolder = stemsFolder
        }
    }

    /// What a finished mixdown measured.
    public struct Summary: Sendable {
        /// Frames written.
        public var frameCount: Int64
        /// Largest absolute sample of the mix, in dBFS, before an integer file clipped it:
        /// above 0 the mix went over.
        public var peakDecibels: Double
        /// Samples of the mix (both channels) beyond full scale: clipped in a 16- or 24-bit
        /// file, kept in a 32-bit float one.
        public var overCount: Int64
        /// Stem files written, if any.
        public var stemPaths: [String]
        /// Nodes that did not work and were passed through (a plugin not installed or that
        /// failed to start), one line each with its chain: `track 2 (Bass) chain: node 1 …`.
        public var warnings: [String]
        /// NaN and infinite samples met (in region files, made by chains, on the master
        /// bus) and replaced by silence; 0 for a clean mix.
        public var nonFiniteSampleCount: Int64 = 0

        /// Whether the samples over full scale were clipped (an integer file) or kept.
        public var oversWereClipped: Bool

        /// `, 1234 samples clipped (peak 3.1 dB over 0 dBFS)` when the mix went over full
        /// scale, else empty: the end of the one line an export reports.
        public var clipText: String {
            guard overCount > 0 else { return "" }
            let over = Decibels.text(max(0, peakDecibels))
            return oversWereClipped
                ? "; CLIPPED: \(overCount) sample\(overCount == 1 ? "" : "s") over 0 dBFS (peak \(over) dB over), lower the faders or export --bits 32f to keep them"
                : "; \(overCount) sample\(overCount == 1 ? "" : "s") over 0 dBFS kept as float (peak \(over) dB over)"
        }
    }

    /// Frames rendered per block.
    public static let blockFrames = 16384

    /// One worker per core.
    public static var defaultWorkerCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    private let request: Request

    /// Prepares a mixdown of `request`.
    public init(_ request: Request) {
        self.request = request
    }

    /// Renders the whole range. Opens every region file first, so a missing or corrupt file
    /// fails before anything is written. Output is written to a `.partial` file and renamed
    /// into place on success, so a failed export never leaves a plausible-looking file.
    /// Regions with a rate other than 1 play from their ``StretchedRegionCache`` renders; an
    /// export speed or pitch renders the 1× mix through ``TimePitchRender``.
    /// `progress` is called with the fraction done.
    public func run(progress: (Double) -> Void = { _ in }) throws -> Summary {
        let finalFormat = AudioFileFormat(container: request.container, encoding: request.encoding,
                                          sampleRate: request.session.sampleRate, channelCount: 2)
        if let problem = finalFormat.problem() { throw AudioFileError(path: request.outputPath, reason: problem) }
        let scratch = ScratchFiles(prefix: request.outputPath)
        defer { scratch.removeAll() }
        let stretched = request.timePitch.isIdentity == false
        // At 1× the mix and its stems are the live engine's, freewheeled: what plays is what
        // is exported. (Exports at another speed still render here, for now.)
        if !stretched { return try runFreewheel(format: finalFormat, progress: progress) }
        let mixShare = stretched ? 0.3 : 1.0
        let tracks = try openTracks()
        let master = try Mixdown.masterChain(request.masterChain, sampleRate: request.session.sampleRate,
                                             stateFolder: request.folder.pluginStateFolder, files: SessionNodeFiles(folder: request.folder.path))
        defer { master?.release() }
        let warnings = tracks.flatMap { track in track.problems.map { "track \(track.index + 1) (\(track.name)) chain: \($0)" } }
            + (master?.problems ?? []).map { "master chain: \($0)" }
        let mixPath = stretched ? scratch.make("mix") : request.outputPath + ".partial"
        let stemPaths = request.stemsFolder.map { folder in
            tracks.map { folder + "/" + Mixdown.stemFileName($0.name, index: $0.index, container: request.container) }
        } ?? []
        let stemMixPaths = stretched ? stemPaths.map { _ in scratch.make("stem") } : stemPaths.map { $0 + ".partial" }
        let encoding = stretched ? SampleEncoding.float32 : request.encoding
        let container = stretched ? AudioContainer.wav : request.container
        do {
            var nonFinite: Int64 = 0
            var levels = try mix(tracks, master: master, to: mixPath, stems: stemMixPaths, container: container, encoding: encoding,
                                 nonFinite: &nonFinite) { progress($0 * mixShare) }
            var frames = request.range.frameCount
            if stretched {
                let all = [(mixPath, request.outputPath)] + Array(zip(stemMixPaths, stemPaths))
                for (i, (from, to)) in all.enumerated() {
                    let rendered = try TimePitchRender.render(sourcePath: from, destinationPath: to + ".partial", encoding: request.encoding,
                                                              container: request.container, settings: request.timePitch,
                                                              quality: request.quality) { f in
                        progress(mixShare + (1 - mixShare) * (Double(i) + f) / Double(all.count))
                    }
                    if i == 0 {
                        frames = rendered.frameCount
                        levels = (rendered.peakAmplitude, rendered.overCount)
                    }
                }
            }
            try Mixdown.moveIntoPlace(request.outputPath + ".partial", request.outputPath)
            for p in stemPaths { try Mixdown.moveIntoPlace(p + ".partial", p) }
            return Summary(frameCount: frames, peakDecibels: Decibels.fromLinear(Double(levels.peak)), overCount: levels.overs,
                           stemPaths: stemPaths, warnings: warnings, nonFiniteSampleCount: nonFinite,
                           oversWereClipped: request.encoding != .float32)
        } catch {
            unlink(request.outputPath + ".partial")
            for p in stemPaths { unlink(p + ".partial") }
            throw error
        }
    }

    /// The mix (and the audible tracks' stems) through ``FreewheelMix`` into `.partial` files
    /// renamed into place when all are done.
    private func runFreewheel(format: AudioFileFormat, progress: (Double) -> Void) throws -> Summary {
        let session = request.session
        let partial = request.outputPath + ".partial"
        let stemTracks = request.stemsFolder == nil ? [] : session.tracks.indices.filter { session.isAudible(trackIndex: $0) }
        let stemPaths = request.stemsFolder.map { folder in
            stemTracks.map { folder + "/" + Mixdown.stemFileName(session.tracks[$0].name, index: $0, container: request.container) }
        } ?? []
        do {
            func open(_ path: String) throws -> AudioFileWriter {
                try AudioFileWriter(path: path, format: format, blockFrames: FreewheelMix.periodFrames,
                                    expectedFrameCount: request.range.frameCount, creation: .replacingLeftover)
            }
            let writer = try open(partial)
            let stems = try zip(stemTracks, stemPaths).map { (track: $0.0, writer: try open($0.1 + ".partial")) }
            let result = try FreewheelMix(request: request).render(into: writer, stems: stems, progress: progress)
            try writer.close()
            for stem in stems { try stem.writer.close() }
            try Mixdown.moveIntoPlace(partial, request.outputPath)
            for p in stemPaths { try Mixdown.moveIntoPlace(p + ".partial", p) }
            return Summary(frameCount: request.range.frameCount, peakDecibels: Decibels.fromLinear(Double(writer.peakAmplitude)),
                           overCount: writer.overCount, stemPaths: stemPaths, warnings: result.warnings,
                           nonFiniteSampleCount: result.nonFiniteSampleCount, oversWereClipped: request.encoding != .float32)
        } catch {
            unlink(partial)
            for p in stemPaths { unlink(p + ".partial") }
            throw error
        }
    }

    /// Mixes the range into `path` (and each track into `stems`, when given) through the
    /// master chain and the master fader; returns the mix's peak (linear) and its samples
    /// over full scale, as handed to the writer. Tracks render in parallel on `workerCount`
    /// threads; their outputs are summed in track order on this thread.
    private func mix(_ tracks: [TrackRenderer], master: ChainInstance?, to path: String, stems: [String], container: AudioContainer,
                     encoding: SampleEncoding, nonFinite: inout Int64, progress: (Double) -> Void) throws -> (peak: Float, overs: Int64) {
        let session = request.session
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: session.sampleRate, channelCount: 2)
        if let problem = format.problem() { throw AudioFileError(path: request.outputPath, reason: problem) }
        let masterLatency = Int64(master?.latencyFrames ?? 0)
        let frames = request.range.frameCount
        let writer = try AudioFileWriter(path: path, format: format, blockFrames: Mixdown.blockFrames, expectedFrameCount: frames,
                                         creation: .replacingLeftover)
        var stemWriters: [AudioFileWriter] = []
        for stem in stems {
            stemWriters.append(try AudioFileWriter(path: stem, format: format, blockFrames: Mixdown.blockFrames,
                                                   expectedFrameCount: frames, creation: .replacingLeftover))
        }
        var busNonFinite: Int64 = 0

        let map = session.tempoMap
        func transport(at frame: Int64) -> TransportInfo {
            TransportInfo(tempoBPM: session.tempoBPM, beatPosition: Double(frame) / map.framesPerBeat,
                          beatsPerBar: session.timeSignature.beatsPerBar, beatUnit: session.timeSignature.beatUnit,
                          sampleRate: Double(session.sampleRate), timelineFrame: frame, isPlaying: true,
                          isCycling: false)
        }
        for track in tracks { try track.prime(startFrame: request.range.startFrame, transport: transport(at: request.range.startFrame)) }

        // Two buses: while one block is summed, mastered and written on this thread, the
        // workers already render the next one (writing is the serial part of a mixdown).
        let buses = [ChannelBuffers(channelCount: 2, capacityFrames: Mixdown.blockFrames),
                     ChannelBuffers(channelCount: 2, capacityFrames: Mixdown.blockFrames)]
        let workers = ParallelTracks(tracks, workerCount: request.workerCount)
        defer { workers.stop() }
        let masterGain = Float(Decibels.toLinear(session.masterGainDecibels))
        var position = request.range.startFrame
        // The master chain's delay is absorbed by rendering that many extra frames and
        // dropping as many from the front.
        let renderEnd = request.range.endFrame + masterLatency
        var toDrop = masterLatency
        let total = renderEnd - request.range.startFrame
        func startRender(at start: Int64) -> (frames: Int, info: TransportInfo, done: DispatchGroup) {
            let n = Int(min(Int64(Mixdown.blockFrames), renderEnd - start))
            let info = transport(at: start)
            let done = DispatchGroup()
            DispatchQueue.global(qos: .userInitiated).async(group: done) {
                workers.render(blockStart: start, frameCount: n, transport: info)
            }
            return (n, info, done)
        }
        var block = 0
        var inFlight = position < renderEnd ? startRender(at: position) : nil
        while let current = inFlight {
            current.done.wait()
            let n = current.frames
            if let error = tracks.lazy.compactMap(\.error).first { throw error }
            let bus = buses[block % 2]
            if tracks.isEmpty { bus.clear(frameCount: n) }
            for (t, track) in tracks.enumerated() {
                // The first track is copied onto the bus: the same bits as adding it to silence.
                if t == 0 {
                    bus.channels[0].update(from: track.output.left, count: n)
                    bus.channels[1].update(from: track.output.right, count: n)
                } else {
                    MixKernels.accumulate(track.output.left, into: bus.channels[0], frameCount: n, startGain: 1, endGain: 1)
                    MixKernels.accumulate(track.output.right, into: bus.channels[1], frameCount: n, startGain: 1, endGain: 1)
                }
                if !stemWriters.isEmpty, position < request.range.endFrame {
                    let k = Int(min(Int64(n), request.range.endFrame - position))
                    try stemWriters[t].write([UnsafePointer(track.output.left), UnsafePointer(track.output.right)], frameCount: k)
                }
            }
            // The track outputs are summed: the next block may overwrite them now.
            let next = position + Int64(n)
            inFlight = next < renderEnd ? startRender(at: next) : nil
            if let master {
                var context = RenderContext(inPlace: bus.channels, frameCount: n, transport: current.info)
                master.process(&context)
            }
            // What no chain cleaned (a file's NaN on a track without effects) stops here.
            for c in 0..<2 { busNonFinite += Int64(NonFiniteSamples.replace(bus.channels[c], count: n)) }
            MixKernels.scale(bus.channels[0], frameCount: n, gain: masterGain)
            MixKernels.scale(bus.channels[1], frameCount: n, gain: masterGain)
            let skip = Int(min(toDrop, Int64(n)))
            toDrop -= Int64(skip)
            let k = n - skip
            if k > 0 {
                let l = bus.channels[0] + skip, r = bus.channels[1] + skip
                do { try writer.write([UnsafePointer(l), UnsafePointer(r)], frameCount: k) } catch {
                    inFlight?.done.wait()
                    throw error
                }
            }
            position = next
            block += 1
            progress(Double(position - request.range.startFrame) / Double(max(total, 1)))
        }
        try writer.close()
        for w in stemWriters { try w.close() }
        nonFinite = busNonFinite + (master?.nonFiniteSampleCount ?? 0) + tracks.reduce(0) { $0 + $1.nonFiniteSampleCount }
        return (writer.peakAmplitude, writer.overCount)
    }

    /// The master chain, prepared for stereo offline rendering at `sampleRate` (plugin state
    /// read from `stateFolder`), or nil when `text` is empty.
    static func masterChain(_ text: String, sampleRate: Int, stateFolder: String?, files: (any NodeFiles)? = nil) throws -> ChainInstance? {
        let chain: Chain
        do { chain = try Chain(parsing: text) } catch {
            throw ChainContextError(place: "master chain", error: error)
        }
        guard !chain.entries.isEmpty else { return nil }
        let instance = chain.instantiate(stateFolder: stateFolder, files: files)
        instance.prepare(format: NodeFormat(sampleRate: Double(sampleRate), channelCount: 2, isRealtime: false), maxFrames: blockFrames)
        return instance
    }

    private func openTracks() throws -> [TrackRenderer] {
        let session = request.session
        var open: [TrackRenderer] = []
        for (i, _) in session.tracks.enumerated() where session.isAudible(trackIndex: i) {
            open.append(try Mixdown.renderer(track: i, session: session, folder: request.folder, range: request.range,
                                             quality: request.quality, blockFrames: Mixdown.blockFrames))
        }
        return open
    }

    /// The renderer of track `index` for `range`: its playing audio regions layered, its MIDI
    /// regions into its chain — or, frozen, its render alone. Regions outside the range are
    /// not opened but still shape the crossfades of the ones in it, so a range renders
    /// exactly what the whole export (and playback) has there.
    static func renderer(track index: Int, session: Session, folder: SessionFolder, range: FrameRange,
                         quality: StretchQuality, blockFrames: Int) throws -> TrackRenderer {
        let track = session.tracks[index]
        let cache = StretchedRegionCache(folder: folder)
        let chain: Chain
        do { chain = track.frozen != nil ? Chain() : try Chain(parsing: track.playbackChain) } catch {
            throw ChainContextError(place: "track \(index + 1) (\(track.name)) chain", error: error)
        }
        // Only the active take of each take group plays; ordinary regions always do.
        var regions: [Region] = [], paths: [String?] = []
        for region in track.frozen.map({ [$0.region] }) ?? track.activeAudioRegions {
            if region.timelineEndFrame > range.startFrame && region.timelineStartFrame < range.endFrame {
                let (playable, path) = try cache.playable(region, quality: quality)
                regions.append(playable)
                paths.append(path)
            } else {
                regions.append(region)
                paths.append(nil)
            }
        }
        let source = try LayeredTrackSource(regions: regions, paths: paths, blockFrames: blockFrames, sampleRate: session.sampleRate)
        let midi = track.frozen != nil ? [] : track.activeMIDIRegions.map { GraphSpec.Source(path: folder.absolutePath(of: $0.file), region: $0) }
        let playlist = midi.isEmpty ? nil : try MIDIPlaylist(sources: midi, sampleRate: session.sampleRate)
        return TrackRenderer(index: index, track: track, source: source, chain: chain, sampleRate: session.sampleRate,
                             blockFrames: blockFrames, stateFolder: folder.pluginStateFolder,
                             files: SessionNodeFiles(folder: folder.path), playlist: playlist,
                             minimumChannels: track.isMIDI && track.frozen == nil ? 2 : 1)
    }

    static func stemFileName(_ name: String, index: Int, container: AudioContainer) -> String {
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        let number = index + 1 < 10 ? "0\(index + 1)" : "\(index + 1)"
        return "\(number)-\(safe.isEmpty ? "track" : safe).\(container.rawValue)"
    }

    static func moveIntoPlace(_ from: String, _ to: String) throws(AudioFileError) {
        if rename(from, to) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(from)
            throw AudioFileError(path: to, reason: "cannot move the finished file into place: \(reason)")
        }
    }
}

/// Temporary files next to the output, removed when the export ends either way.
final class ScratchFiles {
    private let prefix: String
    private var paths: [String] = []

    init(prefix: String) { self.prefix = prefix }

    /// A fresh path `PREFIX.KIND-N.tmp.wav`.
    func make(_ kind: String) -> String {
        let p = "\(prefix).\(kind)-\(paths.count).tmp.wav"
        paths.append(p)
        return p
    }

    func removeAll() {
        for p in paths { unlink(p); unlink(p + ".partial") }
        paths.removeAll()
    }
}

/// Two preallocated channel buffers.
final class StereoBuffer {
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>

    init(frameCount: Int) {
        left = .allocate(capacity: frameCount)
        right = .allocate(capacity: frameCount)
        left.initialize(repeating: 0, count: frameCount)
        right.initialize(repeating: 0, count: frameCount)
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    func clear(frameCount: Int) {
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
    }
}
