import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// The passes of a normalised export after the render: the float scratch mix read once at
/// unit gain to measure it (``measure(from:peaksPath:mono:ceiling:)``: its loudness, and its
/// 32× oversampled peaks kept in a scratch file), then, for any gain, the mix times the gain
/// through the true-peak limiter, whose gains follow from those peaks alone (a limiter at
/// threshold T on the signal × G is one at T / G on the signal): ``loudness(…)`` measures a
/// candidate gain without oversampling anything, and ``run(…)`` writes the file in the
/// asked format, measuring it as it is written (loudness by libebur128, the true peak at
/// 32× by ``OversampledPeak``). The limiter's gain curve can be kept in a file so the stems
/// get the same curve and still add up to the mix.
struct LimitedCopy {
    /// What a pass wrote.
    struct Outcome {
        /// The written signal's loudness (its `truePeakDecibels` is libebur128's 4× one).
        var loudness: LoudnessReport
        /// The written signal's true peak at 32× oversampling, dBTP.
        var truePeak32Decibels: Double
        /// The limiter's deepest cut, dB (0 when it never acted).
        var deepestCutDecibels: Double
        /// Frames the limiter turned down.
        var limitedFrames: Int
        /// The written file's largest sample and the samples beyond full scale (see ``AudioFileWriter``).
        var peakAmplitude: Float
        /// See ``peakAmplitude``.
        var overCount: Int64
    }

    /// The mix's loudness as it will be written (summed to one channel when `mono`), at unit gain.
    static func measureLoudness(from: String, mono: Bool) throws -> LoudnessReport {
        let reader = try AudioFileReader(path: from)
        let channels = mono ? 1 : reader.channelCount
        let analysis = try LoudnessAnalysis(channelCount: channels, sampleRate: reader.sampleRate, truePeak: false)
        let block = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { block.forEach { $0.deallocate() } }
        try reader.forEachBlock { buffers, n in
            fill(block, from: buffers, frameCount: n, gain: 1, mono: mono)
            analysis.add(block, frameCount: n)
        }
        return analysis.finish()
    }

    /// The mix's 32× oversampled peaks at unit gain, frame by frame, into `peaksPath` (exact
    /// wherever they reach `floor`, linear; sample peaks below it); returns the highest.
    static func measurePeaks(from: String, peaksPath: String, mono: Bool, floor: Float) throws -> Float {
        let reader = try AudioFileReader(path: from)
        let channels = mono ? 1 : reader.channelCount
        let peaks = OversampledPeak(channelCount: channels, threshold: floor)
        let file = try RawFloats(writing: peaksPath)
        let block = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { block.forEach { $0.deallocate() } }
        try reader.forEachBlock { buffers, n in
            fill(block, from: buffers, frameCount: n, gain: 1, mono: mono)
            try peaks.add(block.map { UnsafePointer($0) }, frameCount: n) { try file.write($0) }
        }
        try peaks.finish { try file.write($0) }
        try file.close()
        return peaks.maximum
    }

    /// The mix (or its mono sum) times `gain` into `block`.
    private static func fill(_ block: [UnsafeMutablePointer<Float>], from buffers: [UnsafeMutablePointer<Float>], frameCount n: Int,
                             gain: Float, mono: Bool) {
        if mono {
            let scale = gain / Float(buffers.count)
            for i in 0..<n {
                var sum: Float = 0
                for b in buffers { sum += b[i] }
                block[0][i] = sum * scale
            }
        } else {
            for c in 0..<block.count { for i in 0..<n { block[c][i] = buffers[c][i] * gain } }
        }
    }

