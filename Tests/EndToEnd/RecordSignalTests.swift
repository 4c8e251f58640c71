import Foundation
import XCTest

/// SIGINT, SIGTERM and SIGHUP finish a take properly: exit 0, a valid file holding every
/// frame recorded, no marker left.
final class RecordSignalTests: XCTestCase {
    func testStopSignalsFinishTheTakeAndExitZero() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let input = RecordSupport.signal(frames: 48_000 * 4, channels: 1, bits: 16, seed: 11)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        for (signal, name) in [(SIGINT, "int"), (SIGTERM, "term"), (SIGHUP, "hup")] {
            let take = dir.path + "/take-\(name).wav"
            let out = dir.path + "/out-\(name).jsonl"
            // A 4 s input at 48 kHz mono 16-bit; the unpaced device reads past its end (stale
            // data), which is fine: only the frames the program says it recorded are checked.
            let child = try SpawnedChild([Tapedeck.binary, "record", "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                          "--bits", "16", "--out", take, "--json"],
                                         environment: RecordSupport.environment, stdoutPath: out)
            let deadline = Date().addingTimeInterval(20)
            var size: Int64 = 0
            while size < 50_000 && Date() < deadline {
                size = ((try? FileManager.default.attributesOfItem(atPath: take))?[.size] as? Int64) ?? 0
                usleep(5_000)
            }
            let status = child.kill(signal)
            let code = try XCTUnwrap(status, "exits within 10 s of \(name)")
            XCTAssertEqual(code & 0x7f, 0, "exits, not killed by \(name)")
            XCTAssertEqual((code >> 8) & 0xff, 0, "exit status 0 after \(name)")
            let lines = RecordSupport.jsonLines((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
            let done = try XCTUnwrap(lines.last { $0["event"] as? String == "done" })
            let frames = try XCTUnwrap(done["frames"] as? Int)
            let got = try RecordSupport.readInts(take, bits: 16)
            XCTAssertEqual(got.frames, frames)
            XCTAssertGreaterThan(frames, 0)
            let checked = min(frames, input.count)
            XCTAssertTrue(Array(got.values[0..<checked]) == Array(input[0..<checked]))
            XCTAssertFalse(FileManager.default.fileExists(atPath: take + ".recording"))
            try? FileManager.default.removeItem(atPath: take)
        }
    }
}
