import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `tapedeck play` into `filetap`'s OUT file: after one buffer of prefill silence, OUT holds
/// exactly what was played.
final class PlayTests: XCTestCase {
    private let prefill = 512  // --period 128 --periods 4

    private func stereoFile(_ path: String, frames: Int, seed: Float) throws -> [Float] {
        let w = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 2))
        let l = (0..<frames).map { Float(($0 * 37 + Int(seed * 1000)) % 2000) / 4000 - 0.25 }
        let r = l.map { -$0 * seed }
        try l.withUnsafeBufferPointer { lp in try r.withUnsafeBufferPointer { rp in try w.write([lp.baseAddress!, rp.baseAddress!], frameCount: frames) } }
        try w.close()
        return zip(l, r).flatMap { [$0, $1] }
    }

    private func outFrames(_ path: String) throws -> [Float] {
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        return raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    func testPlayingAFileSendsItUnchangedAfterThePrefill() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let samples = try stereoFile(dir.path + "/a.wav", frames: 10_000, seed: 0.5)
        let out = dir.path + "/out.raw"
        let r = try Tapedeck.run(["play", dir.path + "/a.wav", "--device", "filetap:OUT=\(out)", "--device-format", "float",
                                  "--period", "128", "--periods", "4"], environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let got = try outFrames(out)
        guard got.count >= prefill * 2 + samples.count else { return XCTFail("only \(got.count / 2) frames went out") }
        XCTAssertTrue(got[0..<(prefill * 2)].allSatisfy { $0 == 0 })
        XCTAssertTrue(Array(got[(prefill * 2)..<(prefill * 2 + samples.count)]) == samples)
    }

    func testFromAndToPlayOnlyThatRange() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let samples = try stereoFile(dir.path + "/a.wav", frames: 10_000, seed: 0.25)
        let out = dir.path + "/out.raw"
        let r = try Tapedeck.run(["play", dir.path + "/a.wav", "--from", "1000f", "--to", "3000f", "--device", "filetap:OUT=\(out)",
                                  "--device-format", "float", "--period", "128", "--periods", "4"], environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let got = try outFrames(out)
        guard got.count >= prefill * 2 + 4000 else { return XCTFail("only \(got.count / 2) frames went out") }
        XCTAssertTrue(Array(got[(prefill * 2)..<(prefill * 2 + 4000)]) == Array(samples[2000..<6000]))
        XCTAssertLessThan(got.count / 2, prefill + 2000 + 128 + 1, "stops within a period of --to")
    }

    func testSessionPlaybackHonoursMuteAndRegionPlacement() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/s")
        try folder.create(Session(sampleRate: 48000))
        let heard = try stereoFile(folder.audioFolder + "/heard.wav", frames: 4000, seed: 0.75)
        _ = try stereoFile(folder.audioFolder + "/muted.wav", frames: 4000, seed: 1)
        var session = try folder.load()
        session.tracks = [Track(name: "heard", regions: [Region(file: "audio/heard.wav", timelineStartFrame: 1000, lengthFrames: 4000)]),
                          Track(name: "muted", mute: true, regions: [Region(file: "audio/muted.wav", timelineStartFrame: 0, lengthFrames: 4000)])]
        try folder.save(session)
        let out = dir.path + "/out.raw"
        let r = try Tapedeck.run(["play", folder.path, "--device", "filetap:OUT=\(out)", "--device-format", "float",
                                  "--period", "128", "--periods", "4"], environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let got = try outFrames(out)
        let start = (prefill + 1000) * 2
        guard got.count >= start + heard.count else { return XCTFail("only \(got.count / 2) frames went out") }
        XCTAssertTrue(got[(prefill * 2)..<start].allSatisfy { $0 == 0 }, "the muted track is silent")
        XCTAssertTrue(Array(got[start..<(start + heard.count)]) == heard, "a stereo track at centre plays at unity")
    }

    func testLoopRepeatsTheRangeUntilStopped() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let samples = try stereoFile(dir.path + "/a.wav", frames: 10_000, seed: 0.5)
        let out = dir.path + "/out.raw"
        let child = try SpawnedChild([Tapedeck.binary, "play", dir.path + "/a.wav", "--from", "2000f", "--to", "2700f", "--loop",
                                      "--device", "filetap:OUT=\(out)", "--device-format", "float", "--period", "128", "--periods", "4"],
                                     environment: RecordSupport.environment)
        let deadline = Date().addingTimeInterval(20)
        while (((try? FileManager.default.attributesOfItem(atPath: out))?[.size] as? Int) ?? 0) < 200_000 && Date() < deadline { usleep(5_000) }
        let status = try XCTUnwrap(child.kill(SIGINT))
        XCTAssertEqual(status, 0, "SIGINT ends playback with exit 0")
        let got = try outFrames(out)
        let range = Array(samples[4000..<5400])
        let loops = (got.count / 2 - prefill) / 700
        XCTAssertGreaterThan(loops, 5)
        for k in 0..<loops {
            let at = (prefill + k * 700) * 2
            XCTAssertTrue(Array(got[at..<(at + 1400)]) == range, "pass \(k) repeats the range")
        }
    }
}
