import Foundation
import XCTest

/// The crash-safety promise: a take killed with SIGKILL keeps all audio up to at most one
/// second before the kill, once `tapedeck recover` has run. Uses the paced `jacktap` device.
final class RecordKillTests: XCTestCase {
    func testTakeKilledWithSIGKILLKeepsEverythingUpToOneSecondBeforeTheKill() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") else { throw XCTSkip("jackd2 is not installed") }
        let dir = try Tapedeck.temporaryFolder(self)
        let server = "tdkill-\(getpid())-\(UUID().uuidString.prefix(6))"
        let script = Tapedeck.packageRoot.appendingPathComponent("Tests/Fixtures/jack-dummy.sh").path
        let pidFile = dir.path + "/jack.pid"
        let starter = try SpawnedChild(["/bin/bash", script, "start", server], environment: [:], stdoutPath: pidFile)
        guard let status = starter.wait(timeoutSeconds: 30), status == 0,
              let jackPID = Int32(((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) else {
            _ = starter.kill(SIGKILL)
            throw XCTSkip("the private JACK server did not start (see /tmp/jackd-\(server).log)")
        }
        defer {
            kill(jackPID, SIGTERM)
            for _ in 0..<200 where kill(jackPID, 0) == 0 { usleep(10_000) }
            if kill(jackPID, 0) == 0 { kill(jackPID, SIGKILL) }
        }

        let input = RecordSupport.signal(frames: 48_000 * 12, channels: 1, bits: 16, seed: 7)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let take = dir.path + "/take.wav"
        let stdoutPath = dir.path + "/stdout.jsonl"
        let child = try SpawnedChild([Tapedeck.binary, "record", "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                      "--bits", "16", "--out", take, "--json"],
                                     environment: RecordSupport.environment.merging(["JACK_DEFAULT_SERVER": server, "JACK_NO_START_SERVER": "1"]) { $1 },
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
}
