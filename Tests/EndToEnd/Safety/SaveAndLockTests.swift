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

    /// The screen is the session's one writer while it runs: an edit from the command line is
    /// handed to it (made, shown and saved by it), a recording is refused naming it, readers read.
    func testWhileTheScreenHoldsTheSessionItIsTheOneWriterAndReadersWork() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let run = dir + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let env = ["XDG_RUNTIME_DIR": run]
        let screen = try ScreenTmux(self, folder: dir, args: [folder.path, "--device", "offline"], environment: env)
        screen.waitFor("the screen") { $0.contains("tone") }
        let started = Date()
        let chain = try Tapedeck.run(["chain", folder.path, "1", "gain:-3"], environment: env)
        XCTAssertEqual(chain.status, 0, chain.stderr)
        // Status 0 already says it was handed over (waiting for the screen's lock ends in a
        // refusal); the bound is ten times the 0.3–0.5 s it takes.
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "handed over at once, not after waiting for the holder")
        screen.waitFor("tapedeck chain (pid ")
        XCTAssertEqual(try folder.load().tracks[0].playbackChain, "gain:gain=-3", "saved by the screen")
        let record = try Tapedeck.run(["record", folder.path, "--device", "offline", "--duration", "1"], environment: env)
        Safety.assertRefused(record, status: 65, mentions: ["in use by pid", "s.tapedeck --device offline"])
        XCTAssertEqual(try Tapedeck.run(["info", folder.path]).status, 0, "info reads while the screen holds the lock")
        XCTAssertEqual(try Tapedeck.run(["export", folder.path, "-o", dir + "/x.wav"]).status, 0, "so does export")
        XCTAssertEqual(try Tapedeck.run(["chain", folder.path, "1"]).status, 0, "and showing a chain")
        screen.send("q")
        screen.waitFor("the screen to quit") { _ in !screen.isRunning }
        XCTAssertEqual(try Tapedeck.run(["chain", folder.path, "1", "gain:-6"]).status, 0, "free again once it quits")
    }

    func testAScreenThatCreatedItsSessionHoldsTheLockFromItsFirstSave() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let fresh = SessionFolder(path: dir + "/fresh.tapedeck")
        try Signals.write([Signals.sine(hertz: 220, amplitude: 0.5, frames: 48000)], to: dir + "/bass.wav", encoding: .int16)
        let run = dir + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let env = ["XDG_RUNTIME_DIR": run]
        let screen = try ScreenTmux(self, folder: dir, args: [fresh.path, "--device", "offline"], environment: env)
        screen.waitFor("No tracks", timeout: 15)
        screen.send("C-s")
        screen.waitFor("saved ")
        // Held from the first save: a recording is refused naming the screen, an import is
        // handed to it (the screen made it, so the screen holds the lock).
        let record = try Tapedeck.run(["record", fresh.path, "--device", "offline", "--duration", "1"], environment: env)
        Safety.assertRefused(record, status: 65, mentions: ["in use by pid", "fresh.tapedeck --device offline"])
        let imported = try Tapedeck.run(["import", fresh.path, dir + "/bass.wav"], environment: env)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        screen.waitFor("tapedeck import (pid ")
        screen.send("q")
        screen.waitFor("the screen to quit") { _ in !screen.isRunning }
        let info = try Tapedeck.run(["info", fresh.path])
        XCTAssertTrue(info.stdout.contains("bass"), "the import is in the session: \(info.stdout)")
    }
}
