import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine

/// A crash leaves a take whose header is up to a second old and a marker beside it;
/// recovery must make every written frame readable and put the take on its track, once.
final class TakeRecoveryTests: XCTestCase {
    /// Writes `total` frames with a header update after `flushed`, then copies the file as a
    /// crash would leave it (the writer never closes it).
    private func crashedTake(at path: String, container: AudioContainer, flushed: Int, total: Int) throws -> [Float] {
        let format = AudioFileFormat(container: container, encoding: .int16, sampleRate: 48000, channelCount: 1)
        let scratch = path + ".live"
        let writer = try AudioFileWriter(path: scratch, format: format)
        let samples = (0..<total).map { Float(Int16(truncatingIfNeeded: $0 * 7 % 20000 - 10000)) / 32768 }
        try samples.withUnsafeBufferPointer { buf in
            try writer.write([buf.baseAddress!], frameCount: flushed)
            writer.updateHeader()
            try writer.write([buf.baseAddress! + flushed], frameCount: total - flushed)
        }
        writer.updateHeader()  // flushes libsndfile; the test then appends "unflushed" audio by hand for WAV
        try FileManager.default.copyItem(atPath: scratch, toPath: path)
        try? writer.close()
        try? FileManager.default.removeItem(atPath: scratch)
        return samples
    }

    func testWAVWithAStaleHeaderIsRepairedFromItsLength() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/t.wav"
        _ = try crashedTake(at: path, container: .wav, flushed: 1000, total: 1000)
        // Audio written after the last header update: 500 more 16-bit frames and half a frame.
        let fh = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        fh.seekToEndOfFile()
        fh.write(Data(repeating: 0x11, count: 1001))
        try fh.close()
        XCTAssertEqual(try AudioFileReader(path: path).frameCount, 1000, "libsndfile trusts the stale header")
        let outcome = try WAVHeaderRepair.repair(path: path)
        XCTAssertEqual(outcome.frameCount, 1500)
        XCTAssertTrue(outcome.changed)
        XCTAssertEqual(try AudioFileReader(path: path).frameCount, 1500)
        XCTAssertFalse(try WAVHeaderRepair.repair(path: path).changed, "a second repair changes nothing")
    }

    func testRecoverPutsMarkedTakesOnTheirTrackOnce() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "a"), Track(name: "b")]
        try folder.create(session)
        for (name, container) in [("w.wav", AudioContainer.wav), ("f.flac", .flac)] {
            let path = folder.audioFolder + "/" + name
            _ = try crashedTake(at: path, container: container, flushed: 30_000, total: 50_000)
            try TakeMarker(file: "audio/" + name, session: folder.path, trackIndex: 1, timelineStartFrame: 480,
                           latencyFrames: 100, sampleRate: 48000, deviceChannels: [1], startedAtSeconds: 0).write(forAudio: path)
        }
        let found = try TakeRecovery.recover(session: folder)
        XCTAssertEqual(found.count, 2)
        for r in found {
            XCTAssertNil(r.problem)
            XCTAssertGreaterThanOrEqual(r.frameCount, 30_000, r.file)
        }
        session = try folder.load()
        XCTAssertEqual(session.tracks[1].regions.count, 2)
        for region in session.tracks[1].regions {
            XCTAssertEqual(region.timelineStartFrame, 480)
            XCTAssertEqual(region.sourceOffsetFrame, 100)
            XCTAssertEqual(region.lengthFrames, try AudioFileReader(path: folder.absolutePath(of: region.file)).frameCount - 100)
        }
        XCTAssertEqual(try TakeRecovery.recover(session: folder), [], "markers are gone")
        let audio = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder)
        XCTAssertFalse(audio.contains { $0.hasSuffix(".recording") })
    }
}
