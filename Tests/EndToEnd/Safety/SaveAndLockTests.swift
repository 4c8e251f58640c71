import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Saves that leave a whole session at every instant, and one writer per session (issue 13).
final class SaveAndLockTests: XCTestCase {
    func testAKillAtTheRenameLeavesTheOldOrTheNewSessionAndItStillOpens() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        for (point, expected) in [("save-rename", "(no effects)"), ("save-renamed", "gain:gain=-2")] {
            let r = try Tapedeck.run(["chain", folder.path, "1", "gain:-2"], environment: ["TAPEDECK_TEST_KILL_AT": point])
            XCTAssertEqual(r.status, SIGKILL, "killed at \(point)")
            let shown = try Tapedeck.run(["chain", folder.path, "1"])
            XCTAssertEqual(shown.status, 0, shown.stderr)
            XCTAssertEqual(shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines), expected, point)
            XCTAssertEqual(try Tapedeck.run(["chain", folder.path, "1", ""]).status, 0)
        }
    }

    func testAMissingSessionFileOpensTheBackupSayingSoAndNothingOpensEmptyOverIt() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        XCTAssertEqual(try Tapedeck.run(["chain", folder.path, "1", "gain:-1"]).status, 0)
        unlink(folder.sessionFile)
        let info = try Tapedeck.run(["info", folder.path])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stderr.contains("session.json.bak"), info.stderr)
        XCTAssertTrue(info.stdout.contains("tone"), "the backup holds the imported track")
        unlink(folder.backupFile)
        for args in [["info", folder.path], [folder.path], ["new", folder.path]] {
            let r = try Tapedeck.run(args)
            XCTAssertEqual(r.status, 65, "\(args): \(r.stderr)")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.audioFolder + "/tone.wav"), "the audio is still there")
    }

    func testWhileTheScreenHoldsTheSessionAWriterIsRefusedNamingItAndReadersWork() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let screen = try ScreenTmux(self, folder: dir, args: [folder.path, "--device", "offline"])
        screen.waitFor("the screen") { $0.contains("tone") }
        let started = Date()
        let chain = try Tapedeck.run(["chain", folder.path, "1", "gain:-3"])
        Safety.assertRefused(chain, status: 65, mentions: ["in use by pid", "s.tapedeck --device offline"])
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 2.5, "it waited for the holder first")
        XCTAssertEqual(try Tapedeck.run(["info", folder.path]).status, 0, "info reads while the screen holds the lock")
        XCTAssertEqual(try Tapedeck.run(["export", folder.path, "-o", dir + "/x.wav"]).status, 0, "so does export")
        XCTAssertEqual(try Tapedeck.run(["chain", folder.path, "1"]).status, 0, "and showing a chain")
        screen.send("q")
        screen.waitFor("the screen to quit") { _ in !screen.isRunning }
        XCTAssertEqual(try Tapedeck.run(["chain", folder.path, "1", "gain:-3"]).status, 0, "free again once it quits")
    }

    func testAScreenThatCreatedItsSessionHoldsTheLockFromItsFirstSave() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let fresh = SessionFolder(path: dir + "/fresh.tapedeck")
        try Signals.write([Signals.sine(hertz: 220, amplitude: 0.5, frames: 48000)], to: dir + "/bass.wav", encoding: .int16)
        let screen = try ScreenTmux(self, folder: dir, args: [fresh.path, "--device", "offline"])
        screen.waitFor("No tracks", timeout: 15)
        screen.send("C-s")
        screen.waitFor("saved ")
        let refused = try Tapedeck.run(["import", fresh.path, dir + "/bass.wav"])
        Safety.assertRefused(refused, status: 65, mentions: ["in use by pid", "fresh.tapedeck --device offline"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: fresh.audioFolder + "/bass.wav"), "a refused import writes no audio")
        screen.send("C-s")
        screen.waitFor("the second save") { $0.contains("saved ") }
        screen.send("q")
        screen.waitFor("the screen to quit") { _ in !screen.isRunning }
        let imported = try Tapedeck.run(["import", fresh.path, dir + "/bass.wav"])
        XCTAssertEqual(imported.status, 0, "free once the screen quits: \(imported.stderr)")
        let info = try Tapedeck.run(["info", fresh.path])
        XCTAssertTrue(info.stdout.contains("bass"), "the import is in the session: \(info.stdout)")
    }
}