    /// Streams `from` × `gain` through the limiter (threshold `threshold`, linear, on the
    /// gained signal; its peaks read from `peaksPath`): `emit` gets each run of finished
    /// frames and their limiter gains, in order. Returns the limiter, for what it did.
    private static func stream(from: String, peaksPath: String, gain: Float, threshold: Float, mono: Bool,
                               emit: ([UnsafePointer<Float>], [Float]) throws -> Void) throws -> TruePeakLimiter {
        let reader = try AudioFileReader(path: from)
        let channels = mono ? 1 : reader.channelCount
        let peaks = try RawFloats(reading: peaksPath)
        let limiter = TruePeakLimiter(threshold: threshold / gain, sampleRate: reader.sampleRate)
        // The gained frames waiting for their limiter gain (it lags by the look-ahead).
        var pending = [[Float]](repeating: [], count: channels)
        let out = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 8192) }
        defer { out.forEach { $0.deallocate() } }
        func output(_ gains: [Float]) throws {
            var done = 0
            while done < gains.count {
                let n = min(8192, gains.count - done)
                for c in 0..<channels {
                    pending[c].withUnsafeBufferPointer { p in for i in 0..<n { out[c][i] = p[done + i] * gains[done + i] } }
                }
                try emit(out.map { UnsafePointer($0) }, Array(gains[done..<(done + n)]))
                done += n
            }
            for c in 0..<channels { pending[c].removeFirst(gains.count) }
        }
        let block = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { block.forEach { $0.deallocate() } }
        try reader.forEachBlock { buffers, n in
            fill(block, from: buffers, frameCount: n, gain: gain, mono: mono)
            for c in 0..<channels { pending[c].append(contentsOf: UnsafeBufferPointer(start: block[c], count: n)) }
            try limiter.add(try peaks.read(n), emit: output)
        }
        try limiter.finish(emit: output)
        return limiter
    }

    /// The integrated loudness of `from` × `gain` through the limiter, as ``run(…)`` would
    /// write it (before any rounding of an integer or lossy file).
    static func loudness(from: String, peaksPath: String, gain: Float, threshold: Float, mono: Bool) throws -> Double {
        let reader = try AudioFileReader(path: from)
        let analysis = try LoudnessAnalysis(channelCount: mono ? 1 : reader.channelCount, sampleRate: reader.sampleRate, truePeak: false)
        _ = try stream(from: from, peaksPath: peaksPath, gain: gain, threshold: threshold, mono: mono) { frames, gains in
            analysis.add(frames.map { UnsafeMutablePointer(mutating: $0) }, frameCount: gains.count)
        }
        return analysis.finish().integratedLUFS
    }

    /// Writes `from` × `gain` (summed to one channel when `mono`), limited so no 32×
    /// point passes `threshold` (linear), to `to`; the limiter's gain goes to `curvePath`
    /// (a mono float WAV) when given.
    /// The scratch render's metadata (the mix's or its stem's, see ExportMetadata) and `cues`
    /// (the markers in the range) go onto `to`, and, in a WAV, the loudness measured.
    static func run(from: String, peaksPath: String, to: String, container: AudioContainer, encoding: SampleEncoding, gain: Float,
                    threshold: Float, mono: Bool, curvePath: String?, cues: [CuePoint] = [], encoder: EncoderSetting? = nil,
                    tags: FileTags = FileTags()) throws -> Outcome {
        let reader = try AudioFileReader(path: from)
        let channels = mono ? 1 : reader.channelCount
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: reader.sampleRate, channelCount: channels,
                                     encoder: encoder)
        // `to` is our `.partial` name: a killed run's leftover there is replaced, as Mixdown does.
        let writer = try AudioFileWriter(path: to, format: format, blockFrames: 8192, expectedFrameCount: reader.frameCount,
                                         metadata: reader.metadata, cues: cues, tags: tags, creation: .replacingLeftover)
        let curve = try curvePath.map {
            try AudioFileWriter(path: $0, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: reader.sampleRate,
                                                                  channelCount: 1), creation: .replacingLeftover)
        }
        let analysis = try LoudnessAnalysis(channelCount: channels, sampleRate: reader.sampleRate, truePeak: false)
        let written = OversampledPeak(channelCount: channels)
        let limiter = try stream(from: from, peaksPath: peaksPath, gain: gain, threshold: threshold, mono: mono) { frames, gains in
            let n = gains.count
            analysis.add(frames.map { UnsafeMutablePointer(mutating: $0) }, frameCount: n)
            // Only points that could raise the maximum need interpolating.
            written.threshold = written.maximum
            written.add(frames, frameCount: n) { _ in }
            try writer.write(frames, frameCount: n)
            if let curve { try gains.withUnsafeBufferPointer { try curve.write([$0.baseAddress!], frameCount: n) } }
        }
        written.finish { _ in }
        let loudness = analysis.finish()
        let truePeak = Decibels.fromLinear(Double(written.maximum))
        writer.setLoudness(BextLoudness(integratedLUFS: loudness.integratedLUFS, rangeLU: loudness.rangeLU, maxTruePeakDecibels: truePeak,
                                        maxMomentaryLUFS: loudness.maxMomentaryLUFS, maxShortTermLUFS: loudness.maxShortTermLUFS))
        try writer.close()
        try curve?.close()
        return Outcome(loudness: loudness, truePeak32Decibels: truePeak, deepestCutDecibels: -Decibels.fromLinear(Double(limiter.lowestGain)),
                       limitedFrames: limiter.limitedFrames, peakAmplitude: writer.peakAmplitude, overCount: writer.overCount)
    }

    /// Writes a stem: `from` × `gain` × the mix's limiter curve (read from `curvePath`, if the
    /// limiter acted), summed to one channel when `mono`.
    static func stem(from: String, to: String, container: AudioContainer, encoding: SampleEncoding, gain: Float,
                     mono: Bool, curvePath: String?, cues: [CuePoint] = [], encoder: EncoderSetting? = nil,
                     tags: FileTags = FileTags()) throws {
        let reader = try AudioFileReader(path: from)
        let curve = try curvePath.map { try AudioFileReader(path: $0) }
        let channels = mono ? 1 : reader.channelCount
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: reader.sampleRate, channelCount: channels,
                                     encoder: encoder)
        let writer = try AudioFileWriter(path: to, format: format, blockFrames: 4096, expectedFrameCount: reader.frameCount,
                                         metadata: reader.metadata, cues: cues, tags: tags, creation: .replacingLeftover)
        let gains = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { gains.deallocate() }
        let out = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { out.forEach { $0.deallocate() } }
        try reader.forEachBlock { buffers, n in
            for i in 0..<n { gains[i] = gain }
            if let curve {
                let got = try curve.read(into: [gains], frameCount: n)
                for i in 0..<got { gains[i] *= gain }
                for i in got..<n { gains[i] = gain }
            }
            if mono {
                for i in 0..<n { out[0][i] = buffers.reduce(0) { $0 + $1[i] } / Float(buffers.count) * gains[i] }
            } else {
                for c in 0..<channels { for i in 0..<n { out[c][i] = buffers[c][i] * gains[i] } }
            }
            try writer.write(out.map { UnsafePointer($0) }, frameCount: n)
        }
        try writer.close()
    }
}

