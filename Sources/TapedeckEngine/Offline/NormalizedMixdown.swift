import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// A mixdown brought to a loudness target: the whole export is rendered once to 32-bit
/// float scratch files (so nothing clips or is rounded before the gain), its integrated
/// loudness and true peak are measured over all of it (libebur128, BS.1770), and one gain is
/// applied as the final file (and every stem) is written in the asked format.
public struct NormalizedMixdown {
    /// The target and the ceiling.
    public struct Target: Sendable {
        /// Integrated loudness to reach, LUFS.
        public var integratedLUFS: Double
        /// Highest true peak allowed, dBTP; the gain is lowered to stay under it.
        public var truePeakCeilingDecibels: Double

        /// Creates a target.
        public init(integratedLUFS: Double, truePeakCeilingDecibels: Double) {
            self.integratedLUFS = integratedLUFS
            self.truePeakCeilingDecibels = truePeakCeilingDecibels
        }
    }

    /// What the normalisation did.
    public struct Result: Sendable {
        /// The mixdown's own summary (peak after the gain).
        public var summary: Mixdown.Summary
        /// The mix as rendered, before the gain.
        public var measured: LoudnessReport
        /// The gain applied, dB.
        public var gainDecibels: Double
        /// The mix as written (measured while writing it, after the gain).
        public var result: LoudnessReport
        /// True when the ceiling, not the target, set the gain.
        public var limitedByTruePeak: Bool
    }

    /// The true peak is kept this far under the ceiling, for the rounding of integer output.
    static let ceilingMarginDecibels = 0.02

    private let request: Mixdown.Request
    private let target: Target

    /// Prepares the export of `request` at `target`.
    public init(_ request: Mixdown.Request, target: Target) {
        self.request = request
        self.target = target
    }

    /// The gain that brings `measured` to `target`, and whether the ceiling set it.
    public static func gain(for measured: LoudnessReport, target: Target) -> (decibels: Double, limited: Bool) {
        let wanted = target.integratedLUFS - measured.integratedLUFS
        let allowed = target.truePeakCeilingDecibels - ceilingMarginDecibels - measured.truePeakDecibels
        return wanted > allowed ? (allowed, true) : (wanted, false)
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
        let (gain, limited) = NormalizedMixdown.gain(for: measured, target: target)
        let factor = Float(Decibels.toLinear(gain))
        let files = [(render.outputPath, output)] + rendered.stemPaths.map { stem in
            // The scratch stems are WAV; the final ones take the asked container's extension.
            let name = ((stem as NSString).lastPathComponent as NSString).deletingPathExtension
            return (stem, request.stemsFolder! + "/" + name + "." + request.container.rawValue)
        }
        var written: [String] = []
        do {
            var result = LoudnessReport(integratedLUFS: 0, rangeLU: 0, truePeakDecibels: 0, samplePeakDecibels: 0, momentaryLUFS: [])
            for (i, (from, to)) in files.enumerated() {
                let report = try NormalizedMixdown.copy(from: from, to: to + ".partial", container: request.container,
                                                        encoding: request.encoding, gain: factor, cues: request.fileCues)
                written.append(to + ".partial")
                TestHooks.killIfAsked(at: "normalize-partial")
                if i == 0 { result = report }
                progress(0.8 + 0.2 * Double(i + 1) / Double(files.count))
            }
            for (_, to) in files { try Mixdown.moveIntoPlace(to + ".partial", to) }
            var summary = rendered
            summary.peakDecibels = result.samplePeakDecibels
            summary.stemPaths = files.dropFirst().map(\.1)
            return Result(summary: summary, measured: measured, gainDecibels: gain, result: result, limitedByTruePeak: limited)
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

    /// Writes `from` × `gain` to `to` in the asked format, measuring what it writes.
    private static func copy(from: String, to: String, container: AudioContainer, encoding: SampleEncoding,
                             gain: Float, cues: [CuePoint]) throws -> LoudnessReport {
        let reader = try AudioFileReader(path: from)
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: reader.sampleRate,
                                     channelCount: reader.channelCount)
        // `to` is our `.partial` name: a killed run's leftover there is replaced, as Mixdown does.
        // The scratch render's metadata (the mix's or its stem's, see ExportMetadata) goes on.
        let writer = try AudioFileWriter(path: to, format: format, blockFrames: 4096, expectedFrameCount: reader.frameCount,
                                         metadata: reader.metadata, cues: cues, creation: .replacingLeftover)
        let analysis = try LoudnessAnalysis(channelCount: reader.channelCount, sampleRate: reader.sampleRate)
        try reader.forEachBlock { buffers, n in
            for b in buffers { for i in 0..<n { b[i] *= gain } }
            analysis.add(buffers, frameCount: n)
            try writer.write(buffers.map { UnsafePointer($0) }, frameCount: n)
        }
        try writer.close()
        return analysis.finish()
    }

    private func makeFolder(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw AudioFileError(path: path, reason: "cannot create a scratch folder: \(String(cString: strerror(errno)))")
        }
    }
}
