import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Offline time-pitch of a span of an audio file into a new 32-bit float WAV: pitch-preserving
/// stretch through Rubber Band's offline engine (R3 "finer" unless `quality` says otherwise),
/// or varispeed through libsamplerate's best sinc, plus an independent pitch shift.
/// Streams in blocks; never holds the file in memory.
public enum TimePitchRender {
    /// Frames per block.
    static let blockFrames = 8192

    /// What a render wrote.
    public struct Summary: Sendable, Equatable {
        /// Frames written (≈ the source frames ÷ speed).
        public var frameCount: Int64
        /// Largest absolute sample, linear, before an integer encoding clipped it.
        public var peakAmplitude: Float
        /// Samples beyond full scale (clipped in an integer file, kept in a float one).
        public var overCount: Int64
    }

    /// Renders `frameCount` frames of `sourcePath` from `startFrame` with `settings` into
    /// `destinationPath`. Returns what was written: frames (≈ frameCount ÷ speed), peak and overs.
    @discardableResult
    public static func render(sourcePath: String, startFrame: Int64 = 0, frameCount: Int64? = nil,
                              destinationPath: String, encoding: SampleEncoding = .float32,
                              container: AudioContainer = .wav, settings: TimePitchSettings, quality: StretchQuality,
                              progress: (Double) throws -> Void = { _ in }) throws -> Summary {
        let probe = try AudioFileReader(path: sourcePath)
        // A wide file's render keeps its channel positions, so it is heard with the same
        // downmix as the file (a region stretched into the cache plays like one at 1×).
        let output = OutputSpec(container: container, encoding: encoding, channelLayout: probe.channelLayout.positions)
        let count = frameCount ?? max(0, probe.frameCount - startFrame)
        let rate = probe.sampleRate, channels = probe.channelCount
        probe.close()
        switch settings.mode {
        case .stretch:
            return try stretch(sourcePath: sourcePath, startFrame: startFrame, frameCount: count, destinationPath: destinationPath,
                               output: output, timeRatio: 1 / settings.speed, pitchScale: settings.pitchScale, quality: quality,
                               sampleRate: rate, channelCount: channels, progress: progress)
        case .varispeed:
            if settings.pitchSemitones == 0 {
                return try varispeed(sourcePath: sourcePath, startFrame: startFrame, frameCount: count,
                                     destinationPath: destinationPath, output: output, speed: settings.speed,
                                     sampleRate: rate, channelCount: channels, progress: progress)
            }
            // Speed first (pitch follows), then the independent shift at constant length.
            let middle = destinationPath + ".varispeed.tmp"
            defer { unlink(middle) }
            let n = try varispeed(sourcePath: sourcePath, startFrame: startFrame, frameCount: count, destinationPath: middle,
                                  output: OutputSpec(container: .wav, encoding: .float32), speed: settings.speed, sampleRate: rate, channelCount: channels) { try progress($0 / 2) }.frameCount
            return try stretch(sourcePath: middle, startFrame: 0, frameCount: n, destinationPath: destinationPath,
                               output: output, timeRatio: 1, pitchScale: settings.pitchScale, quality: quality,
                               sampleRate: rate, channelCount: channels) { try progress(0.5 + $0 / 2) }
        }
    }

    private static func stretch(sourcePath: String, startFrame: Int64, frameCount: Int64, destinationPath: String,
                                output: OutputSpec, timeRatio: Double, pitchScale: Double, quality: StretchQuality,
                                sampleRate: Int, channelCount: Int, progress: (Double) throws -> Void) throws -> Summary {
        var writer: AudioFileWriter?
        try stretch(sourcePath: sourcePath, startFrame: startFrame, frameCount: frameCount, timeRatio: timeRatio, pitchScale: pitchScale,
                    quality: quality, sampleRate: sampleRate, channelCount: channelCount, progress: progress) {
            // Opened once the whole span is studied: a span that cannot be read leaves nothing.
            let w = try AudioFileWriter(path: destinationPath, format: AudioFileFormat(container: output.container, encoding: output.encoding,
                                        sampleRate: sampleRate, channelCount: channelCount), blockFrames: blockFrames,
                                        expectedFrameCount: Int64((Double(frameCount) * timeRatio).rounded(.up)) + Int64(blockFrames),
                                        channelLayout: output.channelLayout, creation: .replacingLeftover)
            writer = w
            return w
        }
        guard let writer else { return Summary(frameCount: 0, peakAmplitude: 0, overCount: 0) }
        try writer.close()
        return Summary(frameCount: writer.framesWritten, peakAmplitude: writer.peakAmplitude, overCount: writer.overCount)
    }

    /// Rubber Band's offline stretcher over a span of `sourcePath`: the whole span studied
    /// first, then processed into the writer `open` gives (asked for once the study is done;
    /// the caller closes it).
    static func stretch(sourcePath: String, startFrame: Int64, frameCount: Int64, timeRatio: Double, pitchScale: Double,
                        quality: StretchQuality, sampleRate: Int, channelCount: Int, progress: (Double) throws -> Void,
                        into open: () throws -> AudioFileWriter) throws {
        var writer: AudioFileWriter?
        try stretch(sourcePath: sourcePath, startFrame: startFrame, frameCount: frameCount, timeRatio: timeRatio, pitchScale: pitchScale,
                    quality: quality, sampleRate: sampleRate, channelCount: channelCount, progress: progress,
                    studied: { writer = try open() }, emit: { out, k in try writer?.write(out, frameCount: k) })
    }

