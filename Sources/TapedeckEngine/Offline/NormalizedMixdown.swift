import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// A mixdown brought to a loudness target: the whole export is rendered once to 32-bit
/// float scratch files (so nothing clips or is rounded before the gain), its integrated
/// loudness is measured over all of it (libebur128, BS.1770), and one gain is applied as the
/// final file (and every stem) is written in the asked format. Where that gain would take
/// the true peak, measured at 32× oversampling, over the ceiling, a look-ahead true-peak
/// limiter turns those moments down (and the stems with them, by the same curve); the file
/// is measured as written and the pass is repeated, gain or limiter adjusted, until it reads
/// the target and its 32× peak is under the ceiling.
public struct NormalizedMixdown {
    /// The target and the ceiling.
    public struct Target: Sendable {
        /// Integrated loudness to reach, LUFS.
        public var integratedLUFS: Double
        /// Highest true peak allowed (at 32× oversampling), dBTP.
        public var truePeakCeilingDecibels: Double
        /// Write the mix (and stems) as one channel, the two summed at half each.
        public var mono: Bool

        /// Creates a target.
        public init(integratedLUFS: Double, truePeakCeilingDecibels: Double, mono: Bool = false) {
            self.integratedLUFS = integratedLUFS
            self.truePeakCeilingDecibels = truePeakCeilingDecibels
            self.mono = mono
        }
    }

    /// What the normalisation did.
    public struct Result: Sendable {
        /// The mixdown's own summary (peak after the gain).
        public var summary: Mixdown.Summary
        /// The mix as rendered, before the gain.
        public var measured: LoudnessReport
        /// The gain applied, dB (before the limiter).
        public var gainDecibels: Double
        /// The mix as written (measured while writing it, after the gain and the limiter).
        public var result: LoudnessReport
        /// The written mix's true peak at 32× oversampling, dBTP.
        public var truePeak32Decibels: Double
        /// True when the limiter turned anything down.
        public var limitedByTruePeak: Bool
        /// The limiter's deepest cut, dB.
        public var limiterCutDecibels: Double
        /// How long the limiter cut more than 0.1 dB, seconds.
        public var limiterSeconds: Double
        /// True when the passes ran out before both the target and the ceiling were met.
        public var missed: Bool
    }

    /// The limiter aims this far under the ceiling: the 32× points between its gain steps,
    /// the rounding of integer output, and meters whose interpolation filters pass more of
    /// the band next to Nyquist (sox's `rate -v` read a gated 12 kHz tone 0.1 dB higher
    /// than ours) all stay under the ceiling itself.
    static let ceilingMarginDecibels = 0.2
    /// Loudness within this of the target needs no further pass.
    static let loudnessToleranceLU = 0.03
    /// Passes at most (each writes the file): the limiter costs loudness, so the gain rises.
    static let maximumPasses = 6

    private let request: Mixdown.Request
    private let target: Target

    /// Prepares the export of `request` at `target`.
    public init(_ request: Mixdown.Request, target: Target) {
        self.request = request
        self.target = target
    }

