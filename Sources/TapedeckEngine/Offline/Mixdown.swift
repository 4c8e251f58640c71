import Dispatch
import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Renders a session to a stereo file (and stems) through the live engine, freewheeled: what
/// playback plays, routing, delay compensation, speed and pitch included.
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
        /// The master chain in place of the session's (`--fx`, parsed where it was typed; an
        /// empty chain for none); nil plays the session's own, as ``chains`` read it.
        public var masterChain: Chain?
        /// The session's chains, read once for the whole export: every pass's graph and the
        /// master section take them from here, so no pass parses the session's chain text.
        public var chains: SessionChains
        /// Worker threads rendering tracks (1 renders on the calling thread only).
        public var workerCount: Int
        /// At another speed or pitch, the live engine's stretcher on the mix (real-time mode,
        /// a period at a time) rather than a 1× render through the offline one: what
        /// playback at that speed plays, block for block. Off by default.
        public var usesLiveStretcher = false
        /// MP3 and Opus: bit rate or quality (nil: the container's standard).
        public var encoder: EncoderSetting?
        /// Title, artist, album, date the files carry (the title defaults to the session's name).
        public var tags = FileTags()
        /// Whether lost-input markers become cue points and chapters too (`--markers all`).
        public var allMarkers = false
        /// What is rendered past the range's end (`--tail`): effects' echoes and decays.
        public var tail: ExportTail = .none

        /// Creates a request.
        public init(session: Session, folder: SessionFolder, range: FrameRange, outputPath: String,
                    container: AudioContainer, encoding: SampleEncoding, stemsFolder: String? = nil,
                    timePitch: TimePitchSettings = .normal, quality: StretchQuality = .best,
                    masterChain: Chain? = nil, chains: SessionChains? = nil, workerCount: Int = Mixdown.defaultWorkerCount) {
            self.masterChain = masterChain
            // The owner's chains when it hands them (only text they have not read is parsed);
            // otherwise the session's are read here, once for the export.
            var chains = chains ?? SessionChains()
            chains.update(to: session)
            self.chains = chains
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

        /// The chains brought up to ``session`` (a pass may have changed it: only new text is
        /// read).
        var sessionChains: SessionChains {
            var kept = chains
            kept.update(to: session)
            return kept
        }

        /// The master chain the export plays: ``masterChain`` when one was handed, otherwise
        /// the session's as ``chains`` read it; throws the parser's error for a session whose
        /// master chain does not parse.
        func playedMasterChain() throws(ChainError) -> Chain {
            if let masterChain { return masterChain }
            return try sessionChains.masterSlot.chain.get()
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
        /// `, tail 3.250 s` when `--tail` rendered past the range (empty otherwise).
        public var tailText = ""

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


    /// One worker per core.
    public static var defaultWorkerCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    private let request: Request

    /// Prepares a mixdown of `request`.
    public init(_ request: Request) {
        self.request = request
    }

    /// Renders the whole range through the live engine, freewheeled (``FreewheelMix``): what
    /// plays is what is exported, at any speed or pitch (the stretcher `quality` asks for at
    /// the one timeline→device point playback has). Every region file is opened first, so a
    /// missing or corrupt file fails before anything is written. Output is written to a
    /// `.partial` file and renamed into place on success, so a failed export never leaves a
    /// plausible-looking file. Regions with a rate other than 1 play from their
    /// ``StretchedRegionCache`` renders. Stems are the audible strips whose output reaches the
    /// master (a track routed into a bus is heard in that bus's stem), so they sum to what the
    /// master hears. `progress` is called with the fraction done.
    public func run(progress: (Double) -> Void = { _ in }) throws -> Summary {
        let format = AudioFileFormat(container: request.container, encoding: request.encoding,
                                     sampleRate: request.session.sampleRate, channelCount: 2, encoder: request.encoder)
        if let problem = format.problem() { throw AudioFileError(path: request.outputPath, reason: problem) }
        let session = request.session
        let partial = request.outputPath + ".partial"
        let audible = session.audibleStrips()
        let stemTracks = request.stemsFolder == nil ? [] : session.tracks.indices.filter { i in
            guard audible[i] else { return false }
            if case .master = session.tracks[i].output { return true }
            if case .bus(let name) = session.tracks[i].output { return session.busIndex(named: name) == nil }
            return false
        }
        let stemPaths = request.stemsFolder.map { folder in
            stemTracks.map { folder + "/" + Mixdown.stemFileName(session.tracks[$0].name, index: $0, container: request.container) }
        } ?? []
        let mix = FreewheelMix(request: request)
        var tailNote = ""
        do {
            // Exports and stems describe themselves as takes do, and carry the markers.
            let cues = request.fileCues
            func open(_ path: String, track: Int?) throws -> AudioFileWriter {
                try AudioFileWriter(path: path, format: format, blockFrames: FreewheelRender.longPeriodFrames,
                                    expectedFrameCount: mix.outputFrameCount, metadata: request.fileMetadata(track: track),
                                    cues: cues, tags: request.fileTags(track: track), creation: .replacingLeftover)
            }
            let writer = try open(partial, track: nil)
            let stems = try zip(stemTracks, stemPaths).map { (track: $0.0, writer: try open($0.1 + ".partial", track: $0.0)) }
            let result = try mix.render(into: writer, stems: stems, progress: progress)
            if let tailLine = result.tailLine { tailNote = tailLine }
            try writer.close()
            for stem in stems { try stem.writer.close() }
            try Mixdown.moveIntoPlace(partial, request.outputPath)
            for p in stemPaths { try Mixdown.moveIntoPlace(p + ".partial", p) }
            // Said once, for the mix: its stems carry the same markers and fields.
            let metadataWarnings = writer.metadataProblem.map { ["\(request.outputPath): \($0)"] } ?? []
            var summary = Summary(frameCount: result.frameCount, peakDecibels: Decibels.fromLinear(Double(writer.peakAmplitude)),
                                  overCount: writer.overCount, stemPaths: stemPaths, warnings: result.warnings + metadataWarnings,
                                  nonFiniteSampleCount: result.nonFiniteSampleCount,
                                  oversWereClipped: request.encoding != .float32 || request.container.isLossy)
            summary.tailText = tailNote
            return summary
        } catch {
            unlink(partial)
            for p in stemPaths { unlink(p + ".partial") }
            throw error
        }
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

/// What an export renders past its range's end (`export --tail`).
public enum ExportTail: Equatable, Sendable {
    /// Nothing: the file ends with the range.
    case none
    /// This many frames more.
    case frames(Int64)
    /// Until every strip's output (the mix, and each stem) has stayed under
    /// ``ExportTail/silenceDecibels`` for ``ExportTail/holdSeconds`` (a delay's echoes may
    /// be further apart than a period), and at most ``ExportTail/maximumSeconds``; the
    /// file ends at the last frame above it.
    case auto

    /// Below this a strip is silent, dBFS.
    public static let silenceDecibels = -90.0
    /// How long every strip must stay silent before the tail ends, seconds.
    public static let holdSeconds = 2.0
    /// The longest an automatic tail renders, seconds.
    public static let maximumSeconds = 60.0
}

/// Two preallocated channel buffers.
final class StereoBuffer {
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    /// Frames each channel holds.
    let capacity: Int

    init(frameCount: Int) {
        capacity = frameCount
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
