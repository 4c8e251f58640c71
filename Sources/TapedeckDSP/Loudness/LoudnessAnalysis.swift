import CEbur128
import TapedeckCore

/// What EBU R128 says about a whole signal, measured offline.
public struct LoudnessReport: Sendable, Equatable {
    /// Gated integrated loudness, LUFS (−∞ for silence).
    public var integratedLUFS: Double
    /// Loudness range, LU.
    public var rangeLU: Double
    /// Highest true peak over all channels, dBTP.
    public var truePeakDecibels: Double
    /// Highest sample peak over all channels, dBFS.
    public var samplePeakDecibels: Double
    /// Momentary loudness every 100 ms from the start (−∞ where silent), for plots.
    public var momentaryLUFS: [Double]
    /// The highest short-term (3 s) loudness, read every 100 ms, LUFS (−∞ when silent).
    public var maxShortTermLUFS: Double = -.infinity

    /// The highest momentary (400 ms) loudness, LUFS (−∞ when silent).
    public var maxMomentaryLUFS: Double { momentaryLUFS.max() ?? -.infinity }

    /// Creates a report.
    public init(integratedLUFS: Double, rangeLU: Double, truePeakDecibels: Double, samplePeakDecibels: Double,
                momentaryLUFS: [Double] = []) {
        self.integratedLUFS = integratedLUFS
        self.rangeLU = rangeLU
        self.truePeakDecibels = truePeakDecibels
        self.samplePeakDecibels = samplePeakDecibels
        self.momentaryLUFS = momentaryLUFS
    }
}

/// Measures a whole signal block by block (``add(_:frameCount:)``), then ``finish()``.
/// Uses libebur128's exact gating (a list of every 400 ms block), so it allocates as it
/// goes: never on the audio thread — ``LoudnessMeter`` is the live one.
public final class LoudnessAnalysis {
    private let meter: EBUR128State
    private let framesPerStep: Int
    private var framesSinceStep = 0
    private var momentary: [Double] = []
    private var maxShortTerm = -Double.infinity

    /// A measurement of `channelCount` channels at `sampleRate`. Without `truePeak`,
    /// libebur128's 4× true peak is not measured (its report says −∞): a normalised export
    /// measures its own at 32×, and the 4× one was a third of each pass.
    public init(channelCount: Int, sampleRate: Int, truePeak: Bool = true) throws(LoudnessError) {
        let mode = Int32(EBUR128_MODE_M.rawValue | EBUR128_MODE_S.rawValue | EBUR128_MODE_I.rawValue
                         | EBUR128_MODE_LRA.rawValue | (truePeak ? EBUR128_MODE_TRUE_PEAK.rawValue : 0) | EBUR128_MODE_SAMPLE_PEAK.rawValue)
        meter = try EBUR128State(channelCount: channelCount, sampleRate: sampleRate, mode: mode, chunkFrames: 4096)
        framesPerStep = max(1, sampleRate / 10)
    }

    /// Feeds the next `frameCount` frames of planar audio.
    public func add(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        var done = 0
        // Fed up to each 100 ms boundary, so the momentary series is sampled on the grid.
        while done < frameCount {
            let n = min(frameCount - done, framesPerStep - framesSinceStep)
            withOffset(channels, by: done) { meter.add($0, frameCount: n) }
            done += n
            framesSinceStep += n
            if framesSinceStep == framesPerStep {
                framesSinceStep = 0
                momentary.append(meter.momentary())
                maxShortTerm = max(maxShortTerm, meter.shortTerm())
            }
        }
    }

    /// Feeds the next `frameCount` frames of `channels`.
    public func add(_ channels: [UnsafeMutablePointer<Float>], frameCount: Int) {
        channels.withUnsafeBufferPointer { add($0.baseAddress!, frameCount: frameCount) }
    }

    /// The measurement of everything fed.
    public func finish() -> LoudnessReport {
        var report = LoudnessReport(integratedLUFS: meter.integrated(), rangeLU: max(0, meter.range()),
                                    truePeakDecibels: meter.truePeakDecibels(), samplePeakDecibels: meter.samplePeakDecibels(),
                                    momentaryLUFS: momentary)
        report.maxShortTermLUFS = maxShortTerm
        return report
    }

    private func withOffset(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, by offset: Int,
                            _ body: (UnsafePointer<UnsafeMutablePointer<Float>>) -> Void) {
        guard offset > 0 else { return body(channels) }
        let shifted = (0..<meter.channelCount).map { channels[$0] + offset }
        shifted.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
