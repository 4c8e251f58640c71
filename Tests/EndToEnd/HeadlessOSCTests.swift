import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// OSC on `tapedeck play` and `tapedeck record` (`--osc PORT`), through liblo's own tools:
/// `oscsend` drives them, `oscdump` is a surface that registered. They run on `jacktap`, paced
/// in real time by a private JACK server, as the control-socket tests do. Nothing is timed
/// tightly: every wait polls with a generous limit, and what is checked cannot happen by
/// itself within it (a locate far past where playing could get).
final class HeadlessOSCTests: XCTestCase {
    private var dir = ""

    override func setUpWithError() throws {
        guard access("/usr/bin/oscsend", X_OK) == 0, access("/usr/bin/oscdump", X_OK) == 0 else {
            throw XCTSkip("liblo-tools (oscsend, oscdump) is not installed: make test-deps")
        }
        dir = try Tapedeck.temporaryFolder(self).path
    }

    private func oscsend(_ port: Int, _ path: String, _ types: String = "", _ args: String...) {
        let result = try? Tapedeck.run(["127.0.0.1", "\(port)", path] + (types.isEmpty ? [] : [types] + args), executable: "/usr/bin/oscsend")
        XCTAssertEqual(result?.status, 0, "oscsend \(path): \(result?.stderr ?? "did not run")")
    }

    private func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Polls `condition` every 50 ms for at most `timeout` seconds; fails when it never holds.
    @discardableResult
    private func wait(_ what: String, timeout: Double = 30, file: StaticString = #filePath, line: UInt = #line,
                      _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        XCTFail("timed out waiting for \(what)", file: file, line: line)
        return false
    }

    /// `oscdump` on a port of its own, writing what it is sent to a file; stopped at the end.
    private func surface() throws -> (port: Int, dump: String) {
        let port = ScreenOSCTests.freePort()
        let dump = dir + "/oscdump-\(port).txt"
        FileManager.default.createFile(atPath: dump, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/oscdump")
        process.arguments = ["-L", "\(port)"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: dump))
        process.standardError = FileHandle.nullDevice
        try process.run()
        addTeardownBlock { process.terminate(); process.waitUntilExit() }
        return (port, dump)
    }

    /// Registers the surface (buttons, values, the master section, meters, the playhead; gain
    /// in dB; feedback to its port) until it hears
    /// `expected`: the command may not have bound its port yet when the first is sent.
    private func register(_ surface: (port: Int, dump: String), with port: Int, until expected: String) {
        wait("the surface to be sent '\(expected)'", timeout: 60) {
            if text(surface.dump).contains(expected) { return true }
            oscsend(port, "/set_surface", "iiiiiii", "0", "0", "3219", "0", "0", "0", "\(surface.port)")
            usleep(500_000)
            return text(surface.dump).contains(expected)
        }
    }

