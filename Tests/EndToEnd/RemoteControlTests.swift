import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `tapedeck ctl` and the control socket every running Tapedeck serves. Each test has a
/// runtime folder of its own (XDG_RUNTIME_DIR), so Tapedecks run by others are not seen.
final class RemoteControlTests: XCTestCase {
    /// A runtime folder for this test, and the environment that points Tapedeck at it.
    private func runtime(_ dir: URL) throws -> (folder: String, environment: [String: String]) {
        let run = dir.path + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        return (run + "/tapedeck", RecordSupport.environment.merging(["XDG_RUNTIME_DIR": run]) { $1 })
    }

    /// Waits for `pid`'s socket to appear.
    private func socket(of pid: pid_t, in folder: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let path = folder + "/\(pid).sock"
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: path) { usleep(10_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "\(path) appears", file: file, line: line)
        return path
    }

    private func mode(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    private func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    /// A headless recording on a paced device: `ctl status` reports it, a locate is refused
    /// (a take is never torn in two), `ctl stop` ends it as Ctrl-C would — takes kept and
    /// placed, exit 0.
    func testCtlDrivesAHeadlessRecordingAndGetsItsStatus() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let (folder, env) = try runtime(dir)
        let jack = try JackServer.start(self, folder: dir.path)
        let session = SessionFolder(path: dir.path + "/song.tapedeck")
        var s = Session(sampleRate: 48000)
        s.tracks = [Track(name: "Vocal", inputChannels: [1], armed: true, monitoring: .off)]
        try session.create(s)
        RecordSupport.writeRaw(RecordSupport.signal(frames: 48000 * 30, channels: 1, bits: 16), bits: 16, to: dir.path + "/in.raw")
        let child = try SpawnedChild([Tapedeck.binary, "record", session.path, "--device", "jacktap:IN=\(dir.path)/in.raw",
                                      "--device-format", "s16", "--bits", "16"],
                                     environment: env.merging(jack.environment) { $1 }, stdoutPath: dir.path + "/out.txt",
                                     stderrPath: dir.path + "/err.txt")
        let path = socket(of: child.pid, in: folder)
        XCTAssertEqual(mode(folder), 0o700, "the folder is the user's alone")
        XCTAssertEqual(mode(path), 0o600, "the socket too")
        usleep(500_000)

        let status = try Tapedeck.run(["ctl", "status"], environment: env)
        XCTAssertEqual(status.status, 0, status.stderr)
        let object = json(status.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(object["state"] as? String, "recording")
        XCTAssertEqual(object["front_end"] as? String, "record")
        XCTAssertEqual(object["pid"] as? Int, Int(child.pid))
        XCTAssertEqual(object["session"] as? String, URL(fileURLWithPath: session.path).standardizedFileURL.path)
        XCTAssertEqual((object["armed_tracks"] as? [[String: Any]])?.first?["name"] as? String, "Vocal")
        XCTAssertEqual(object["xruns"] as? Int, 0)
        XCTAssertGreaterThan(object["position_frame"] as? Int ?? 0, 0)
        let levels = (object["levels"] as? [String: Any])?["tracks"] as? [[String: Any]]
        XCTAssertNotNil(levels?.first?["peak_dbfs"] as? [Any], "levels per track: \(status.stdout)")

        let locate = try Tapedeck.run(["ctl", "locate", "2"], environment: env)
        XCTAssertEqual(locate.status, 1)
        XCTAssertEqual(locate.stderr, "tapedeck: ctl: Tapedeck pid \(child.pid): recording: locate 2 is refused while a take runs (a take is never torn in two); stop first\n")

        let stop = try Tapedeck.run(["ctl", "--session", session.path, "stop"], environment: env)
        XCTAssertEqual(stop.status, 0, stop.stderr)
        XCTAssertEqual(stop.stdout, "ok: stopping: the takes are being finished\n")
        let ended = child.wait(timeoutSeconds: 20)
        if ended == nil { _ = child.kill(SIGKILL) }
        XCTAssertEqual(ended.map { ($0 >> 8) & 0xff }, 0, (try? String(contentsOfFile: dir.path + "/err.txt", encoding: .utf8)) ?? "")
        let region = try XCTUnwrap(try session.load().tracks[0].regions.first, "the take is on its track")
        XCTAssertGreaterThan(region.lengthFrames, 24000)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the socket goes with its Tapedeck")
        let none = try Tapedeck.run(["ctl", "status"], environment: env)
        XCTAssertEqual(none.status, 1)
        XCTAssertEqual(none.stderr, "tapedeck: ctl: no Tapedeck is running (no control socket in \(folder))\n")
    }

    /// The socket (0600, in a 0700 folder) refuses another user; and should its modes ever be
    /// opened, the kernel's word on who calls (SO_PEERCRED) refuses them still. The client
    /// trusts the folder no more than the server does (issue 40): `ctl` run by another user
    /// refuses that user's way into it before connecting, and even its own user's `ctl`
    /// refuses a folder opened to others until it is closed again.
    func testTheSocketRefusesOtherUsers() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            throw XCTSkip("needs root, setpriv and python3 to connect as another user")
        }
        let dir = try Tapedeck.temporaryFolder(self)
        chmod(dir.path, 0o755)
        let (folder, env) = try runtime(dir)
        chmod(dir.path + "/run", 0o755)
        let jack = try JackServer.start(self, folder: dir.path)
        RecordSupport.writeRaw(RecordSupport.signal(frames: 48000 * 30, channels: 1, bits: 16), bits: 16, to: dir.path + "/in.raw")
        let child = try SpawnedChild([Tapedeck.binary, "record", "--out", dir.path + "/take.wav", "--device",
                                      "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16"],
                                     environment: env.merging(jack.environment) { $1 })
        defer { _ = child.kill(SIGTERM) }
        let path = socket(of: child.pid, in: folder)
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        let refused = try Tapedeck.run(nobody + [Tapedeck.binary, "ctl", "--pid", "\(child.pid)", "status"], executable: "/usr/bin/setpriv",
                                       environment: env)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("\(folder) is not to be trusted (it belongs to another user (uid 0))"), refused.stderr)
        XCTAssertEqual(refused.stdout, "", "nothing was told")

        // Open the folder and the socket to everyone: the server still asks the kernel who
        // is calling, and refuses (a raw client, which checks nothing, asks here; the refusal
        // may come, and the line be hung up on, before it has sent its line).
        chmod(folder, 0o755)
        chmod(path, 0o666)
        let raw = """
        import socket
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect('\(path)')
        try:
            s.sendall(b'status\\n')
        except OSError:
            pass
        print(s.recv(4096).decode(), end='')
        """
        let stillRefused = try Tapedeck.run(nobody + ["/usr/bin/python3", "-c", raw], executable: "/usr/bin/setpriv", environment: env)
        XCTAssertTrue(stillRefused.stdout.contains("refused: this Tapedeck answers only its own user (uid 0)"), stillRefused.stdout + stillRefused.stderr)
        // Its own user's client will not use a folder others may enter; closed again, it does.
        let open = try Tapedeck.run(["ctl", "--pid", "\(child.pid)", "status"], environment: env)
        XCTAssertEqual(open.status, 1)
        XCTAssertTrue(open.stderr.contains("\(folder) is not to be trusted (other users may enter it (mode 755))"), open.stderr)
        chmod(folder, 0o700)
        let own = try Tapedeck.run(["ctl", "--pid", "\(child.pid)", "status"], environment: env)
        XCTAssertEqual(own.status, 0, "its own user is answered: \(own.stderr)")
    }

    /// The screen does what its keys do when told over the socket, and says who asked.
    func testCtlDrivesTheScreenAndTheScreenSaysWhoAsked() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let (folder, env) = try runtime(dir)
        let session = dir.path + "/demo.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["demo", session]).status, 0)
        let screen = try ScreenTmux(self, folder: dir.path, args: [session, "--device", "offline"], environment: env, width: 120)
        screen.waitFor("Drums")
        let running = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".sock") })
        XCTAssertEqual(mode(folder + "/" + running), 0o600)

        let play = try Tapedeck.run(["ctl", "play"], environment: env)
        XCTAssertEqual(play.stdout, "ok: playing\n", play.stderr)
        screen.waitFor("playing — asked by tapedeck ctl (pid ")
        let locate = try Tapedeck.run(["ctl", "locate", "3.1.1"], environment: env)
        XCTAssertEqual(locate.stdout, "ok: moved to 00:04.000 (3|1|0)\n", locate.stderr)
        var state = json(try Tapedeck.run(["ctl", "status"], environment: env).stdout)
        XCTAssertEqual(state["state"] as? String, "playing")
        XCTAssertGreaterThanOrEqual(state["position_frame"] as? Int ?? 0, 192_000, "moved to bar 3 and rolling on")
        XCTAssertEqual(state["front_end"] as? String, "screen")
        // The screen's thread is the process's main thread: it keeps the program's name, so
        // `pgrep -x tapedeck`, `killall tapedeck` and `ps -C tapedeck` find the program.
        let pid = try XCTUnwrap(state["pid"] as? Int)
        XCTAssertEqual(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), "tapedeck\n")

        XCTAssertEqual(try Tapedeck.run(["ctl", "speed", "75%"], environment: env).stdout, "ok: speed 0.75x\n")
        screen.waitFor("0.75")
        XCTAssertEqual(try Tapedeck.run(["ctl", "loop", "on"], environment: env).stdout, "ok: loop on\n")
        XCTAssertEqual(try Tapedeck.run(["ctl", "stop"], environment: env).stdout, "ok: stopped\n")
        state = json(try Tapedeck.run(["ctl", "status"], environment: env).stdout)
        XCTAssertEqual(state["state"] as? String, "stopped")
        XCTAssertEqual(state["speed"] as? Double, 0.75)
        XCTAssertEqual((state["loop"] as? [String: Any])?["on"] as? Bool, true)
        // The loop is an undoable edit like the key's: u takes it back.
        screen.send("u")
        screen.waitFor("undid: loop")
        XCTAssertEqual(try Tapedeck.run(["ctl", "rewind"], environment: env).stdout, "ok: rewound to 00:00.000 (1|1|0)\n")
        XCTAssertEqual(json(try Tapedeck.run(["ctl", "status"], environment: env).stdout)["position_frame"] as? Int, 0)
        XCTAssertEqual(try Tapedeck.run(["ctl", "stop"], environment: env).stdout, "ok: already stopped\n")

        // Recording on the offline device is refused, as r is, and the refusal is said.
        let record = try Tapedeck.run(["ctl", "record"], environment: env)
        XCTAssertEqual(record.status, 1)
        XCTAssertTrue(record.stderr.contains("no audio device: recording needs one"), record.stderr)
        screen.waitFor("asked 'record': no audio device")

        // Mistakes are the caller's: told before anything is sent.
        let typo = try Tapedeck.run(["ctl", "paly"], environment: env)
        XCTAssertEqual(typo.status, 64)
        XCTAssertEqual(typo.stderr, "tapedeck: ctl: unknown command 'paly' (did you mean 'play'?); known: play, stop, record [on|off|toggle], rewind, back [N], forward [N], locate TIME, loop on|off|toggle, speed R, save, status\n")
        for bad in [["speed", "0"], ["speed", "nan"], ["locate"], ["loop", "maybe"], ["stop", "now"]] {
            let r = try Tapedeck.run(["ctl"] + bad, environment: env)
            XCTAssertEqual(r.status, 64, "\(bad): \(r.stderr)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        }
        let past = try Tapedeck.run(["ctl", "locate", "99999999:00"], environment: env)
        XCTAssertEqual(past.status, 1, "a time past the timeline is refused by the screen, with the limit")
        XCTAssertTrue(past.stderr.contains("99999999:00"), past.stderr)
    }

    /// With several Tapedecks running, ctl asks which; --session and --pid choose; a socket
    /// left by a process that died is cleared.
    func testCtlChoosesAmongSeveralAndClearsWhatTheDeadLeft() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let (folder, env) = try runtime(dir)
        for name in ["a", "b"] {
            XCTAssertEqual(try Tapedeck.run(["new", dir.path + "/\(name)"]).status, 0)
            try FileManager.default.createDirectory(atPath: dir.path + "/t\(name)", withIntermediateDirectories: true)
        }
        let a = try ScreenTmux(self, folder: dir.path + "/ta", args: [dir.path + "/a.tapedeck", "--device", "offline"], environment: env)
        let b = try ScreenTmux(self, folder: dir.path + "/tb", args: [dir.path + "/b.tapedeck", "--device", "offline"], environment: env)
        a.waitFor("a.tapedeck")
        b.waitFor("b.tapedeck")
        for _ in 0..<300 where ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).count < 2 { usleep(10_000) }
        // A socket whose process is gone (pid 2^22 - 1 is never a running one here).
        FileManager.default.createFile(atPath: folder + "/4194303.sock", contents: nil)

        let both = try Tapedeck.run(["ctl", "status"], environment: env)
        XCTAssertEqual(both.status, 64)
        XCTAssertTrue(both.stderr.contains("2 Tapedecks are running: pid "), both.stderr)
        XCTAssertTrue(both.stderr.contains("(screen, a.tapedeck)") && both.stderr.contains("(screen, b.tapedeck)"), both.stderr)
        XCTAssertTrue(both.stderr.hasSuffix("choose one with --pid or --session\n"), both.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/4194303.sock"), "the dead one's socket is cleared")

        let chosen = try Tapedeck.run(["ctl", "--session", dir.path + "/b.tapedeck/", "status"], environment: env)
        XCTAssertEqual(chosen.status, 0, chosen.stderr)
        XCTAssertTrue((json(chosen.stdout)["session"] as? String ?? "").hasSuffix("/b.tapedeck"), chosen.stdout)
        let pid = try XCTUnwrap(json(chosen.stdout)["pid"] as? Int)
        XCTAssertEqual(json(try Tapedeck.run(["ctl", "--pid", "\(pid)", "status"], environment: env).stdout)["pid"] as? Int, pid)
        // The session first, as every other command takes it: the same Tapedeck.
        let first = try Tapedeck.run(["ctl", dir.path + "/b.tapedeck", "status"], environment: env)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(json(first.stdout)["pid"] as? Int, pid)
        let missing = try Tapedeck.run(["ctl", "--session", dir.path + "/c.tapedeck", "play"], environment: env)
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("no running Tapedeck has"), missing.stderr)
        let both2 = try Tapedeck.run(["ctl", "--pid", "1", "--session", "x", "play"], environment: env)
        XCTAssertEqual(both2.status, 64)
    }
}
