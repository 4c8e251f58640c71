import Foundation
import TapedeckIO
import XCTest

/// `recover` leaves finished files alone and brings a killed take back in its own format,
/// depth and metadata.
final class RecoverFormatTests: XCTestCase {
    private func writeSine(_ path: String, format: AudioFileFormat, frames: Int, metadata: TakeMetadata? = nil) throws {
        let w = try AudioFileWriter(path: path, format: format, metadata: metadata)
        var x = (0..<frames).map { Float(sin(Double($0) * 0.05) * 0.5) }
        try x.withUnsafeMutableBufferPointer { buf in try w.write([UnsafePointer(buf.baseAddress!)], frameCount: frames) }
        try w.close()
    }

    func testAFinishedWAVWithAListChunkAfterItsDataIsByteIdenticalAfterRecover() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let path = dir.path + "/done.wav"
        try writeSine(path, format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1), frames: 4800)
        // Append LIST/INFO (INAM "a title") after the data and fix the RIFF size, as
        // other programs write it.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let name = Array("a title\0".utf8)
        let info = Array("INFO".utf8) + Array("INAM".utf8) + le32(name.count) + name
        bytes += Array("LIST".utf8) + le32(info.count) + info
        bytes.replaceSubrange(4..<8, with: le32(bytes.count - 8))
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let r = try Tapedeck.run(["recover", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("4800 frames"), r.stdout)
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), bytes, "a finished file is not touched")
    }

    func testAFinished16BitFLACWithCommentsIsUnchangedByRecover() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let path = dir.path + "/done.flac"
        let meta = TakeMetadata(session: "song", trackNumber: 2, timelineFrame: 96_000, device: "hw:7", takeNumber: 3)
        try writeSine(path, format: AudioFileFormat(container: .flac, encoding: .int16, sampleRate: 48000, channelCount: 1),
                      frames: 48_000, metadata: meta)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let r = try Tapedeck.run(["recover", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "a finished FLAC is not rewritten")
        XCTAssertEqual(try TakeMetadata.read(path: path), meta)
    }

    func testAKilled16BitFLACTakeComesBack16BitWithItsMetadata() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let jack = try JackServer.start(self, folder: dir.path)
        let input = RecordSupport.signal(frames: 48_000 * 12, channels: 1, bits: 16, seed: 5)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let take = dir.path + "/take.flac"
        let stdoutPath = dir.path + "/stdout.jsonl"
        let child = try SpawnedChild([Tapedeck.binary, "record", "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                      "--bits", "16", "--out", take, "--json"],
                                     environment: jack.environment, stdoutPath: stdoutPath)
        var reaped = false
        defer { if !reaped { _ = child.kill(SIGKILL) } }
        func framesSeen() -> Int {
            let text = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            return RecordSupport.jsonLines(text).last { $0["event"] as? String == "status" }?["frames"] as? Int ?? 0
        }
        let deadline = Date().addingTimeInterval(20)
        while framesSeen() < 96_000 && Date() < deadline { usleep(20_000) }
        guard framesSeen() >= 96_000 else { return XCTFail("recording never reached two seconds") }
        let before = try XCTUnwrap(TakeMetadata.read(path: take), "the take describes itself while it records")
        reaped = child.kill(SIGKILL) != nil

        let r = try Tapedeck.run(["recover", take])
        XCTAssertEqual(r.status, 0, r.stderr)
        let reader = try AudioFileReader(path: take)
        XCTAssertEqual(reader.losslessEncoding, .int16, reader.formatDescription)
        XCTAssertTrue(reader.formatDescription.hasPrefix("FLAC"), reader.formatDescription)
        XCTAssertEqual(reader.metadata, before, "take, position and device survive")
        XCTAssertFalse(before.device.isEmpty)
        let got = try RecordSupport.readInts(take, bits: 16)
        XCTAssertGreaterThan(got.frames, 48_000)
        XCTAssertTrue(got.values == Array(input[0..<got.frames]), "every recovered frame equals the input")
    }

    private func le32(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(v).littleEndian, Array.init) }
}
