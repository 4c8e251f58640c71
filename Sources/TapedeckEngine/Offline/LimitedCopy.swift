import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// One pass of a normalised export: the float scratch mix times the gain, through the
/// true-peak limiter, written in the asked format, and measured as it is written (loudness
/// by libebur128, the true peak at 32× by ``OversampledPeak``). The limiter's gain curve can
/// be kept in a file so the stems get the same curve and still add up to the mix.
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
    }

    /// Writes `from` × `gain` (summed to one channel when `mono`), limited so no 32×
    /// point passes `threshold` (linear), to `to`; the limiter's gain goes to `curvePath`
    /// (a mono float WAV) when given.
    /// The scratch render's metadata (the mix's or its stem's, see ExportMetadata) and `cues`
    /// (the markers in the range) go onto `to`.
    static func run(from: String, to: String, container: AudioContainer, encoding: SampleEncoding, gain: Float,
                    threshold: Float, mono: Bool, curvePath: String?, cues: [CuePoint] = []) throws -> Outcome {
        let reader = try AudioFileReader(path: from)
        let channels = mono ? 1 : reader.channelCount
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: reader.sampleRate, channelCount: channels)
        // `to` is our `.partial` name: a killed run's leftover there is replaced, as Mixdown does.
        let writer = try AudioFileWriter(path: to, format: format, blockFrames: 4096, expectedFrameCount: reader.frameCount,
                                         metadata: reader.metadata, cues: cues, creation: .replacingLeftover)
        let curve = try curvePath.map {
            try AudioFileWriter(path: $0, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: reader.sampleRate,
                                                                  channelCount: 1), creation: .replacingLeftover)
        }
        let analysis = try LoudnessAnalysis(channelCount: channels, sampleRate: reader.sampleRate)
        let lookingAhead = OversampledPeak(channelCount: channels, threshold: threshold)
        let limiter = TruePeakLimiter(threshold: threshold, sampleRate: reader.sampleRate)
        let written = OversampledPeak(channelCount: channels)
        // The gained frames waiting for their limiter gain (it lags by the look-ahead and the taps).
        var pending = [[Float]](repeating: [], count: channels)

        func output(_ gains: [Float]) throws {
            let n = gains.count
            guard n > 0 else { return }
            let out = (0..<channels).map { c -> UnsafeMutablePointer<Float> in
                let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
                for i in 0..<n { p[i] = pending[c][i] * gains[i] }
                return p
            }
            defer { out.forEach { $0.deallocate() } }
            for c in 0..<channels { pending[c].removeFirst(n) }
            analysis.add(out, frameCount: n)
            let readOnly = out.map { UnsafePointer($0) }
            // Only points that could raise the maximum need interpolating.
            written.threshold = written.maximum
            written.add(readOnly, frameCount: n) { _ in }
            try writer.write(readOnly, frameCount: n)
            if let curve { try gains.withUnsafeBufferPointer { try curve.write([$0.baseAddress!], frameCount: n) } }
        }

        let block = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { block.forEach { $0.deallocate() } }
        let blockIn = block.map { UnsafePointer($0) }
        try reader.forEachBlock { buffers, n in
            if mono {
                let scale = gain / Float(buffers.count)
                for i in 0..<n { block[0][i] = buffers.reduce(0) { $0 + $1[i] } * scale }
            } else {
                for c in 0..<channels { for i in 0..<n { block[c][i] = buffers[c][i] * gain } }
            }
            for c in 0..<channels { pending[c].append(contentsOf: UnsafeBufferPointer(start: block[c], count: n)) }
            try lookingAhead.add(blockIn, frameCount: n) { peaks in try limiter.add(peaks, emit: output) }
        }
        try lookingAhead.finish { peaks in try limiter.add(peaks, emit: output) }
        try limiter.finish(emit: output)
        written.finish { _ in }
        try writer.close()
        try curve?.close()
        return Outcome(loudness: analysis.finish(), truePeak32Decibels: Decibels.fromLinear(Double(written.maximum)),
                       deepestCutDecibels: -Decibels.fromLinear(Double(limiter.lowestGain)), limitedFrames: limiter.limitedFrames)
    }

    /// Writes a stem: `from` × `gain` × the mix's limiter curve (read from `curvePath`, if the
    /// limiter acted), summed to one channel when `mono`.
    static func stem(from: String, to: String, container: AudioContainer, encoding: SampleEncoding, gain: Float,
                     mono: Bool, curvePath: String?, cues: [CuePoint] = []) throws {
        let reader = try AudioFileReader(path: from)
        let curve = try curvePath.map { try AudioFileReader(path: $0) }
        let channels = mono ? 1 : reader.channelCount
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: reader.sampleRate, channelCount: channels)
        let writer = try AudioFileWriter(path: to, format: format, blockFrames: 4096, expectedFrameCount: reader.frameCount,
                                         metadata: reader.metadata, cues: cues, creation: .replacingLeftover)
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
