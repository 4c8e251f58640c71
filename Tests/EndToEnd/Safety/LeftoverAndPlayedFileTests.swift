import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Nothing a session plays is written over by an export, and what a killed or refused
/// command leaves never blocks the next one (issue 24, items 3 and 8).
final class LeftoverAndPlayedFileTests: XCTestCase {
    /// A session `dir/s` with a tone on track 1 and a MIDI track whose sampler plays
    /// `samples/drums.wav` (copied in when the chain was set).
    private func samplerSession(_ dir: String) throws -> SessionFolder {
        let folder = try Safety.session(in: dir)
        try Signals.write([Signals.sine(hertz: 110, amplitude: 0.4, frames: 4800)], to: dir + "/drums.wav", encoding: .int16)
        XCTAssertEqual(try Tapedeck.run(["track", folder.path, "add", "Keys", "--midi"]).status, 0)
        let chain = try Tapedeck.run(["chain", folder.path, "keys", "sampler:file=\(dir)/drums.wav"])
        XCTAssertEqual(chain.status, 0, chain.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.path + "/samples/drums.wav"), chain.stdout)
        return folder
    }

    func testNoExportSpellingOfAPlayedSampleReplacesIt() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try samplerSession(dir)
        let sample = folder.path + "/samples/drums.wav"
        let before = FileManager.default.contents(atPath: sample)
        symlink(folder.path + "/samples", dir + "/link")
        mkdir(folder.pluginStateFolder, 0o755)
        let attempts: [[String]] = [
            ["-o", sample],
            ["-o", folder.path + "/audio/../samples/drums.wav"],
            ["-o", dir + "/link/drums.wav"],
            ["-o", sample, "--normalize", "-16LUFS"],
            ["-o", dir + "/mix.wav", "--stems", folder.path + "/samples"],
            ["-o", dir + "/mix.wav", "--stems", dir + "/link"],
            ["-o", folder.path + "/plugins/x.wav"],
        ]
        for extra in attempts {
            let r = try Tapedeck.run(["export", folder.path] + extra)
            Safety.assertRefused(r, status: 64, mentions: ["export:"])
            XCTAssertEqual(FileManager.default.contents(atPath: sample), before, "\(extra) left the sample as it was")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/mix.wav"), "a refused export writes no mix")
        let fine = try Tapedeck.run(["export", folder.path, "-o", dir + "/mix.wav", "--stems", dir + "/stems"])
        XCTAssertEqual(fine.status, 0, "stems elsewhere still work: \(fine.stderr)")
        let frozen = try Tapedeck.run(["track", folder.path, "1", "--freeze"])
        XCTAssertEqual(frozen.status, 0, frozen.stderr)
        XCTAssertEqual(FileManager.default.contents(atPath: sample), before, "a freeze leaves the sample as it was")
    }

    func testAKilledNormalizedExportLeavesNothingThatBlocksTheRerunOrStays() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let args = ["export", folder.path, "-o", dir + "/x.flac", "--normalize", "-16LUFS"]
        let killed = try Tapedeck.run(args, environment: ["TAPEDECK_TEST_KILL_AT": "normalize-partial"])
        XCTAssertEqual(killed.status, SIGKILL)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertTrue(left.contains("x.flac.partial") && left.contains { $0.hasPrefix(".x.flac.normalize-") }, "the kill left its files: \(left)")
        let rerun = try Tapedeck.run(args)
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        let after = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertTrue(after.contains("x.flac"), "\(after)")
        XCTAssertEqual(after.filter { $0.hasPrefix(".x.flac") || $0.hasSuffix(".partial") }, [], "nothing hidden or partial remains")
    }

    func testAKilledDemoLeavesNothingThatStays() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let samples = Tapedeck.packageRoot.appendingPathComponent("Samples").path
        let killed = try Tapedeck.run(["demo", dir + "/d.tapedeck", "--samples", samples], environment: ["TAPEDECK_TEST_KILL_AT": "demo-staged"])
        XCTAssertEqual(killed.status, SIGKILL)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: dir).contains { $0.hasPrefix(".d.tapedeck.partial-") })
        let rerun = try Tapedeck.run(["demo", dir + "/d.tapedeck", "--samples", samples])
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        let after = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertEqual(after.filter { $0.hasPrefix(".") }, [], "the killed run's staging folder is gone")
        XCTAssertTrue(after.contains("d.tapedeck"))
    }

    func testAMIDIImportRefusedForTooManyTracksWritesNothing() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let trackCount = SessionLimits.maximumTracks + 2_000
        // Format 1, one note on each track.
        let track: [UInt8] = Array("MTrk".utf8) + [0, 0, 0, 12, 0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0, 0x00, 0xFF, 0x2F, 0x00]
        var bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 1, UInt8(trackCount >> 8), UInt8(trackCount & 0xFF), 0, 96]
        for _ in 0..<trackCount { bytes += track }
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/many.mid"))
        let midiBefore = (try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/midi")) ?? []
        let sessionBefore = Safety.sessionBytes(folder)
        let r = try Tapedeck.run(["import", folder.path, dir + "/many.mid"])
        Safety.assertRefused(r, status: 64, mentions: ["\(SessionLimits.maximumTracks)"])
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/midi")) ?? [], midiBefore, "midi/ is as it was")
        XCTAssertEqual(Safety.sessionBytes(folder), sessionBefore)
    }
}
