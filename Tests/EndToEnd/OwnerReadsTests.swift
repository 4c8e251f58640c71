import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Read commands while the screen holds the session open (issue 42, item 2): `info`, `tempo
/// list`, `chain`, `automation`, `undo --list`, `takes` and `marker` answer from the screen's
/// session as it stands, unsaved edits included, in the words, JSON and status they give on
/// the saved file; a screen that does not answer is not waited on for ever.
final class OwnerReadsTests: XCTestCase {
    private func runtime(_ dir: URL) throws -> [String: String] {
        let run = dir.path + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        return ["XDG_RUNTIME_DIR": run]
    }

    /// A session with one track holding a stack of two takes (group 1: takes 1 and 2, the
    /// newest playing).
    private func makeSession(_ dir: URL) throws -> String {
        let session = dir.path + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "add"]).status, 0)
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 48000)], to: dir.path + "/tone.wav")
        for _ in 0..<2 {
            let imported = try Tapedeck.run(["import", session, dir.path + "/tone.wav", "--track", "1", "--at", "0:01"])
            XCTAssertEqual(imported.status, 0, imported.stderr)
        }
        let folder = SessionFolder(path: session)
        var s = try folder.load()
        for i in 0..<2 {
            s.tracks[0].regions[i].takeGroup = 1
            s.tracks[0].regions[i].takeNumber = i + 1
        }
        try folder.save(s)
        return session
    }

    /// The reads this test compares, each as a command line.
    private func reads(_ session: String) -> [[String]] {
        [["info", session], ["info", session, "--json"], ["tempo", session, "list"], ["marker", session],
         ["chain", session, "1"], ["automation", session, "1"], ["automation", session, "1", "gain", "list"],
         ["takes", session, "1"],
         // Mistakes: the same line and status whoever answers.
         ["takes", session, "9"], ["chain", session, "Nobody"], ["automation", session, "1", "nonsense", "list"]]
    }

    private func answers(_ session: String, _ env: [String: String]) throws -> [Tapedeck.Result] {
        try reads(session).map { try Tapedeck.run($0, environment: env, timeout: 300) }
    }

    /// Edits the screen has taken and then undone (not saved: the file still has them), and a
    /// mute it has not saved: every read with the screen open shows the screen's state, not
    /// the file's; once the screen saves that state and quits, the same reads on the file
    /// give the very same text, JSON, errors and statuses.
    func testReadsWithTheScreenOpenAnswerFromItsUnsavedSession() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let env = try runtime(dir)
        let session = try makeSession(dir)
        let before = try answers(session, [:])
        XCTAssertEqual(before[0].status, 0, before[0].stderr)
        XCTAssertFalse(before[0].stdout.contains("muted"), before[0].stdout)
        XCTAssertTrue(before[7].stdout.contains("▶ take 1.2"), before[7].stdout)
        for mistake in before[8...] {
            XCTAssertNotEqual(mistake.status, 0, mistake.stdout)
            XCTAssertEqual(mistake.stderr.split(separator: "\n").count, 1, mistake.stderr)
        }

        let screen = try ScreenTmux(self, folder: dir.path, args: [session, "--device", "offline"], environment: env, width: 120)
        screen.waitFor("Track 1")
        // Edits handed to the screen are saved as they are made...
        let edits: [[String]] = [["tempo", session, "add", "2", "90"], ["marker", session, "add", "0:03", "Bridge"],
                                 ["chain", session, "1", "gain:-3"], ["automation", session, "1", "gain", "add", "0:01", "-6"],
                                 ["takes", session, "1", "--choose", "1.1"]]
        for edit in edits {
            let r = try Tapedeck.run(edit, environment: env, timeout: 300)
            XCTAssertEqual(r.status, 0, "\(edit[0]): \(r.stderr)")
        }
        // ...and u on the screen takes them back without saving.
        for verb in ["takes", "automation", "chain", "marker", "tempo"] {
            screen.send("u")
            screen.waitFor("undid: \(verb)", timeout: 30)
        }
        screen.send("m")
        let file = try SessionFolder(path: session).load()
        XCTAssertEqual(file.markers.map(\.name), ["Bridge"], "the file still has the undone edits")
        XCTAssertEqual(file.tracks[0].playbackChain.isEmpty, false)
        XCTAssertFalse(file.tracks[0].mute, "and not the mute")

        // The mute is a key: wait until the screen has taken it (the read asks the screen).
        let deadline = Date().addingTimeInterval(60)
        var info = try Tapedeck.run(["info", session], environment: env, timeout: 300)
        while !info.stdout.contains("muted") && Date() < deadline {
            usleep(200_000)
            info = try Tapedeck.run(["info", session], environment: env, timeout: 300)
        }
        XCTAssertTrue(info.stdout.contains("muted"), "info shows the screen's unsaved mute:\n\(info.stdout)\(info.stderr)")
        // A read leaves the screen's message line alone (an edit is said there).
        XCTAssertFalse(screen.capture().contains("tapedeck info (pid"), screen.capture())
        let open = try answers(session, env)
        for (i, (read, answer)) in zip(reads(session), open).enumerated() where i != 0 && i != 1 {
            // Everything but the mute is as before the undone edits.
            XCTAssertEqual(answer.stdout, before[i].stdout, "\(read.dropFirst().joined(separator: " ")) with the screen open")
            XCTAssertEqual(answer.stderr, before[i].stderr, "\(read.dropFirst().joined(separator: " ")): the same line")
            XCTAssertEqual(answer.status, before[i].status, "\(read.dropFirst().joined(separator: " ")): the same status")
        }
        XCTAssertTrue(open[1].stdout.contains("\"mute\" : true"), open[1].stdout)
        XCTAssertFalse(open[0].stdout.contains("Bridge"), open[0].stdout)

        // undo --list is the screen's own undo: the mute alone (the folder keeps the saves).
        let steps = try Tapedeck.run(["undo", session, "--list"], environment: env, timeout: 300)
        XCTAssertEqual(steps.status, 0, steps.stderr)
        let lines = steps.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, steps.stdout)
        XCTAssertTrue(lines.first?.hasPrefix("  undo 1  ") == true && !steps.stdout.contains("asked by"), steps.stdout)
        XCTAssertTrue(try Tapedeck.run(["undo", session, "--list"]).stdout.contains("asked by"), "the folder's history has the handed-over saves")
        // Reads leave the session and the screen's undo alone.
        XCTAssertEqual(try SessionFolder(path: session).load(), file)

        // Saved and closed: the file is the screen's state, and the reads on it say the same.
        screen.send("C-s")
        screen.waitFor("saved /", timeout: 30)
        XCTAssertTrue(try SessionFolder(path: session).load().tracks[0].mute)
        screen.send("q")
        let gone = Date().addingTimeInterval(60)
        while screen.isRunning && Date() < gone { usleep(100_000) }
        XCTAssertFalse(screen.isRunning, "the screen quit")
        let closed = try answers(session, env)
        for (read, (withScreen, without)) in zip(reads(session), zip(open, closed)) {
            let name = read.dropFirst().joined(separator: " ")
            XCTAssertEqual(withScreen.stdout, without.stdout, "\(name): the same text with the screen open and without")
            XCTAssertEqual(withScreen.stderr, without.stderr, "\(name): the same line")
            XCTAssertEqual(withScreen.status, without.status, "\(name): the same status")
        }
    }

    /// An owner that listens but never answers (a screen stuck on its UI thread): played
    /// here by the test itself, holding the session's lock as the screen does and listening
    /// on its control socket without ever accepting. The read is not waited on for ever: it
    /// gives up within its bound, says so in one line, and shows the saved file. An owner that
    /// answers it takes no reads (headless record, an older screen) is read past silently; a
    /// holder with no socket to ask is read past with a line saying the file is the saved one.
    func testAReadTheOwnerDoesNotAnswerFallsBackToTheSavedFile() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let env = try runtime(dir)
        let session = try makeSession(dir)
        XCTAssertEqual(try Tapedeck.run(["marker", session, "add", "0:02", "Verse"]).status, 0)
        let control = env["XDG_RUNTIME_DIR"]! + "/tapedeck"
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let listener = try listeningSocket(at: control + "/\(getpid()).sock")
        defer { close(listener) }
        let lock = try SessionLock.acquire(SessionFolder(path: session))
        defer { withExtendedLifetime(lock) {} }

        let started = Date()
        let late = try Tapedeck.run(["marker", session], environment: env, timeout: 300)
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(late.status, 0, late.stderr)
        XCTAssertEqual(late.stdout, "  1  00:02.000  Verse\n", "the saved file's markers")
        XCTAssertEqual(late.stderr.split(separator: "\n").count, 1, late.stderr)
        XCTAssertTrue(late.stderr.hasPrefix("tapedeck: ") && late.stderr.contains("did not answer") && late.stderr.contains("saved session.json"),
                      late.stderr)
        XCTAssertLessThan(waited, 200, "bounded: the read gave up on the owner")

        // An owner that refuses command lines: the file, and not a word about it.
        let answering = Thread {
            var asked = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&asked, 1, 120_000) > 0 else { return }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            let reply = Array("error: tapedeck record has the session open and takes no edits while it runs\n".utf8)
            _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(fd)
        }
        // The first read's connection is still queued, never accepted: take it off first
        // (without waiting: a read that never asked left nothing).
        var queued = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        if poll(&queued, 1, 0) > 0 {
            let stale = accept(listener, nil, nil)
            if stale >= 0 { close(stale) }
        }
        answering.start()
        let refused = try Tapedeck.run(["marker", session], environment: env, timeout: 300)
        XCTAssertEqual(refused.status, 0, refused.stderr)
        XCTAssertEqual(refused.stdout, "  1  00:02.000  Verse\n")
        XCTAssertEqual(refused.stderr, "")

        // A holder with no socket this user's runtime folder shows (a long import, or a
        // screen started with another XDG_RUNTIME_DIR): the file, said to be the saved one.
        answering.cancel()
        unlink(control + "/\(getpid()).sock")
        let unasked = try Tapedeck.run(["marker", session], environment: env, timeout: 300)
        XCTAssertEqual(unasked.status, 0, unasked.stderr)
        XCTAssertEqual(unasked.stdout, "  1  00:02.000  Verse\n")
        XCTAssertEqual(unasked.stderr.split(separator: "\n").count, 1, unasked.stderr)
        XCTAssertTrue(unasked.stderr.contains("held open by pid \(getpid())") && unasked.stderr.contains("cannot be asked from here")
                      && unasked.stderr.contains("saved session.json"), unasked.stderr)
    }
}