/// A scratch file of raw floats (the mix's 32× peaks), written and read in order.
final class RawFloats {
    private let file: UnsafeMutablePointer<FILE>
    private let path: String

    /// Creates `path` for writing.
    init(writing path: String) throws {
        unlink(path)
        guard let f = fopen(path, "wb") else { throw AudioFileError(path: path, reason: "cannot create a scratch file: \(String(cString: strerror(errno)))") }
        file = f
        self.path = path
    }

    /// Opens `path` for reading.
    init(reading path: String) throws {
        guard let f = fopen(path, "rb") else { throw AudioFileError(path: path, reason: "cannot read a scratch file: \(String(cString: strerror(errno)))") }
        file = f
        self.path = path
    }

    deinit { fclose(file) }

    func write(_ values: [Float]) throws {
        let n = values.withUnsafeBufferPointer { fwrite($0.baseAddress, 4, $0.count, file) }
        if n != values.count { throw AudioFileError(path: path, reason: "cannot write a scratch file: \(DurableFile.writeProblem(errno))") }
    }

    /// The next `count` values (zeros past the end).
    func read(_ count: Int) throws -> [Float] {
        var out = [Float](repeating: 0, count: count)
        _ = out.withUnsafeMutableBufferPointer { fread($0.baseAddress, 4, count, file) }
        return out
    }

    func close() throws {
        if fflush(file) != 0 { throw AudioFileError(path: path, reason: "cannot write a scratch file: \(DurableFile.writeProblem(errno))") }
    }
}