    /// Renders, measures, and writes the gained files; a failure leaves neither scratch nor
    /// partial files. `progress` gets the fraction done.
    public func run(progress: (Double) -> Void = { _ in }) throws -> Result {
        let output = request.outputPath
        let scratch = (output as NSString).deletingLastPathComponent.isEmpty ? "." : (output as NSString).deletingLastPathComponent
        let scratchPrefix = "." + (output as NSString).lastPathComponent + ".normalize-"
        // A killed run's scratch folder (5.9 MB a minute of mix) goes now that its process has.
        Leftovers.removeDead(in: scratch, prefix: scratchPrefix)
        let scratchFolder = scratch + "/" + scratchPrefix + "\(getpid())"
        try makeFolder(scratchFolder)
        defer { try? FileManager.default.removeItem(atPath: scratchFolder) }
        var render = request
        render.outputPath = scratchFolder + "/mix.wav"
        render.container = .wav
        render.encoding = .float32
        render.stemsFolder = request.stemsFolder.map { _ in scratchFolder + "/stems" }
        if let stems = render.stemsFolder { try makeFolder(stems) }
        let rendered = try Mixdown(render).run { progress($0 * 0.8) }

        let measured = try NormalizedMixdown.measure(render.outputPath)
        guard measured.integratedLUFS.isFinite else {
            throw AudioFileError(path: output, reason: "cannot normalise: the mix is silent (below the −70 LUFS gate)")
        }
        var gain = target.integratedLUFS - measured.integratedLUFS
        // A mono file is measured as one channel: the sum at half each reads 3 LU or more
        // under the stereo mix, and the first pass's gain allows for it.
        if target.mono { gain += 3 }
        var threshold = target.truePeakCeilingDecibels - NormalizedMixdown.ceilingMarginDecibels
        let curvePath = rendered.stemPaths.isEmpty ? nil : scratchFolder + "/limiter.wav"
        let files = [(render.outputPath, output)] + rendered.stemPaths.map { stem in
            // The scratch stems are WAV; the final ones take the asked container's extension.
            let name = ((stem as NSString).lastPathComponent as NSString).deletingPathExtension
            return (stem, request.stemsFolder! + "/" + name + "." + request.container.rawValue)
        }
        var written: [String] = []
        do {
            var pass: LimitedCopy.Outcome
            var passes = 0
            var missed = false
            written.append(output + ".partial")
            while true {
                passes += 1
                pass = try LimitedCopy.run(from: render.outputPath, to: output + ".partial", container: request.container,
                                           encoding: request.encoding, gain: Float(Decibels.toLinear(gain)),
                                           threshold: Float(Decibels.toLinear(threshold)), mono: target.mono, curvePath: curvePath,
                                           cues: request.fileCues)
                progress(min(0.95, 0.8 + 0.05 * Double(passes)))
                let over = pass.truePeak32Decibels - target.truePeakCeilingDecibels
                let short = target.integratedLUFS - pass.loudness.integratedLUFS
                if over <= 0 && abs(short) <= NormalizedMixdown.loudnessToleranceLU { break }
                guard passes < NormalizedMixdown.maximumPasses, short.isFinite else { missed = true; break }
                // Over the ceiling: the limiter aims lower by as much (and a little more).
                if over > 0 { threshold -= over + 0.01 }
                // Off the target: what the pass missed by is the next pass's correction.
                if abs(short) > NormalizedMixdown.loudnessToleranceLU { gain += short }
            }
            TestHooks.killIfAsked(at: "normalize-partial")
            let limited = pass.deepestCutDecibels > 0
            for (i, (from, to)) in files.enumerated().dropFirst() {
                try LimitedCopy.stem(from: from, to: to + ".partial", container: request.container, encoding: request.encoding,
                                     gain: Float(Decibels.toLinear(gain)), mono: target.mono, curvePath: limited ? curvePath : nil,
                                     cues: request.fileCues)
                written.append(to + ".partial")
                progress(0.95 + 0.05 * Double(i) / Double(files.count))
            }
            for (_, to) in files { try Mixdown.moveIntoPlace(to + ".partial", to) }
            var summary = rendered
            summary.peakDecibels = pass.loudness.samplePeakDecibels
            summary.stemPaths = files.dropFirst().map(\.1)
            return Result(summary: summary, measured: measured, gainDecibels: gain, result: pass.loudness,
                          truePeak32Decibels: pass.truePeak32Decibels, limitedByTruePeak: limited,
                          limiterCutDecibels: pass.deepestCutDecibels,
                          limiterSeconds: Double(pass.limitedFrames) / Double(request.session.sampleRate), missed: missed)
        } catch {
            for path in written { unlink(path) }
            throw error
        }
    }

    /// The loudness of a whole file.
    public static func measure(_ path: String) throws -> LoudnessReport {
        let reader = try AudioFileReader(path: path)
        let analysis = try LoudnessAnalysis(channelCount: reader.channelCount, sampleRate: reader.sampleRate)
        try reader.forEachBlock { analysis.add($0, frameCount: $1) }
        return analysis.finish()
    }

    private func makeFolder(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw AudioFileError(path: path, reason: "cannot create a scratch folder: \(String(cString: strerror(errno)))")
        }
    }
}
