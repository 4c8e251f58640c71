import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Command-line edits while the screen holds the session open (issue 28): handed to the
/// screen, which shows them at once, names who asked, and undoes them with u; and the
/// session folder's own history for `tapedeck undo` and `redo` when no screen runs.
final class CommandLineOwnerTests: XCTestCase {
    private func runtime(_ dir: URL) throws -> [String: String] {
        let run = dir.path + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        return ["XDG_RUNTIME_DIR": run]
    }

    private func gain(_ session: String, track: Int) throws -> Double {
        try SessionFolder(path: session).load().tracks[track].gainDecibels
    }

    func testEditsFromTheCommandLineReachTheOpenScreenAndUndoThere() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let env = try runtime(dir)
        let session = dir.path + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        for _ in 0..<2 { XCTAssertEqual(try Tapedeck.run(["track", session, "add"]).status, 0) }
        let screen = try ScreenTmux(self, folder: dir.path, args: [session, "--device", "offline"], environment: env, width: 120)
        screen.waitFor("Track 2")
        // From another folder, the session named by a relative path, as a scripter types it.
        let elsewhere = dir.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)

        let gainSet = try Tapedeck.run(["track", "../s.tapedeck", "1", "--gain", "-6"], environment: env, currentDirectory: elsewhere)
        XCTAssertEqual(gainSet.status, 0, gainSet.stderr)
        XCTAssertTrue(gainSet.stdout.contains("fader -6.0 dB"), gainSet.stdout)
        // At once: drawn within a second of the command's answer (the edit is made before it answers).
        var text = screen.waitFor("-6.0dB", timeout: 1)
        XCTAssertTrue(text.contains("tapedeck track (pid "), text)
        XCTAssertEqual(try gain(session, track: 0), -6, accuracy: 1e-9, "saved as the command's own run saves")

        // u on the screen undoes it, by the command's name.
        screen.send("u")
        text = screen.waitFor("undid: track 1 --gain -6, asked by tapedeck track")
        XCTAssertFalse(text.contains("-6.0dB"), text)

        let marker = try Tapedeck.run(["marker", "../s.tapedeck", "add", "0:03", "Bridge"], environment: env, currentDirectory: elsewhere)
        XCTAssertEqual(marker.stdout, "marker Bridge at 00:03.000\n", marker.stderr)
        screen.waitFor("▼Bridge", timeout: 1)

        // A file named relative to the asker's folder is found (the owner works elsewhere).
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 48000)], to: elsewhere + "/tone.wav")
        let imported = try Tapedeck.run(["import", "../s.tapedeck", "tone.wav", "--track", "2", "--at", "0:01"],
                                        environment: env, currentDirectory: elsewhere)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(try SessionFolder(path: session).load().tracks[1].regions.count, 1)

        // undo and redo from the command line are the screen's own.
        let undo = try Tapedeck.run(["undo", session], environment: env)
        XCTAssertEqual(undo.status, 0, undo.stderr)
        XCTAssertTrue(undo.stdout.hasPrefix("undid: import"), undo.stdout)
        XCTAssertEqual(try SessionFolder(path: session).load().tracks[1].regions.count, 0)
        XCTAssertEqual(try Tapedeck.run(["redo", session], environment: env).status, 0)
        XCTAssertEqual(try SessionFolder(path: session).load().tracks[1].regions.count, 1)

        // A sample a chain names relative to the asker's folder is found there too.
        XCTAssertEqual(try Tapedeck.run(["track", session, "add", "Drums", "--midi"], environment: env).status, 0)
        try Signals.write([Signals.sine(hertz: 60, amplitude: 0.5, frames: 9600)], to: elsewhere + "/kick.wav")
        let chain = try Tapedeck.run(["chain", "../s.tapedeck", "Drums", "sampler:file=kick.wav"], environment: env, currentDirectory: elsewhere)
        XCTAssertEqual(chain.status, 0, chain.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: session + "/samples/kick.wav"), "copied in from the asker's folder")

        // A refusal is the command's own line and status, and the screen says it too.
        let refused = try Tapedeck.run(["marker", session, "move", "Nope", "1"], environment: env)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.hasPrefix("tapedeck: ") && refused.stderr.contains("Nope"), refused.stderr)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        screen.waitFor("tapedeck marker (pid ")

        // Recording is not handed over: a take is its own process's; it is refused, naming the holder.
        let record = try Tapedeck.run(["record", session, "--device", "offline", "--duration", "1"], environment: env)
        XCTAssertNotEqual(record.status, 0)
        XCTAssertTrue(record.stderr.contains("in use by pid"), record.stderr)

        // The screen's session on quitting is what the edits made: the marker and the import.
        let final = try SessionFolder(path: session).load()
        XCTAssertEqual(final.markers.map(\.name), ["Bridge"])
    }

    /// One mistake, one answer (issue 40, item 5): an argument longer than the control
    /// socket's line (64 KB) is handed to the screen in a file of its own, so the screen's run
    /// of the command refuses it exactly as the command alone does — the same line, the same
    /// status — and a long argument that is fine goes through.
    func testAnArgumentOverALineGetsTheSameAnswerWithTheScreenOpenOrNot() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let env = try runtime(dir)
        let session = dir.path + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "add"]).status, 0)
        let long = String(repeating: "x", count: 70_000)
        let cases = [["marker", session, "add", "1:00", long], ["track", session, "1", "--name", long]]
        let alone = try cases.map { try Tapedeck.run($0, environment: env) }
        for r in alone {
            XCTAssertNotEqual(r.status, 0)
            XCTAssertTrue(r.stderr.contains("at most 1000"), r.stderr)
        }
        let screen = try ScreenTmux(self, folder: dir.path, args: [session, "--device", "offline"], environment: env, width: 120)
        screen.waitFor("Track 1")
        for (args, before) in zip(cases, alone) {
            let handed = try Tapedeck.run(args, environment: env)
            XCTAssertEqual(handed.status, before.status, "\(args[0]): \(handed.stderr)")
            XCTAssertEqual(handed.stderr, before.stderr, "\(args[0]): the same line with the screen open")
        }
        // A long argument that is fine (a chain of 65,406 characters, padded) reaches the
        // screen whole, in a file, and is answered.
        let chain = "gain:-3" + String(repeating: " ", count: 65_400)
        let set = try Tapedeck.run(["chain", session, "1", chain], environment: env)
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertEqual(set.stdout, "track 1 (Track 1) playback chain: gain:gain=-3\n")
        screen.waitFor("gain")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: env["XDG_RUNTIME_DIR"]! + "/tapedeck").filter { $0.contains(".cli-") }
        XCTAssertEqual(leftovers, [], "the hand-over files are gone")
    }

    /// Without a screen, the folder keeps one step per save: undo reverts the last command's
    /// change, redo brings it back, a new change drops redo; the steps cost no copy.
    func testTheFolderKeepsTheHistoryForUndoAndRedo() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let session = dir.path + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "add"]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["marker", session, "add", "1:00", "Verse"]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "1", "--gain", "-3"]).status, 0)
        // Saving what is there already is no step.
        XCTAssertEqual(try Tapedeck.run(["track", session, "1", "--gain", "-3"]).status, 0)

        let list = try Tapedeck.run(["undo", session, "--list"])
        XCTAssertEqual(list.stdout, "  undo 1  track 1 --gain -3\n  undo 2  marker add 1:00 Verse\n  undo 3  track add\n", list.stderr)

        XCTAssertEqual(try Tapedeck.run(["undo", session]).stdout, "undid: track 1 --gain -3\n")
        XCTAssertEqual(try gain(session, track: 0), 0, accuracy: 1e-9)
        XCTAssertEqual(try Tapedeck.run(["undo", session]).stdout, "undid: marker add 1:00 Verse\n")
        XCTAssertTrue(try SessionFolder(path: session).load().markers.isEmpty)
        XCTAssertEqual(try Tapedeck.run(["redo", session]).stdout, "redid: marker add 1:00 Verse\n")
        XCTAssertEqual(try SessionFolder(path: session).load().markers.map(\.name), ["Verse"])
        // A new change drops what redo would have brought back.
        XCTAssertEqual(try Tapedeck.run(["marker", session, "add", "2:00", "Out"]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["redo", session]).stdout, "nothing to redo\n")
        for _ in 0..<3 { XCTAssertEqual(try Tapedeck.run(["undo", session]).status, 0) }
        XCTAssertEqual(try Tapedeck.run(["undo", session]).stdout, "nothing to undo\n")
        XCTAssertEqual(try SessionFolder(path: session).load().tracks.count, 0, "back to the new session")

        // Each kept step is a second name for a session file, not a copy.
        let history = session + "/history"
        let steps = try FileManager.default.contentsOfDirectory(atPath: history).filter { $0 != "index.json" }
        XCTAssertFalse(steps.isEmpty)
        // A damaged index is rebuilt from these steps: see HistoryTests.
    }

    /// A region named by its id stays that region through a split that renumbers the listing.
    func testARegionsIdOutlivesTheEditsAroundIt() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let session = dir.path + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "add"]).status, 0)
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 192_000)], to: dir.path + "/tone.wav")
        XCTAssertEqual(try Tapedeck.run(["import", session, dir.path + "/tone.wav", "--track", "1", "--at", "2"]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", session, dir.path + "/tone.wav", "--track", "1", "--at", "10"]).status, 0)
        let listing = try Tapedeck.run(["region", session, "1"]).stdout
        XCTAssertTrue(listing.contains("  1  #1  ") && listing.contains("  2  #2  "), listing)
        // Split the first: the listing's numbers shift, the ids do not.
        let split = try Tapedeck.run(["region", session, "1", "#1", "split", "3"])
        XCTAssertEqual(split.status, 0, split.stderr)
        let after = try Tapedeck.run(["region", session, "1"]).stdout
        XCTAssertTrue(after.contains("  3  #2  00:10.000"), "the second import is still #2, now third:\n\(after)")
        XCTAssertTrue(after.contains("  2  #3  00:03.000"), "the right half is new:\n\(after)")
        let gain = try Tapedeck.run(["region", session, "1", "#2", "gain", "-3"])
        XCTAssertTrue(gain.stdout.hasPrefix("region 3 #2 of track 1: 00:10.000"), gain.stdout + gain.stderr)
        let missing = try Tapedeck.run(["region", session, "1", "#99", "delete"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("no region #99"), missing.stderr)
    }

    /// A hand-made typed command on the open screen's control socket (`ctl cmd {…}`) whose
    /// value the command line never gives is refused in one line, and the screen runs on: it
    /// trapped, its session and any take in it gone, on a region number of -5.
    func testAHandMadeTypedCommandTheParserNeverGivesIsRefusedAndTheScreenRunsOn() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let env = try runtime(dir)
        let session = dir.path + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "add"]).status, 0)
        let screen = try ScreenTmux(self, folder: dir.path, args: [session, "--device", "offline"], environment: env, width: 120)
        screen.waitFor("Track 1")
        let pid = try XCTUnwrap(screen.panePID)
        let value = "{\"folder\":\"\(session)\",\"trackText\":\"1\",\"number\":-5,\"edit\":{\"duplicate\":{}}}"
        let line = "{\"command\":\"region\",\"cwd\":\"\(dir.path)\",\"label\":\"region 1 -5 duplicate\",\"value\":\(value)}"
        let r = try Tapedeck.run(["ctl", "--pid", "\(pid)", "cmd", line], environment: env)
        XCTAssertTrue(r.stdout.contains("region: number -5 is below 1"), r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("\"status\":64"), r.stdout)
        XCTAssertEqual(r.status, 64, "ctl exits with the handed command's status: refused as a usage error")
        screen.waitFor("number -5 is below 1")
        XCTAssertEqual(kill(pid, 0), 0, "the screen runs on")
        let status = try Tapedeck.run(["ctl", "--pid", "\(pid)", "status"], environment: env)
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("\"front_end\":\"screen\""), status.stdout)
    }
}
