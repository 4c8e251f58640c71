import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckDSP
@testable import TapedeckEngine

/// The export's mix is the live engine freewheeled on a ``FreewheelDevice``: every frame of
/// the range, in place, whatever the range's edges are against the engine's periods; the
/// master section as playback has it from the first frame; the master chain's delay made up.
final class FreewheelMixTests: XCTestCase {
    private var folder: SessionFolder!

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    private func write(_ samples: [Float], name: String) throws {
        let writer = try AudioFileWriter(path: folder.audioFolder + "/" + name,
                                         format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        try samples.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: samples.count) }
        try writer.close()
    }

    /// One track of `samples`, panned hard left (unity on the left, nothing on the right).
    private func session(_ samples: [Float]) throws -> Session {
        try write(samples, name: "a.wav")
        var s = Session()
        s.tracks = [Track(name: "A", pan: -1, regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: Int64(samples.count))])]
        return s
    }

    private func export(_ session: Session, range: FrameRange, masterChain: String? = nil) throws -> (left: [Float], right: [Float], summary: Mixdown.Summary) {
        let out = folder.exportsFolder + "/mix-\(UUID().uuidString).wav"
        let summary = try Mixdown(Mixdown.Request(session: session, folder: folder, range: range, outputPath: out,
                                                  container: .wav, encoding: .float32,
                                                  masterChain: try masterChain.map { text throws(ChainError) in try Chain(parsing: text) })).run()
        let (left, right) = try Fixture.readStereo(out)
        return (left, right, summary)
    }

    /// A ramp: every frame's value says which frame it is.
    private let ramp = (0..<200_000).map { Float($0) / 200_000 }

    /// Freewheeling at 1×, a track's regions are decoded straight into its strip once its
    /// ring's first fill is played (no copy through the ring), every frame in place.
    func testAnExportDecodesStraightIntoTheStripsBuffers() throws {
        let s = try session(ramp)
        let range = FrameRange(startFrame: 1000, endFrame: 180_000)
        let run = try FreewheelRender(spec: try GraphSpec(session: s, folder: folder, listening: []), range: range, workerCount: 2)
        defer { run.close() }
        var left: [Float] = []
        var total: Int64 = 0
        while total < range.frameCount {
            let rolled = try run.next()
            guard rolled > 0 else { continue }
            left += UnsafeBufferPointer(start: run.device.output[0], count: Int(rolled))
            total += rolled
        }
        let voice = try XCTUnwrap(run.engine.graphs.last?.strips.first?.voice)
        XCTAssertGreaterThan(voice.decodedDirectFrames.load(ordering: .relaxed), range.frameCount - 2 * Int64(FreewheelRender.longPeriodFrames),
                             "all but the ring's first fill decoded straight")
        for (k, v) in left.prefix(Int(range.frameCount)).enumerated() where v != ramp[1000 + k] {
            XCTFail("frame \(1000 + k) plays \(v), not \(ramp[1000 + k])")
            break
        }
    }

    func testEveryFrameOfARangeIsExportedInPlaceWhateverItsEdges() throws {
        let s = try session(ramp)
        // Edges on, just off and far off the engine's 1024-frame periods, one frame, and a
        // range running past the material (silence there).
        for (start, end) in [(0, 48000), (777, 100_001), (1023, 1025), (1024, 2048), (5, 6), (199_000, 201_000)] as [(Int64, Int64)] {
            let mix = try export(s, range: FrameRange(startFrame: start, endFrame: end))
            XCTAssertEqual(mix.left.count, Int(end - start), "\(start)-\(end): every frame")
            XCTAssertEqual(mix.summary.frameCount, end - start)
            var misplaced = 0
            for (k, v) in mix.left.enumerated() {
                let frame = Int(start) + k
                let want: Float = frame < ramp.count ? ramp[frame] : 0
                if abs(v - want) > 1e-6 { misplaced += 1 }
            }
            XCTAssertEqual(misplaced, 0, "\(start)-\(end): each frame its own (first \(mix.left.prefix(3)))")
            XCTAssertEqual(mix.right.map(abs).max() ?? 0, 0, "hard left")
        }
    }

    /// Playback glided the master fader from unity over its first period, so every play and
    /// (now that export is playback) every export began with a swell.
    func testTheMasterFaderHoldsFromTheFirstFrame() throws {
        var s = try session([Float](repeating: 0.5, count: 48000))
        s.masterGainDecibels = -20
        let mix = try export(s, range: FrameRange(startFrame: 0, endFrame: 48000))
        let want = Float(0.5 * Decibels.toLinear(-20))
        XCTAssertEqual(mix.left.first ?? 0, want, accuracy: 1e-6, "the first frame at the fader")
        XCTAssertEqual(mix.left.prefix(2048).map { abs($0 - want) }.max() ?? 1, 0, accuracy: 1e-6, "the first periods too")
    }

    /// The limiter looks ahead: its delay is rendered past the range's end and dropped from
    /// its front, so a click lands on its frame.
    func testTheMasterChainsDelayIsMadeUp() throws {
        var click = [Float](repeating: 0, count: 96000)
        click[24000] = 0.5
        let s = try session(click)
        let mix = try export(s, range: FrameRange(startFrame: 0, endFrame: 96000), masterChain: "limiter")
        XCTAssertEqual(mix.left.count, 96000)
        let peak = mix.left.indices.max { abs(mix.left[$0]) < abs(mix.left[$1]) }
        XCTAssertEqual(peak, 24000, "the click on its frame through a chain that delays")
    }

    /// A chain that does not parse, and a node that cannot work (a sampler whose file is
    /// gone), are said, as before; a muted track's problems are not the mix's.
    func testChainProblemsAreReported() throws {
        var s = try session([Float](repeating: 0.1, count: 4800))
        s.tracks[0].playbackChain = "gain:0,sampler:file=samples/gone.wav"
        s.tracks.append(Track(name: "B", mute: true, playbackChain: "sampler:file=samples/gone.wav"))
        let mix = try export(s, range: FrameRange(startFrame: 0, endFrame: 4800))
        XCTAssertEqual(mix.summary.warnings.count, 1, "\(mix.summary.warnings)")
        XCTAssertTrue(mix.summary.warnings.first?.hasPrefix("track 1 (A) chain: node 2 (sampler)") ?? false, "\(mix.summary.warnings)")
        s.tracks[0].playbackChain = "lpf:cutoff=banana"
        XCTAssertThrowsError(try export(s, range: FrameRange(startFrame: 0, endFrame: 4800))) { error in
            XCTAssertTrue("\(error)".contains("track 1 (A) chain"), "\(error)")
        }
    }

    /// Stems come from the same freewheeled render: each audible track after its chain, fader
    /// and pan, from the range's first frame (the master chain's delay is the mix's alone),
    /// the range's length; a muted track has none; scaled by the master fader they sum to
    /// the mix to the rounding of one addition.
    func testStemsAreTheTracksOfTheSameRenderInPlace() throws {
        try write(ramp, name: "a.wav")
        let tone = (0..<200_000).map { Float(0.2 * sin(Double($0) * 0.01)) }
        try write(tone, name: "b.wav")
        var s = Session()
        s.tracks = [
            Track(name: "A", gainDecibels: -6, pan: -1, regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: 200_000)]),
            Track(name: "B", pan: 0.3, playbackChain: "delay:1/8", regions: [Region(file: "audio/b.wav", timelineStartFrame: 0, lengthFrames: 200_000)]),
            Track(name: "C", mute: true, regions: [Region(file: "audio/b.wav", timelineStartFrame: 100, lengthFrames: 1000)]),
        ]
        s.masterGainDecibels = -3
        let stems = folder.path + "/stems-out"
        try FileManager.default.createDirectory(atPath: stems, withIntermediateDirectories: true)
        let range = FrameRange(startFrame: 777, endFrame: 100_001)
        let out = folder.exportsFolder + "/mix-stems.wav"
        // A limiter far below its threshold: unity, but it delays the mix by its look-ahead.
        let summary = try Mixdown(Mixdown.Request(session: s, folder: folder, range: range, outputPath: out, container: .wav,
                                                  encoding: .float32, stemsFolder: stems, masterChain: try Chain(parsing: "limiter"))).run()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: stems).sorted(), ["01-A.wav", "02-B.wav"], "no stem for the muted track")
        XCTAssertEqual(summary.stemPaths.count, 2)
        func read(_ path: String) throws -> [[Float]] {
            let (left, right) = try Fixture.readStereo(path)
            return [left, right]
        }
        let a = try read(stems + "/01-A.wav"), b = try read(stems + "/02-B.wav"), mix = try read(out)
        XCTAssertEqual(a[0].count, Int(range.frameCount))
        XCTAssertEqual(b[0].count, Int(range.frameCount))
        // A: the ramp at -6 dB, hard left, frame for frame from the range's start.
        let half = Float(pow(10, -6.0 / 20))
        for i in stride(from: 0, to: a[0].count, by: 331) {
            XCTAssertEqual(a[0][i], ramp[777 + i] * half, accuracy: 1e-6, "stem A at \(i)")
            XCTAssertEqual(a[1][i], 0)
        }
        let master = Float(pow(10, -3.0 / 20))
        var worst: Float = 0
        for c in 0..<2 {
            for i in 0..<mix[c].count { worst = max(worst, abs((a[c][i] + b[c][i]) * master - mix[c][i])) }
        }
        XCTAssertLessThan(worst, 1e-6, "stems × master fader = the mix (the limiter's delay made up in the mix)")
    }
}
