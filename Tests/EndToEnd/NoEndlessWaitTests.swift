import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Nothing waits for ever on what a user hands it: `--to` ends playback whatever the
/// session's loop says, and a FIFO is refused before anything opens it.
final class NoEndlessWaitTests: XCTestCase {
    private let prefill = 512  // --period 128 --periods 4

    private func stereoFile(_ path: String, frames: Int) throws {
        let w = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 2))
        let l = (0..<frames).map { Float($0 % 200) / 400 - 0.25 }
        try l.withUnsafeBufferPointer { lp in try w.write([lp.baseAddress!, lp.baseAddress!], frameCount: frames) }
        try w.close()
    }

    func testPlayToEndsAtToEvenWhenTheSessionLoopIsOn() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/s")
        try folder.create(Session(sampleRate: 48000))
        try stereoFile(folder.audioFolder + "/a.wav", frames: 10_000)
        var session = try folder.load()
        session.tracks = [Track(name: "a", regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: 10_000)])]
        session.loopRange = FrameRange(startFrame: 0, endFrame: 8000)
        session.loopEnabled = true
        try folder.save(session)
        let out = dir.path + "/out.raw"
        let started = Date()
        let r = try Tapedeck.run(["play", folder.path, "--to", "3000f", "--device", "filetap:OUT=\(out)", "--device-format", "float",
                                  "--period", "128", "--periods", "4"], environment: RecordSupport.environment, timeout: 20)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "play --to ends on its own")
        let frames = (((try? FileManager.default.attributesOfItem(atPath: out))?[.size] as? Int) ?? 0) / 8
        XCTAssertGreaterThanOrEqual(frames, prefill + 3000)
        XCTAssertLessThan(frames, prefill + 3000 + 128 + 1, "stops within a period of --to, not at the loop's end")
    }

    private func fifo(_ test: XCTestCase) throws -> (URL, String) {
        let dir = try Tapedeck.temporaryFolder(test)
        let path = dir.path + "/pipe.wav"
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        return (dir, path)
    }

    func testPlayingAFIFOIsRefusedAtOnceInOneLine() throws {
        let (dir, pipe) = try fifo(self)
        let started = Date()
        let r = try Tapedeck.run(["play", pipe, "--device", "filetap:OUT=\(dir.path)/out.raw"], environment: RecordSupport.environment, timeout: 10)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertTrue(r.stderr.contains("FIFO"), r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
    }

    func testImportingAFIFOIsRefusedAtOnceInOneLine() throws {
        let (dir, pipe) = try fifo(self)
        let folder = SessionFolder(path: dir.path + "/s.tapedeck")
        try folder.create(Session(sampleRate: 48000))
        for name in [pipe, dir.path + "/pipe.mid"] {
            if name.hasSuffix(".mid") { XCTAssertEqual(mkfifo(name, 0o600), 0) }
            let started = Date()
            let r = try Tapedeck.run(["import", folder.path, name], timeout: 10)
            XCTAssertNotEqual(r.status, 0)
            XCTAssertLessThan(Date().timeIntervalSince(started), 5)
            XCTAssertTrue(r.stderr.contains("FIFO"), r.stderr)
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        }
        XCTAssertEqual(try folder.load().tracks.count, 0, "nothing imported")
    }
}
