import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// An export at a fixed speed or pitch: the mix and stems rendered at 1× through the one
/// graph, then through Rubber Band's offline stretcher (the whole file studied first), the
/// stems on threads of their own, the master section after the stretch as in playback.
final class StretchedExportTests: XCTestCase {
    private var folder: SessionFolder!
    private var dir: String!
    private let rate = 48000

    override func setUpWithError() throws {
        dir = try Fixture.temporaryFolder()
        folder = SessionFolder(path: dir + "/s.tapedeck")
        try folder.create(Session())
        addTeardownBlock { [dir] in try? FileManager.default.removeItem(atPath: dir!) }
    }

    /// Three tracks of tones and noise, panned apart.
    private func session(frames: Int) throws -> Session {
        var s = Session()
        for k in 0..<3 {
            var x = UInt64(k + 11)
            let samples = (0..<frames).map { i -> Float in
                x = x &* 6364136223846793005 &+ 1442695040888963407
                return Float(0.3 * sin(Double(i) * 0.02 * Double(k + 1))) + Float(Int64(bitPattern: x >> 11) % 1000) / 50_000
            }
            let name = "t\(k).wav"
            let writer = try AudioFileWriter(path: folder.audioFolder + "/" + name,
                                             format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: rate, channelCount: 1))
            try samples.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: frames) }
            try writer.close()
            s.tracks.append(Track(name: "t\(k)", pan: Double(k) - 1, playbackChain: k == 1 ? "hpf:120,comp:-20" : "",
                                  regions: [Region(file: "audio/" + name, timelineStartFrame: 0, lengthFrames: Int64(frames))]))
        }
        return s
    }

    private func export(_ s: Session, frames: Int, to name: String, timePitch: TimePitchSettings = .normal, stems: Bool = false,
                        threads: Int = 3, tail: ExportTail = .none) throws -> Mixdown.Summary {
        var request = Mixdown.Request(session: s, folder: folder, range: FrameRange(startFrame: 0, endFrame: Int64(frames)),
                                      outputPath: dir + "/" + name, container: .wav, encoding: .float32,
                                      stemsFolder: stems ? dir + "/" + name + "-stems" : nil, timePitch: timePitch, quality: .best,
                                      workerCount: threads)
        request.tail = tail
        if stems { try FileManager.default.createDirectory(atPath: dir + "/" + name + "-stems", withIntermediateDirectories: true) }
        return try Mixdown(request).run()
    }

    /// The first sample where the two files differ in their bits, or nil.
    private func difference(_ a: String, _ b: String) throws -> Int? {
        let (al, ar) = try Fixture.readStereo(a), (bl, br) = try Fixture.readStereo(b)
        guard al.count == bl.count else { return min(al.count, bl.count) }
        let x = al + ar, y = bl + br
        return x.indices.first { x[$0].bitPattern != y[$0].bitPattern }
    }

    func testAStretchedExportIsTheOneTimesMixThroughTheOfflineStretcher() throws {
        let frames = 96000
        let s = try session(frames: frames)
        let half = TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 0)
        _ = try export(s, frames: frames, to: "plain.wav")
        let stretched = try export(s, frames: frames, to: "half.wav", timePitch: half)
        let alone = try TimePitchRender.render(sourcePath: dir + "/plain.wav", destinationPath: dir + "/alone.wav", settings: half,
                                               quality: .best)
        XCTAssertEqual(stretched.frameCount, alone.frameCount)
        XCTAssertEqual(Double(stretched.frameCount), Double(frames) * 2, accuracy: 4096, "twice as long")
        XCTAssertNil(try difference(dir + "/half.wav", dir + "/alone.wav"),
                     "the export at 0.5x is the 1x mix through Rubber Band's offline stretcher, sample for sample")
    }

    /// A tail is rendered at the export's speed (the live stretcher's path, where the tail's
    /// end is decided as it renders): the file is the stretched range plus the tail.
    func testAStretchedExportWithATailKeepsItsTail() throws {
        let frames = 48000
        let s = try session(frames: frames)
        let half = TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 0)
        let summary = try export(s, frames: frames, to: "tail.wav", timePitch: half, tail: .frames(24000))
        XCTAssertEqual(Double(summary.frameCount), Double(frames) * 2 + 24000, accuracy: 4096, "the range at 0.5x and the tail")
    }

    func testEveryStemIsItsOwnOneTimesStemStretched() throws {
        let frames = 72000
        let s = try session(frames: frames)
        let double = TimePitchSettings(speed: 2, mode: .stretch, pitchSemitones: 0)
        let plain = try export(s, frames: frames, to: "plain.wav", stems: true)
        let fast = try export(s, frames: frames, to: "fast.wav", timePitch: double, stems: true, threads: 3)
        XCTAssertEqual(plain.stemPaths.count, 3)
        XCTAssertEqual(fast.stemPaths.count, 3)
        for (one, stem) in zip(plain.stemPaths, fast.stemPaths) {
            let alone = stem + ".alone.wav"
            _ = try TimePitchRender.render(sourcePath: one, destinationPath: alone, settings: double, quality: .best)
            XCTAssertNil(try difference(stem, alone), "\(stem) is its 1x stem stretched")
            let (left, _) = try Fixture.readStereo(stem)
            XCTAssertEqual(Double(left.count), Double(frames) / 2, accuracy: 4096, "half as long")
        }
    }

    func testTheMasterSectionRunsAfterTheStretch() throws {
        let frames = 72000
        var s = try session(frames: frames)
        let double = TimePitchSettings(speed: 2, mode: .stretch, pitchSemitones: 0)
        _ = try export(s, frames: frames, to: "dry.wav", timePitch: double)
        // A master chain that delays (the limiter's look-ahead), and the master fader: the
        // same stretched mix, the chain's delay made up, −6 dB.
        s.masterChain = "gain:-6,limiter:ceiling=0"
        s.masterGainDecibels = -3
        _ = try export(s, frames: frames, to: "mastered.wav", timePitch: double)
        let (dry, _) = try Fixture.readStereo(dir + "/dry.wav")
        let (wet, _) = try Fixture.readStereo(dir + "/mastered.wav")
        XCTAssertEqual(dry.count, wet.count, "the chain's latency made up: the same length")
        let g = Float(Decibels.toLinear(-9))
        let worst = (1000..<(dry.count - 1000)).map { abs(wet[$0] - dry[$0] * g) }.max() ?? 1
        XCTAssertLessThan(worst, 1e-4, "the master chain and fader on the stretched mix, in place")
    }
}
