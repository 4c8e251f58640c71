import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// SIGKILL at random moments during record, save, import and export: afterwards the session
/// always opens, is the old or the new one, a killed take is recovered exactly where it was
/// recorded, and nothing that looks finished is half-written (issue 13).
///
/// `make test` runs 10 kills of each kind; `make fuzz` sets `TAPEDECK_KILL_TRIALS=50`.
final class KillMatrixTests: XCTestCase {
    private var trials: Int { Int(ProcessInfo.processInfo.environment["TAPEDECK_KILL_TRIALS"] ?? "") ?? 10 }
    private var rng = SystemRandomNumberGenerator()

    /// Runs `args`, kills it with SIGKILL after a random `0..<maxDelay` seconds (it may have
    /// finished by then), and reaps it.
    private func killSomewhere(_ args: [String], maxDelay: Double, environment: [String: String] = [:]) throws {
        let child = try SpawnedChild([Tapedeck.binary] + args, environment: environment)
        usleep(UInt32(Double.random(in: 0..<maxDelay, using: &rng) * 1e6))
        XCTAssertNotNil(child.kill(SIGKILL), "reaped")
    }

    func testAKilledTakeIsRecoveredAtItsRecordPointWithEveryFrameItWrote() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let input = RecordSupport.signal(frames: 48000 * 40, channels: 1, bits: 16, seed: 5)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        var recovered = 0
        for trial in 0..<trials {
            let folder = SessionFolder(path: dir + "/r\(trial)")
            XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
            try killSomewhere(["record", folder.path, "--device", "filetap:IN=\(dir)/in.raw", "--device-format", "s16", "--bits", "16",
                               "--at", "2", "--duration", "30"], maxDelay: 0.6, environment: RecordSupport.environment)
            let r = try Tapedeck.run(["recover", folder.path])
            XCTAssertEqual(r.status, 0, r.stderr)
            let session = try folder.load()
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).filter { $0.hasSuffix(".recording") }
            XCTAssertEqual(leftovers, [], "every marker is resolved")
            guard let region = session.tracks.first?.regions.first else { continue }  // killed before the first frame
            recovered += 1
            XCTAssertEqual(region.timelineStartFrame, 96000, "placed at --at 2, as a clean stop would")
            let got = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16)
            XCTAssertEqual(Int64(got.frames), region.lengthFrames)
            XCTAssertTrue(got.values == Array(input[0..<got.frames]), "the recovered audio is exactly what was recorded")
        }
        XCTAssertGreaterThan(recovered, 0, "some kills landed while recording")
    }

    func testAKilledSaveLeavesTheOldOrTheNewSession() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        var previous = "(no effects)"
        for trial in 0..<trials {
            let next = "gain:gain=-\(trial + 1)"
            try killSomewhere(["chain", folder.path, "1", next], maxDelay: 0.12)
            let shown = try Tapedeck.run(["chain", folder.path, "1"])
            XCTAssertEqual(shown.status, 0, "the session opens: \(shown.stderr)")
            let now = shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertTrue(now == previous || now == next, "'\(now)' is neither the old '\(previous)' nor the new '\(next)'")
            previous = now
        }
    }

    func testAKilledImportLeavesNoHalfFileUnderAFinishedName() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        try Signals.write([Signals.sine(hertz: 220, amplitude: 0.5, frames: 48000 * 4), Signals.sine(hertz: 330, amplitude: 0.5, frames: 48000 * 4)],
                          to: dir + "/big.wav", encoding: .int24)
        for _ in 0..<trials {
            let before = try folder.load().tracks.count
            try killSomewhere(["import", folder.path, dir + "/big.wav"], maxDelay: 0.3)
            let session = try folder.load()
            XCTAssertTrue([before, before + 1].contains(session.tracks.count))
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder) where name.hasSuffix(".wav") {
                let frames = try AudioFileReader(path: folder.audioFolder + "/" + name).frameCount
                XCTAssertEqual(frames, name.hasPrefix("tone") ? 48000 : 48000 * 4, "\(name) is complete")
            }
        }
    }

    func testAKilledExportLeavesNoHalfFileUnderItsName() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        XCTAssertEqual(try Tapedeck.run(["import", folder.path, dir + "/tone.wav", "--at", "20"]).status, 0)
        for trial in 0..<trials {
            let out = dir + "/mix-\(trial).flac"
            try killSomewhere(["export", folder.path, "-o", out], maxDelay: 0.4)
            if FileManager.default.fileExists(atPath: out) {
                XCTAssertEqual(try AudioFileReader(path: out).frameCount, 21 * 48000, "a file under its name is complete")
                XCTAssertEqual(try Safety.samples(out)[0].count, 21 * 48000)
            }
        }
    }
}
