import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `tapedeck record` through the unpaced `filetap` test device.
final class RecordTests: XCTestCase {
    func testHeadlessRecordTakeIsBitIdenticalToTheInput() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        for (bits, format, period) in [(16, "s16", 64), (16, "s16", 1000), (24, "s24", 256), (24, "s24", 4096)] {
            let frames = 30_000
            let input = RecordSupport.signal(frames: frames * 2, channels: 2, bits: bits, seed: UInt64(period))
            let inPath = dir.path + "/in-\(bits)-\(period).raw"
            RecordSupport.writeRaw(input, bits: bits, to: inPath)
            let take = dir.path + "/take-\(bits)-\(period).wav"
            let r = try Tapedeck.run(["--headless", "--record", "--device", "filetap:IN=\(inPath)", "--device-format", format,
                                      "--channels", "1,2", "--bits", "\(bits)", "--period", "\(period)",
                                      "--duration", "\(frames)f", "--out", take], environment: RecordSupport.environment)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stderr.contains("REC"), "shows that it is recording")
            let got = try RecordSupport.readInts(take, bits: bits)
            XCTAssertEqual(got.frames, frames)
            XCTAssertTrue(got.values == Array(input[0..<(frames * 2)]), "\(bits)-bit at period \(period) differs")
            XCTAssertFalse(FileManager.default.fileExists(atPath: take + ".recording"))
        }
    }

    func testRecordingIntoASessionPutsTheTakeOnTheTrack() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/song")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "one"), Track(name: "two")]
        try folder.create(session)
        let input = RecordSupport.signal(frames: 40_000, channels: 1, bits: 24)
        RecordSupport.writeRaw(input, bits: 24, to: dir.path + "/in.raw")
        let r = try Tapedeck.run(["record", folder.path, "--track", "2", "--device", "filetap:IN=\(dir.path)/in.raw",
                                  "--device-format", "s24", "--format", "flac", "--bits", "24", "--duration", "0.5", "--json"],
                                 environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = RecordSupport.jsonLines(r.stdout)
        let start = try XCTUnwrap(lines.first)
        XCTAssertEqual(start["event"] as? String, "start")
        XCTAssertEqual(start["format"] as? String, "S24_LE", "the negotiated settings are reported")
        XCTAssertEqual(start["period_frames"] as? Int, 256)
        XCTAssertTrue(lines.contains { $0["event"] as? String == "status" && $0["peak_dbfs"] is [Any] && $0["disk_free_bytes"] != nil })
        let done = try XCTUnwrap(lines.last)
        XCTAssertEqual(done["event"] as? String, "done")
        XCTAssertEqual(done["frames"] as? Int, 24_000)
        session = try folder.load()
        let region = try XCTUnwrap(session.tracks[1].regions.first)
        XCTAssertEqual(region.lengthFrames, 24_000)
        XCTAssertTrue(region.file.hasPrefix("audio/") && region.file.hasSuffix(".flac"))
        let got = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 24)
        XCTAssertTrue(got.values == Array(input[0..<24_000]))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).filter { $0.hasSuffix(".recording") }
        XCTAssertEqual(leftovers, [])
    }

    func testOverdubRegionIsShiftedByTheReportedRoundTrip() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/dub")
        var session = Session(sampleRate: 48000)
        let click = try AudioFileWriter(path: dir.path + "/click.wav",
                                        format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 2))
        var samples = [Float](repeating: 0, count: 20_000)
        samples[5000] = 0.5
        try samples.withUnsafeBufferPointer { try click.write([$0.baseAddress!, $0.baseAddress!], frameCount: 20_000) }
        try click.close()
        try folder.create(session)
        try FileManager.default.moveItem(atPath: dir.path + "/click.wav", toPath: folder.audioFolder + "/click.wav")
        session.tracks = [Track(name: "click", regions: [Region(file: "audio/click.wav", timelineStartFrame: 0, lengthFrames: 20_000)]),
                          Track(name: "dub")]
        try folder.save(session)
        RecordSupport.writeRaw(RecordSupport.signal(frames: 60_000, channels: 1, bits: 16), bits: 16, to: dir.path + "/in.raw")
        let out = dir.path + "/out.raw"
        let r = try Tapedeck.run(["record", folder.path, "--track", "2", "--play", "--device", "filetap:IN=\(dir.path)/in.raw,OUT=\(out)",
                                  "--device-format", "s16", "--bits", "16", "--period", "128", "--periods", "4", "--duration", "30000f",
                                  "--json"],
                                 environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let done = try XCTUnwrap(RecordSupport.jsonLines(r.stdout).last)
        let latency = try XCTUnwrap(done["latency_frames"] as? Int)
        XCTAssertEqual(latency, 512, "one buffer of prefill: 128 × 4")
        let region = try XCTUnwrap(try folder.load().tracks[1].regions.first)
        // The round trip is left out of the file: its first frame is the input that arrived
        // with timeline frame 0 as heard, one round trip after the start.
        XCTAssertEqual(region.timelineStartFrame, 0)
        XCTAssertEqual(region.sourceOffsetFrame, 0)
        XCTAssertEqual(region.lengthFrames, 30_000)
        let got = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16)
        let input = RecordSupport.signal(frames: 60_000, channels: 1, bits: 16)
        XCTAssertTrue(got.values == Array(input[latency..<(latency + 30_000)]), "the take is the input shifted by the round trip")
        // (filetap's OUT cannot show the played click here: the capture stream of the same
        // PCM appends what it captured to the same file. The engine test with an in-process
        // loopback device checks that the echo lands 0 frames from the played click.)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out))
    }
}
