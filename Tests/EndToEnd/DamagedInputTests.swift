import CSndfile
import Foundation
import XCTest

/// Damaged files and slips in a time get one clear line and a non-zero exit, never a trap,
/// endless silence or a library's chatter.
final class DamagedInputTests: XCTestCase {
    /// Ten seconds of mono sine at 44.1 kHz in `format` through libsndfile; false when this
    /// libsndfile cannot write it.
    private func write(_ path: String, format: Int32) -> Bool {
        var info = SF_INFO()
        info.samplerate = 44100
        info.channels = 1
        info.format = format
        guard let h = sf_open(path, Int32(SFM_WRITE), &info) else { return false }
        let x = (0..<441_000).map { Float(sin(Double($0) * 0.06) * 0.5) }
        _ = x.withUnsafeBufferPointer { sf_writef_float(h, $0.baseAddress, sf_count_t($0.count)) }
        sf_close(h)
        return true
    }

    private func cut(_ path: String, to fraction: Double, as out: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: URL(fileURLWithPath: out))
    }

    private func oneLine(_ r: Tapedeck.Result, _ needle: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotEqual(r.status, 0, file: file, line: line)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "one line: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains(needle), "'\(needle)' missing from: \(r.stderr)", file: file, line: line)
    }

    func testATruncatedOggImportsExactlyItsDecodableFramesOrIsRefusedInOneLineAndPlaysToItsEnd() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let whole = dir.path + "/whole.ogg"
        try XCTSkipUnless(write(whole, format: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)), "this libsndfile cannot write Ogg Vorbis")
        XCTAssertEqual(try Tapedeck.run(["new", dir.path + "/s"]).status, 0)
        var imported = 0
        for (i, fraction) in [0.05, 0.3, 0.5, 0.77, 0.95].enumerated() {
            let path = dir.path + "/cut\(i).ogg"
            try cut(whole, to: fraction, as: path)
            let r = try Tapedeck.run(["import", dir.path + "/s.tapedeck", path], timeout: 60)
            XCTAssertFalse(r.stderr.contains("Fatal error"), r.stderr)
            if r.status == 0 {
                imported += 1
                // The decodable frames, resampled to 48 kHz: never more than the whole file's.
                let wav = dir.path + "/s.tapedeck/audio/cut\(i).wav"
                let frames = try RecordSupport.readInts(wav, bits: 16).frames
                XCTAssertGreaterThan(frames, 0)
                XCTAssertLessThanOrEqual(frames, 480_000 + 1)
            } else {
                XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "one line: \(r.stderr)")
            }
            let out = dir.path + "/out\(i).raw"
            let play = try Tapedeck.run(["play", path, "--device", "filetap:OUT=\(out)", "--device-format", "float"],
                                        environment: RecordSupport.environment, timeout: 60)
            XCTAssertFalse(play.stderr.contains("Fatal error"), play.stderr)
            let played = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
            XCTAssertLessThan(played, 4 * 480_000 * 2 * 2, "play ends: no endless silence")
        }
        XCTAssertGreaterThan(imported, 0, "late cuts keep pages that decode")
    }

    func testADamagedMP3IsRefusedInOneLineWithoutTheDecodersNotes() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let whole = dir.path + "/whole.mp3"
        try XCTSkipUnless(write(whole, format: Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)), "this libsndfile cannot write MP3")
        let stub = dir.path + "/stub.mp3"
        try Data(try Data(contentsOf: URL(fileURLWithPath: whole)).prefix(300)).write(to: URL(fileURLWithPath: stub))
        oneLine(try Tapedeck.run(["info", stub]), "stub.mp3: damaged or not a readable audio file")
        // Damage in the middle: libmpg123 notes each frame it skips as it decodes.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: whole)))
        var x: UInt32 = 12345
        for i in stride(from: 2000, to: bytes.count, by: 7) { x = x &* 1_103_515_245 &+ 12345; bytes[i] = UInt8(truncatingIfNeeded: x >> 16) }
        let bad = dir.path + "/bad.mp3"
        try Data(bytes).write(to: URL(fileURLWithPath: bad))
        let r = try Tapedeck.run(["info", bad])
        XCTAssertFalse(r.stderr.contains("Note:") || r.stderr.contains("libmpg123"), r.stderr)
        XCTAssertLessThanOrEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
    }

    func testTimeSlipsAreRefusedSayingWhy() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        XCTAssertEqual(try Tapedeck.run(["new", dir.path + "/s"]).status, 0)
        let session = dir.path + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["marker", session, "add", "0:30"]).status, 0)
        oneLine(try Tapedeck.run(["marker", session, "move", "1", "-1f"]), "'-1f': times cannot be negative")
        oneLine(try Tapedeck.run(["marker", session, "add", "1e308"]), "'1e308' has an exponent")
        oneLine(try Tapedeck.run(["marker", session, "add", "1h99m"]), "'99m' after 'h' must be below 60")
    }
}
