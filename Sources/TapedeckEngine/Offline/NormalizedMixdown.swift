import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// A mixdown brought to a loudness target in two renders: the whole export is rendered
/// once to 32-bit float scratch files (so nothing clips or is rounded before the gain) and
/// measured once at unit gain (its integrated loudness by libebur128, BS.1770, and its true
/// peaks at 32× oversampling, kept); then one gain is applied as the final file (and every
/// stem) is written in the asked format, through a look-ahead true-peak limiter where that
/// gain would take the true peak over the ceiling, and what was written is measured again.
///
/// The limiter costs loudness where it acts, so the gain is found before writing: its gains
/// follow from the kept peaks alone, so a candidate gain is measured by reading the scratch
/// mix through gain and limiter into libebur128, with nothing oversampled again, and a
/// secant search (a few such reads) finds the gain that reads the target. The search is
/// bounded (``maximumExtraGainDecibels``, ``maximumSearches``): a target the ceiling cannot
/// hold is written as near as it came and said "not met", never looped on.
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
    /// Loudness within this of the target needs no further search.
    static let loudnessToleranceLU = 0.02
    /// Gain searched at most (each reads the scratch mix once, nothing oversampled).
    static let maximumSearches = 8
    /// The most the gain may rise past the plain difference to make up for the limiter.
    static let maximumExtraGainDecibels = 12.0

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
        // Render one.
        let rendered = try Mixdown(render).run { progress($0 * 0.6) }

        // Measured once, at unit gain, as it will be written (a mono file as its sum).
        let ceiling = target.truePeakCeilingDecibels - NormalizedMixdown.ceilingMarginDecibels
        let threshold = Float(Decibels.toLinear(ceiling))
        let peaksPath = scratchFolder + "/peaks.f32"
        let measured = try LimitedCopy.measureLoudness(from: render.outputPath, mono: target.mono)
        guard measured.integratedLUFS.isFinite else {
            throw AudioFileError(path: output, reason: "cannot normalise: the mix is silent (below the −70 LUFS gate)")
        }
        let plainGain = target.integratedLUFS - measured.integratedLUFS
        // The peaks are exact wherever the highest gain the search may try would limit; below
        // that the cheap sample peaks stand (at −16 LUFS speech, nearly everywhere).
        let floor = threshold / Float(Decibels.toLinear(plainGain + NormalizedMixdown.maximumExtraGainDecibels))
        let unitPeak = try LimitedCopy.measurePeaks(from: render.outputPath, peaksPath: peaksPath, mono: target.mono, floor: floor)
        progress(0.7)
        let gain = try searchGain(plainGain: plainGain, unitPeak: unitPeak, threshold: threshold, scratch: render.outputPath,
                                  peaksPath: peaksPath)
        progress(0.8)

        let curvePath = rendered.stemPaths.isEmpty ? nil : scratchFolder + "/limiter.wav"
        let files = [(render.outputPath, output)] + rendered.stemPaths.map { stem in
            // The scratch stems are WAV; the final ones take the asked container's extension.
            let name = ((stem as NSString).lastPathComponent as NSString).deletingPathExtension
            return (stem, request.stemsFolder! + "/" + name + "." + request.container.rawValue)
        }
        var written: [String] = []
        do {
            written.append(output + ".partial")
            // Render two: the file, measured as it is written.
            let pass = try LimitedCopy.run(from: render.outputPath, peaksPath: peaksPath, to: output + ".partial", container: request.container,
                                           encoding: request.encoding, gain: Float(Decibels.toLinear(gain)), threshold: threshold,
                                           mono: target.mono, curvePath: curvePath, cues: request.fileCues, encoder: request.encoder,
                                           tags: request.fileTags())
            progress(0.95)
            let over = pass.truePeak32Decibels - target.truePeakCeilingDecibels
            let short = target.integratedLUFS - pass.loudness.integratedLUFS
            // A lossy file reads a little off what went into its encoder: judged more loosely.
            let tolerance = request.container.isLossy ? 0.3 : 0.1
            let missed = over > 0 || !(abs(short) <= tolerance)
            TestHooks.killIfAsked(at: "normalize-partial")
            let limited = pass.deepestCutDecibels > 0
            for (i, (from, to)) in files.enumerated().dropFirst() {
                try LimitedCopy.stem(from: from, to: to + ".partial", container: request.container, encoding: request.encoding,
                                     gain: Float(Decibels.toLinear(gain)), mono: target.mono, curvePath: limited ? curvePath : nil,
                                     cues: request.fileCues, encoder: request.encoder,
                                     tags: request.fileTags(track: (try? TakeMetadata.read(path: from))??.trackNumber.map { $0 - 1 }))
                written.append(to + ".partial")
                progress(0.95 + 0.05 * Double(i) / Double(files.count))
            }
            for (_, to) in files { try Mixdown.moveIntoPlace(to + ".partial", to) }
            // The summary is the written file's: its peak and its samples over full scale.
            var summary = rendered
            summary.peakDecibels = Decibels.fromLinear(Double(pass.peakAmplitude))
            summary.overCount = pass.overCount
            summary.oversWereClipped = request.encoding != .float32 || request.container.isLossy
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

    /// The gain, dB, at which the mix through the limiter reads the target: the plain
    /// difference when the limiter would not act at it; else a secant search on measured
    /// candidates (loudness rises with the gain, by at most as much), within
    /// ``maximumExtraGainDecibels`` and ``maximumSearches``.
    private func searchGain(plainGain: Double, unitPeak: Float, threshold: Float, scratch: String, peaksPath: String) throws -> Double {
        // Under the ceiling at the plain gain: the limiter never acts, the loudness is exact.
        if Double(unitPeak) * Decibels.toLinear(plainGain) <= Double(threshold) { return plainGain }
        func loudness(_ g: Double) throws -> Double {
            try LimitedCopy.loudness(from: scratch, peaksPath: peaksPath, gain: Float(Decibels.toLinear(g)), threshold: threshold,
                                     mono: target.mono)
        }
        let highest = plainGain + NormalizedMixdown.maximumExtraGainDecibels
        var g = plainGain
        var l = try loudness(g)
        var previous: (g: Double, l: Double)?
        var best = (g: g, miss: abs(target.integratedLUFS - l))
        for _ in 1..<NormalizedMixdown.maximumSearches {
            let short = target.integratedLUFS - l
            if abs(short) <= NormalizedMixdown.loudnessToleranceLU || !l.isFinite { break }
            // The loudness's slope against the gain: 1 where nothing limits, less where it does.
            var slope = 1.0
            if let p = previous, p.g != g { slope = min(1, max(0.05, (l - p.l) / (g - p.g))) }
            let next = min(highest, max(plainGain - 1, g + short / slope))
            if next == g { break }
            previous = (g, l)
            g = next
            l = try loudness(g)
            if abs(target.integratedLUFS - l) < best.miss { best = (g, abs(target.integratedLUFS - l)) }
        }
        return best.g
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