    /// The largest `/position/samples` the surface was sent.
    private func furthestPosition(_ dump: String) -> Int {
        text(dump).split(separator: "\n").compactMap { line -> Int? in
            let fields = line.split(separator: " ")
            guard fields.count >= 4, fields[1] == "/position/samples" else { return nil }
            return Int(fields[3].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        }.max() ?? 0
    }

    /// `tapedeck play` of the demo session on a private JACK server, OSC on a free port, for
    /// ten minutes (silence after the demo's 8 s: it never ends by itself here).
    private func playDemoWithOSC() throws -> (session: String, port: Int, stderr: String, child: SpawnedChild) {
        let (folder, session) = try ScreenTmux.demoFolder(self)
        let jack = try JackServer.start(self, folder: folder)
        let port = ScreenOSCTests.freePort()
        let stderr = dir + "/err.txt"
        let child = try SpawnedChild([Tapedeck.binary, "play", session, "--to", "10:00", "--device", "jacktap:OUT=/dev/null", "--osc", "\(port)"],
                                     environment: jack.environment, stderrPath: stderr)
        return (session, port, stderr, child)
    }

    private func exitStatus(_ child: SpawnedChild, _ stderr: String) -> Int32? {
        let ended = child.wait(timeoutSeconds: 30)
        if ended == nil { _ = child.kill(SIGKILL) }
        XCTAssertNotNil(ended, "it ends when told /transport_stop: \(text(stderr))")
        return ended.map { ($0 >> 8) & 0xff }
    }

    func testPlayFollowsOSCTransportAndMixerAndARegisteredSurfaceGetsItsState() throws {
        let (session, port, stderr, child) = try playDemoWithOSC()
        let surface = try surface()
        register(surface, with: port, until: "/transport_play f 1.0")
        XCTAssertTrue(text(surface.dump).contains("/strip/name is 1 \"Drums\""), text(surface.dump))
        wait("the playhead fed back") { furthestPosition(surface.dump) > 0 }

        // A locate far past where playing could get in the test's time.
        oscsend(port, "/locate", "ii", "\(48000 * 300)", "1")
        wait("the playhead at 5:00") { furthestPosition(surface.dump) >= 48000 * 300 }

        // The mixer: done (and fed back); a strip that is not there, and arming, are refused.
        oscsend(port, "/strip/gain", "if", "1", "-6.0")
        oscsend(port, "/strip/mute", "ii", "2", "1")
        wait("the fader and the mute fed back") {
            text(surface.dump).contains("/strip/gain if 1 -6.0") && text(surface.dump).contains("/strip/mute if 2 1.0")
        }
        oscsend(port, "/strip/gain", "if", "9", "-6.0")
        oscsend(port, "/strip/recenable", "ii", "1", "1")
        wait("the refusals said") {
            text(stderr).contains("/strip/gain: no strip 9: the session has 4") && text(stderr).contains("'tapedeck play' does not record")
        }

        oscsend(port, "/transport_stop")
        XCTAssertEqual(exitStatus(child, stderr), 0, text(stderr))
        XCTAssertTrue(text(surface.dump).contains("/transport_stop f 1.0"), "the stop is fed back:\n\(text(surface.dump).suffix(1000))")
        // For the run only: the session is as it was.
        XCTAssertEqual(try SessionFolder(path: session).load().tracks[0].gainDecibels, -5)
    }

    /// `play` hosts the same OSC translation as the screen: a TouchOSC layout's banks, strip
    /// numbers in the address, press/release pairs and fast wind.
    func testPlayTakesAnArdourLayoutsBanksIdsInTheAddressAndFastWind() throws {
        let (session, port, stderr, child) = try playDemoWithOSC()
        let surface = try surface()
        // Banks of 2; buttons, ids in the address, the master section (1 + 4 + 16).
        wait("the surface to be sent the first bank", timeout: 60) {
            if text(surface.dump).contains("/strip/name/1 s \"Drums\"") { return true }
            oscsend(port, "/set_surface", "iiiiiii", "2", "0", "21", "0", "0", "0", "\(surface.port)")
            usleep(500_000)
            return text(surface.dump).contains("/strip/name/1 s \"Drums\"")
        }
        XCTAssertFalse(text(surface.dump).contains("/strip/name/3"), "a bank of two")
        oscsend(port, "/bank_up", "f", "1.0")
        oscsend(port, "/bank_up", "f", "0.0")
        wait("the second bank") { text(surface.dump).contains("/strip/name/1 s \"Keys\"") }
        oscsend(port, "/strip/mute/1", "f", "1.0")
        wait("Keys muted for the run, by its slot") { text(surface.dump).contains("/strip/mute/1 f 1.0") }
        oscsend(port, "/ffwd", "f", "1.0")
        oscsend(port, "/ffwd", "f", "0.0")
        wait("winding forward") { text(surface.dump).contains("/ffwd f 1.0") && text(surface.dump).contains("/transport_play f 0.0") }
        oscsend(port, "/transport_play", "f", "1.0")
        wait("back at speed") {
            let t = text(surface.dump)
            guard let wound = t.range(of: "/ffwd f 1.0", options: .backwards) else { return false }
            return t[wound.upperBound...].contains("/ffwd f 0.0") && t[wound.upperBound...].contains("/transport_play f 1.0")
        }
        oscsend(port, "/transport_stop", "f", "1.0")
        XCTAssertEqual(exitStatus(child, stderr), 0, text(stderr))
        XCTAssertFalse(try SessionFolder(path: session).load().tracks[2].mute, "for the run only")
    }

    func testRecordStopsOnOSCStopWithTheTakeKeptAndRefusesToMove() throws {
        let jack = try JackServer.start(self, folder: dir)
        let session = SessionFolder(path: dir + "/song.tapedeck")
        var s = Session(sampleRate: 48000)
        s.tracks = [Track(name: "Vocal", inputChannels: [1], armed: true, monitoring: .off)]
        try session.create(s)
        RecordSupport.writeRaw(RecordSupport.signal(frames: 48000 * 120, channels: 1, bits: 16), bits: 16, to: dir + "/in.raw")
        let port = ScreenOSCTests.freePort()
        let stderr = dir + "/err.txt"
        let child = try SpawnedChild([Tapedeck.binary, "record", session.path, "--device", "jacktap:IN=\(dir)/in.raw",
                                      "--device-format", "s16", "--bits", "16", "--osc", "\(port)"],
                                     environment: jack.environment, stderrPath: stderr)
        let surface = try surface()
        register(surface, with: port, until: "/rec_enable_toggle f 1.0")
        XCTAssertTrue(text(surface.dump).contains("/strip/name is 1 \"Vocal\""), text(surface.dump))

        // Moving, or changing the mix, while a take runs: refused, one line each; it records on.
        oscsend(port, "/locate", "ii", "48000", "0")
        oscsend(port, "/strip/gain", "if", "1", "-6.0")
        wait("the refusals said") {
            text(stderr).contains("recording: locate 48000f is refused while a take runs") && text(stderr).contains("'tapedeck record' takes no mixer changes")
        }
        XCTAssertNil(child.wait(timeoutSeconds: 0.5), "still recording after the refusals")
        wait("half a second recorded") { furthestPosition(surface.dump) > 24000 }

        oscsend(port, "/transport_stop")
        XCTAssertEqual(exitStatus(child, stderr), 0, text(stderr))
        let region = try XCTUnwrap(try session.load().tracks[0].regions.first, "the take is on its track: \(text(stderr))")
        XCTAssertGreaterThan(region.lengthFrames, 24000)
        XCTAssertEqual(region.timelineStartFrame, 0, "the take was not moved")
        let dumped = text(surface.dump)
        XCTAssertTrue(dumped.contains("/rec_enable_toggle f 0.0") && dumped.contains("/transport_stop f 1.0"),
                      "the end of the take is fed back:\n\(dumped.suffix(1000))")
    }

    func testABadPortOrAddressIsOneLineAndAFailedExit() throws {
        let held = HeldUDPPort()
        defer { withExtendedLifetime(held) {} }
        let busy = held.port
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 4800)], to: dir + "/a.wav")
        let cases: [([String], String)] = [
            (["--osc", "\(busy)"], "in use"), (["--osc", "0"], "not a UDP port"), (["--osc", "70000"], "not a UDP port"),
            (["--osc", "x"], "not a UDP port"), (["--osc", "9", "--osc-address", "nowhere"], "not a numeric IPv4 or IPv6 address"),
            (["--osc-address", "0.0.0.0"], "--osc-address needs --osc PORT"),
        ]
        for (command, target) in [("play", [dir + "/a.wav"]), ("record", ["--out", dir + "/take.wav"])] {
            for (flags, expected) in cases {
                let r = try Tapedeck.run([command] + target + ["--device", "offline"] + flags, environment: RecordSupport.environment)
                XCTAssertNotEqual(r.status, 0, "\(command) \(flags)")
                XCTAssertTrue(r.stderr.contains(expected), "\(command) \(flags): \(r.stderr)")
                XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "\(command) \(flags): \(r.stderr)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/take.wav"), "nothing was recorded")
    }
}
