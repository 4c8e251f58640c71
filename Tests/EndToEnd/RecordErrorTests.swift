import Foundation
import XCTest
import TapedeckIO

/// Every way a recording can fail ends in one clear line, a non-zero exit, and no
/// half-written file left unmarked.
final class RecordErrorTests: XCTestCase {
    private func assertOneLineFailure(_ r: Tapedeck.Result, mentions: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotEqual(r.status, 0, file: file, line: line)
        let lines = r.stderr.split(separator: "\n").filter { !$0.hasPrefix("recording from") && !$0.contains("REC") && !$0.contains("■ STOP") && !$0.hasPrefix("recorded ") }
        XCTAssertEqual(lines.count, 1, r.stderr, file: file, line: line)
        XCTAssertTrue(r.stderr.contains(mentions), r.stderr, file: file, line: line)
        XCTAssertFalse(r.stderr.contains("Fatal error"), file: file, line: line)
    }

    func testMissingDeviceUnsupportedRateAndChannelsFailClearly() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let env = RecordSupport.environment
        var r = try Tapedeck.run(["record", "--device", "nosuchdevice", "--out", dir.path + "/a.wav"], environment: env)
        assertOneLineFailure(r, mentions: "nosuchdevice")
        r = try Tapedeck.run(["record", "--device", "filetap48", "--sample-rate", "2000", "--out", dir.path + "/b.wav"], environment: env)
        assertOneLineFailure(r, mentions: "2000 Hz is not supported")
        let conf = dir.path + "/stereo.conf"
        try "pcm.stereo { type multi slaves.a { pcm { type null } channels 2 } bindings { 0 { slave a channel 0 } 1 { slave a channel 1 } } }\n"
            .write(toFile: conf, atomically: true, encoding: .utf8)
        r = try Tapedeck.run(["record", "--device", "stereo", "--channels", "1,2,3", "--duration", "0.1", "--out", dir.path + "/c.wav"],
                             environment: ["TAPEDECK_ALSA_CONFIG": conf])
        assertOneLineFailure(r, mentions: "channels")
        r = try Tapedeck.run(["record", "--device", "filetap", "--fx", "flanger", "--out", dir.path + "/d.wav"], environment: env)
        XCTAssertEqual(r.status, 64, "a chain typo is a usage error: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("unknown node 'flanger'"), r.stderr)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".wav") || $0.hasSuffix(".recording") }
        XCTAssertEqual(left, [])
    }

    func testUnwritableOutputFailsBeforeRecording() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let r = try Tapedeck.run(["record", "--device", "filetap", "--duration", "1", "--out", dir.path + "/missing/take.wav"],
                                 environment: RecordSupport.environment)
        assertOneLineFailure(r, mentions: "does not exist")
    }

    func testFullDiskClosesTheTakeValidAndExitsNonZero() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        RecordSupport.writeRaw(RecordSupport.signal(frames: 400_000, channels: 1, bits: 16), bits: 16, to: dir.path + "/in.raw")
        let take = dir.path + "/take.wav"
        // 200 blocks of 512 bytes: about 100 KB, ~1 s of 16-bit mono.
        let r = try Tapedeck.run(["-c", "ulimit -f 200; exec \"$0\" \"$@\"", Tapedeck.binary, "record",
                                                              "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                                              "--bits", "16", "--duration", "5", "--out", take], executable: "/bin/sh",
                                      environment: RecordSupport.environment)
        assertOneLineFailure(r, mentions: "file size limit")
        let got = try RecordSupport.readInts(take, bits: 16)
        XCTAssertGreaterThan(got.frames, 10_000)
        XCTAssertLessThan(got.frames, 60_000)
        XCTAssertFalse(FileManager.default.fileExists(atPath: take + ".recording"))
    }
}
