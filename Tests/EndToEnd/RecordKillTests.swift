import Foundation
import XCTest

/// The crash-safety promise: a take killed with SIGKILL keeps all audio up to at most one
/// second before the kill, once `tapedeck recover` has run. Uses the paced `jacktap` device.
final class RecordKillTests: XCTestCase {
    func testTakeKilledWithSIGKILLKeepsEverythingUpToOneSecondBeforeTheKill() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let jack = try JackServer.start(self, folder: dir.path)
        let input = RecordSupport.signal(frames: 48_000 * 12, channels: 1, bits: 16, seed: 7)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let take = dir.path + "/take.wav"
        let stdoutPath = dir.path + "/stdout.jsonl"
        let child = try SpawnedChild([Tapedeck.binary, "record", "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                      "--bits", "16", "--out", take, "--json"],
                                     environment: jack.environment,
                                     stdoutPath: stdoutPath)
        var reaped = false
        defer { if !reaped { _ = child.kill(SIGKILL) } }

        // (seen at, frames recorded) for every status line, as the test sees them arrive.
        var seen: [(Date, Int)] = []
        func poll() {
            let text = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            let lines = RecordSupport.jsonLines(text).filter { $0["event"] as? String == "status" }
            for line in lines.dropFirst(seen.count) { seen.append((Date(), line["frames"] as? Int ?? 0)) }
        }
        let startDeadline = Date().addingTimeInterval(20)
        while (seen.last?.1 ?? 0) == 0 && Date() < startDeadline { poll(); usleep(20_000) }
        guard (seen.last?.1 ?? 0) > 0 else { return XCTFail("recording never started") }
        let killAt = Date().addingTimeInterval(Double.random(in: 2...5))
        while Date() < killAt { poll(); usleep(20_000) }
        poll()
        let killedAt = Date()
        let exitStatus = child.kill(SIGKILL)
        reaped = exitStatus != nil
        XCTAssertEqual(exitStatus.map { $0 & 0x7f }, SIGKILL, "killed by SIGKILL, not finished")
        // Frames the program had recorded one second before the kill (a lower bound).
        let promised = seen.last { $0.0 <= killedAt.addingTimeInterval(-1) }?.1 ?? 0
        XCTAssertGreaterThan(promised, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: take + ".recording"), "the take is marked as unfinished")

        let r = try Tapedeck.run(["recover", take])
        XCTAssertEqual(r.status, 0, r.stderr)
        let got = try RecordSupport.readInts(take, bits: 16)
        XCTAssertGreaterThanOrEqual(got.frames, promised)
        XCTAssertTrue(got.values == Array(input[0..<got.frames]), "every recovered frame equals the input")
        XCTAssertFalse(FileManager.default.fileExists(atPath: take + ".recording"))
    }

    func testStalledAudioThreadCountsTheXrunAndKeepsTheTakeAsLongAsItsSpan() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let jack = try JackServer.start(self, folder: dir.path)
        let input = RecordSupport.signal(frames: 48_000 * 6, channels: 1, bits: 16, seed: 3)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let take = dir.path + "/take.wav"
        var env = jack.environment
        env["TAPEDECK_TEST_STALL"] = "48000:400"
        let r = try Tapedeck.run(["record", "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16", "--bits", "16",
                                  "--duration", "3", "--out", take, "--json"], environment: env, timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = RecordSupport.jsonLines(r.stdout)
        let xruns = lines.filter { $0["event"] as? String == "xrun" }
        XCTAssertGreaterThanOrEqual(xruns.count, 1, "a 400 ms stall on a paced device overruns")
        let done = try XCTUnwrap(lines.last)
        XCTAssertEqual(done["xruns"] as? Int, xruns.count)
        XCTAssertEqual(done["frames"] as? Int, 144_000)
        let got = try RecordSupport.readInts(take, bits: 16)
        XCTAssertEqual(got.frames, 144_000, "the take spans exactly the recorded time")
        for x in xruns {
            let frame = try XCTUnwrap(x["frame"] as? Int), lost = try XCTUnwrap(x["lost_frames"] as? Int)
            XCTAssertGreaterThan(lost, 0)
            XCTAssertLessThan(lost, 96_000)
            let end = min(frame + lost, got.frames)
            XCTAssertTrue(got.values[frame..<end].allSatisfy { $0 == 0 }, "the lost span is silence")
        }
        if let first = xruns.first?["frame"] as? Int, first <= got.frames {
            XCTAssertTrue(Array(got.values[0..<first]) == Array(input[0..<first]), "audio before the xrun is the input")
        }
    }
}
