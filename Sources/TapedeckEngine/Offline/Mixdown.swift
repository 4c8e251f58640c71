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

        /// Creates a request.
        public init(session: Session, folder: SessionFolder, range: FrameRange, outputPath: String,
                    container: AudioContainer, encoding: SampleEncoding, stemsFolder: String? = nil) {
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
        /// Largest absolute sample of the mix, in dBFS.
        public var peakDecibels: Double
        /// Stem files written, if any.
        public var stemPaths: [String]
    }

    /// Frames rendered per block.
    public static let blockFrames = 4096

    private let request: Request

    /// Prepares a mixdown of `request`.
    public init(_ request: Request) {
        self.request = request
    }

    /// Renders the whole range. Opens every region file first, so a missing or corrupt file
    /// fails before anything is written. Output is written to a `.partial` file and renamed
    /// into place on success, so a failed export never leaves a plausible-looking file.
    /// `progress` is called with the fraction done.
    public func run(progress: (Double) -> Void = { _ in }) throws -> Summary {
        let session = request.session
        let tracks = try openTracks()
        let format = AudioFileFormat(container: request.container, encoding: request.encoding,
                                     sampleRate: session.sampleRate, channelCount: 2)
        if let problem = format.problem() { throw AudioFileError(path: request.outputPath, reason: problem) }

        let partial = request.outputPath + ".partial"
        let writer = try AudioFileWriter(path: partial, format: format, blockFrames: Mixdown.blockFrames)
        var stemWriters: [AudioFileWriter] = []
        var stemPaths: [String] = []
        if let stems = request.stemsFolder {
            for track in tracks {
                let path = stems + "/" + Mixdown.stemFileName(track.name, index: track.index, container: request.container)
                stemWriters.append(try AudioFileWriter(path: path + ".partial", format: format, blockFrames: Mixdown.blockFrames))
                stemPaths.append(path)
            }
        }

        let bus = StereoBuffer(frameCount: Mixdown.blockFrames)
        let stemBus = StereoBuffer(frameCount: Mixdown.blockFrames)
        var peak: Float = 0
        var position = request.range.startFrame
        let total = request.range.frameCount
        do {
            while position < request.range.endFrame {
                let n = Int(min(Int64(Mixdown.blockFrames), request.range.endFrame - position))
                bus.clear(frameCount: n)
                for (t, track) in tracks.enumerated() {
                    let target = stemWriters.isEmpty ? bus : stemBus
                    if !stemWriters.isEmpty { stemBus.clear(frameCount: n) }
                    for stream in track.streams {
                        try stream.mix(blockStart: position, frameCount: n, trackGain: track.gain, pan: track.pan,
                                       left: target.left, right: target.right)
                    }
                    if !stemWriters.isEmpty {
                        try stemWriters[t].write([UnsafePointer(stemBus.left), UnsafePointer(stemBus.right)], frameCount: n)
                        MixKernels.accumulate(stemBus.left, into: bus.left, frameCount: n, startGain: 1, endGain: 1)
                        MixKernels.accumulate(stemBus.right, into: bus.right, frameCount: n, startGain: 1, endGain: 1)
                    }
                }
                peak = max(peak, MixKernels.peak(bus.left, frameCount: n), MixKernels.peak(bus.right, frameCount: n))
                try writer.write([UnsafePointer(bus.left), UnsafePointer(bus.right)], frameCount: n)
                position += Int64(n)
                progress(Double(position - request.range.startFrame) / Double(max(total, 1)))
            }
            try writer.close()
            for w in stemWriters { try w.close() }
        } catch {
            unlink(partial)
            for p in stemPaths { unlink(p + ".partial") }
            throw error
        }
        try Mixdown.moveIntoPlace(partial, request.outputPath)
        for p in stemPaths { try Mixdown.moveIntoPlace(p + ".partial", p) }
        return Summary(frameCount: total, peakDecibels: Decibels.fromLinear(Double(peak)), stemPaths: stemPaths)
    }

    private struct OpenTrack {
        var index: Int
        var name: String
        var gain: Double
        var pan: Double
        var streams: [RegionStream]
    }

    private func openTracks() throws -> [OpenTrack] {
        let session = request.session
        var open: [OpenTrack] = []
        for (i, track) in session.tracks.enumerated() where session.isAudible(trackIndex: i) {
            var streams: [RegionStream] = []
            for region in track.regions where region.timelineEndFrame > request.range.startFrame
                && region.timelineStartFrame < request.range.endFrame {
                if region.rate != 1 {
                    throw AudioFileError(path: region.file, reason: "region rate \(region.rate) needs time-pitch playback, which this build does not have yet")
                }
                let path = request.folder.absolutePath(of: region.file)
                streams.append(try RegionStream(region: region, path: path, blockFrames: Mixdown.blockFrames))
            }
            open.append(OpenTrack(index: i, name: track.name, gain: Decibels.toLinear(track.gainDecibels),
                                  pan: track.pan, streams: streams))
        }
        return open
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