    /// Rubber Band's offline stretcher over a span of `sourcePath`, its output handed to `emit`
    /// block by block; `studied` is called once the whole span is studied, before any output.
    static func stretch(sourcePath: String, startFrame: Int64, frameCount: Int64, timeRatio: Double, pitchScale: Double,
                        quality: StretchQuality, sampleRate: Int, channelCount: Int, progress: (Double) throws -> Void,
                        studied: () throws -> Void = {}, emit: ([UnsafePointer<Float>], Int) throws -> Void) throws {
        let stretcher = OfflineStretcher(sampleRate: sampleRate, channelCount: channelCount, timeRatio: timeRatio,
                                         pitchScale: pitchScale, expectedInputFrames: frameCount, quality: quality,
                                         blockFrames: blockFrames)
        let span = try SpanReader(path: sourcePath, startFrame: startFrame, frameCount: frameCount, blockFrames: blockFrames)
        while let n = try span.next() {
            stretcher.study(span.pointers, frameCount: n, isFinal: span.isFinished)
            try progress(0.3 * span.fractionDone)
        }
        try studied()
        try span.rewind()
        while let n = try span.next() {
            try stretcher.process(span.pointers, frameCount: n, isFinal: span.isFinished, emit: emit)
            try progress(0.3 + 0.7 * span.fractionDone)
        }
    }

    private static func varispeed(sourcePath: String, startFrame: Int64, frameCount: Int64, destinationPath: String,
                                  output: OutputSpec, speed: Double, sampleRate: Int, channelCount: Int, progress: (Double) throws -> Void) throws -> Summary {
        let span = try SpanReader(path: sourcePath, startFrame: startFrame, frameCount: frameCount, blockFrames: blockFrames)
        guard let converter = Varispeed(channelCount: channelCount, source: span, maxOutputFrames: blockFrames, realtime: false) else {
            throw AudioFileError(path: sourcePath, reason: "libsamplerate could not start a converter")
        }
        let expected = Int64((Double(frameCount) / speed).rounded())
        let writer = try AudioFileWriter(path: destinationPath, format: AudioFileFormat(container: output.container, encoding: output.encoding,
                                         sampleRate: sampleRate, channelCount: channelCount), blockFrames: blockFrames,
                                         expectedFrameCount: expected, channelLayout: output.channelLayout, creation: .replacingLeftover)
        let out = (0..<channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        defer { out.forEach { $0.deallocate() } }
        var written: Int64 = 0
        try out.withUnsafeBufferPointer { p in
            while written < expected {
                let want = Int(min(Int64(blockFrames), expected - written))
                let n = converter.render(into: p.baseAddress!, frameCount: want, speed: speed)
                if let error = span.error { throw error }
                if n == 0 { break }
                try writer.write(out.map { UnsafePointer($0) }, frameCount: n)
                written += Int64(n)
                try progress(Double(written) / Double(max(expected, 1)))
            }
        }
        try writer.close()
        return Summary(frameCount: written, peakAmplitude: writer.peakAmplitude, overCount: writer.overCount)
    }
}

/// Container and encoding of a rendered file, and its channels' positions when it keeps them.
struct OutputSpec {
    var container: AudioContainer
    var encoding: SampleEncoding
    var channelLayout: [ChannelPosition]? = nil
}

/// Reads a span of a file block by block, for two-pass processing and as a varispeed source.
final class SpanReader: TimePitchSource {
    private let reader: AudioFileReader
    private let startFrame: Int64
    private let frameCount: Int64
    private let blockFrames: Int
    private let buffers: [UnsafeMutablePointer<Float>]
    private var position: Int64 = 0
    /// The first read error met while serving as a varispeed source.
    private(set) var error: AudioFileError?

    init(path: String, startFrame: Int64, frameCount: Int64, blockFrames: Int) throws(AudioFileError) {
        reader = try AudioFileReader(path: path, blockFrames: blockFrames)
        self.startFrame = startFrame
        self.frameCount = frameCount
        self.blockFrames = blockFrames
        buffers = (0..<reader.channelCount).map { _ in .allocate(capacity: blockFrames) }
        try rewind()
    }

    deinit { buffers.forEach { $0.deallocate() } }

    /// The block last read, one pointer per channel.
    var pointers: [UnsafePointer<Float>] { buffers.map { UnsafePointer($0) } }
    /// Whether the span has been read to its end.
    var isFinished: Bool { position >= frameCount }
    /// How much of the span has been read.
    var fractionDone: Double { Double(position) / Double(max(frameCount, 1)) }

    func rewind() throws(AudioFileError) {
        position = 0
        if startFrame < reader.frameCount { try reader.seek(toFrame: startFrame) }
    }

    /// Reads the next block of at most `maxFrames` (default: a whole block); frames past the
    /// file's end are silence. Nil at the span's end.
    func next(maxFrames: Int = .max) throws(AudioFileError) -> Int? {
        guard position < frameCount else { return nil }
        let n = Int(min(Int64(min(blockFrames, maxFrames)), frameCount - position))
        var got = 0
        if startFrame + position < reader.frameCount {
            while got < n {
                let k = try reader.read(into: buffers.map { $0 + got }, frameCount: n - got)
                if k == 0 { break }
                got += k
            }
        }
        for b in buffers where got < n { (b + got).update(repeating: 0, count: n - got) }
        position += Int64(n)
        return n
    }

    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount wanted: Int) -> Int {
        do {
            guard let n = try next(maxFrames: wanted) else { return 0 }
            for ch in 0..<buffers.count { channels[ch].update(from: buffers[ch], count: n) }
            return n
        } catch {
            self.error = error
            return 0
        }
    }
}
