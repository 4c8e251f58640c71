import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `tapedeck calibrate` through the filetap test device. filetap cannot loop its output back,
/// so the test plays the loop's part: its input file holds the click train where a cable
/// with a known extra delay would have brought it back.
final class CalibrateTests: XCTestCase {
    /// Where `tapedeck calibrate` puts its clicks at 48 kHz (LatencyCalibrator.Settings'
    /// defaults: 0.1 s lead-in, then these gaps); a change there must show up here.
    private let clickFrames: [Int] = {
        var at = 4800
        var out = [at]
        for gap in [0.21, 0.26, 0.19, 0.31, 0.23, 0.28, 0.2] { at += Int((gap * 48000).rounded()); out.append(at) }
        return out
    }()

    private func run(_ args: [String], config: String) throws -> Tapedeck.Result {
        var env = RecordSupport.environment
        env["XDG_CONFIG_HOME"] = config
        return try Tapedeck.run(["calibrate"] + args, environment: env)
    }

    func testCalibrateFindsAKnownExtraDelayToTheFrameAndStoresIt() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let config = dir + "/xdg"
        // ALSA reports the playback buffer (period × periods) as the round trip.
        for (period, periods, extra) in [(256, 2, 777), (128, 3, 5), (1024, 2, 0)] {
            let reported = period * periods
            var input = [Int32](repeating: 0, count: clickFrames.last! + 48000)
            for c in clickFrames { input[c + reported + extra] = 16384 }
            let inPath = dir + "/in-\(period).raw"
            RecordSupport.writeRaw(input, bits: 16, to: inPath)
            let device = "filetap:IN=\(inPath),OUT=/dev/null"
            let r = try run(["--device", device, "--period", "\(period)", "--periods", "\(periods)", "--device-format", "s16"], config: config)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("round trip  \(reported + extra) frames"), r.stdout)
            XCTAssertTrue(r.stdout.contains("residual    \(extra) frames"), r.stdout)
            XCTAssertTrue(r.stdout.contains("reported    \(reported) frames by ALSA (capture 0 + playback \(reported))"), r.stdout)
            let stored = try String(contentsOfFile: config + "/tapedeck/latency", encoding: .utf8)
            XCTAssertTrue(stored.contains("\n\(device) = \(extra)\n"), stored)
        }
        let stored = try String(contentsOfFile: config + "/tapedeck/latency", encoding: .utf8)
        XCTAssertEqual(stored.split(separator: "\n").filter { !$0.hasPrefix("#") }.count, 3, "one line per device")
    }

    func testSilenceComingBackSaysTheLoopbackIsNotConnectedAndStoresNothing() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let r = try run(["--device", "filetap:IN=/dev/zero,OUT=/dev/null", "--device-format", "s16"], config: dir + "/xdg")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("tapedeck: no click came back: is the loopback connected?"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/xdg/tapedeck/latency"))
    }

    func testAMissingDeviceAndABrokenLatencyFileAreOneLineErrors() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let missing = try run(["--device", "nosuchdevice"], config: dir + "/xdg")
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("audio device 'nosuchdevice'"), missing.stderr)
        XCTAssertEqual(missing.stderr.split(separator: "\n").filter { $0.hasPrefix("tapedeck:") }.count, 1, missing.stderr)
        try FileManager.default.createDirectory(atPath: dir + "/bad/tapedeck", withIntermediateDirectories: true)
        try "hw:0 = lots\n".write(toFile: dir + "/bad/tapedeck/latency", atomically: true, encoding: .utf8)
        let broken = try run(["--device", "filetap:IN=/dev/zero,OUT=/dev/null"], config: dir + "/bad")
        XCTAssertEqual(broken.status, 1)
        XCTAssertTrue(broken.stderr.contains("latency: line 1: 'hw:0 = lots' is not 'device = frames'"), broken.stderr)
    }

    func testDryRunMeasuresButStoresNothing() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        var input = [Int32](repeating: 0, count: clickFrames.last! + 48000)
        for c in clickFrames { input[c + 768 + 40] = -16384 }
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        let r = try run(["--device", "filetap:IN=\(dir)/in.raw,OUT=/dev/null", "--device-format", "s16", "--dry-run"], config: dir + "/xdg")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("residual    40 frames"), r.stdout)
        XCTAssertTrue(r.stdout.contains("polarity inverted"), r.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/xdg/tapedeck/latency"))
    }
}

/// `tapedeck calibrate --device jack`, as a user meets it on a server where other things ran.
final class JACKCalibrateTests: XCTestCase {
    /// On a server where the screen ran before, calibrate measures three times in a row, the
    /// last through a stop of the server mid-measurement (its xruns spoil a run, which starts
    /// over on the same client: restarting a JACK client was refused, "Input/output error").
    /// It names JACK as what it measured and stores only the residual, under the server's name.
    func testCalibrateWorksOnJACKWhateverRanBeforeAndThroughAStall() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(.jackd2, period: 256, folder: dir, test: self)
        try server.startLoop("tdcal", delayFrames: 40, reports: false)
        var env = server.environment
        env["XDG_CONFIG_HOME"] = dir + "/xdg"
        env["XDG_RUNTIME_DIR"] = dir
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "Vocal", inputChannels: [1], armed: true)]
        try SessionFolder(path: dir + "/s.tapedeck").create(session)
        let screen = try ScreenTmux(self, folder: dir, args: [dir + "/s.tapedeck", "--device", "jack", "--connect", "tdcal:"], environment: env)
        screen.waitFor("STOPPED", timeout: 15)
        screen.send("Space")
        usleep(700_000)
        screen.send("q")
        let quit = Date().addingTimeInterval(10)
        while screen.isRunning && Date() < quit { usleep(50_000) }
        screen.kill()
        // Its client gone, so each calibrate gets the name (and no second client plays into the loop).
        try server.waitUntilGone(client: "tapedeck")
        for trial in 1...3 {
            let out = dir + "/cal\(trial).out", err = dir + "/cal\(trial).err"
            let cal = try SpawnedChild([Tapedeck.binary, "calibrate", "--device", "jack", "--connect", "tdcal:"], environment: env,
                                       stdoutPath: out, stderrPath: err)
            if trial == 3 {
                usleep(400_000)
                server.stall(milliseconds: 150)
            }
            let status = cal.wait(timeoutSeconds: 60)
            let printed = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            let said = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
            XCTAssertEqual(status.map { ($0 >> 8) & 0xff }, 0, "trial \(trial): \(said)")
            XCTAssertTrue(printed.contains("reported    256 frames by JACK (capture 0 + playback 256)"), "trial \(trial): \(printed)")
            XCTAssertTrue(printed.contains("residual    40 frames"), "trial \(trial): \(printed)")
            // Whether the stall cost the run under way (and how many xruns did) is the server's
            // to decide; said so a run's log shows what the measurement went through.
            if let line = printed.split(separator: "\n").first(where: { $0.hasPrefix("xruns") }) { print("trial \(trial): \(line)") }
        }
        let stored = try String(contentsOfFile: dir + "/xdg/tapedeck/latency", encoding: .utf8)
        XCTAssertTrue(stored.contains("\njack@\(env["JACK_DEFAULT_SERVER"]!) = 40\n"), stored)
    }

    /// Two loopbacks of different delays on one output: no one figure fits both, so
    /// calibrate refuses in one line and stores nothing.
    func testTwoPathsOfDifferentLatencyAreRefusedAndNothingIsStored() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(.jackd2, period: 256, folder: dir, test: self)
        try server.startLoop("tdshort", delayFrames: 40)
        try server.startLoop("tdlong", delayFrames: 3000)
        var env = server.environment
        env["XDG_CONFIG_HOME"] = dir + "/xdg"
        let out = dir + "/cal.out", err = dir + "/cal.err"
        let cal = try SpawnedChild([Tapedeck.binary, "calibrate", "--device", "jack", "--connect", "none"], environment: env,
                                   stdoutPath: out, stderrPath: err)
        try server.waitForPorts(["tapedeck:out_L", "tapedeck:in_1"], running: { cal.isRunning },
                                printed: { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" })
        for loop in ["tdshort", "tdlong"] {
            server.connect("tapedeck:out_L", "\(loop):in_1")
            server.connect("\(loop):out_1", "tapedeck:in_1")
        }
        let status = cal.wait(timeoutSeconds: 60)
        let said = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        XCTAssertEqual(status.map { ($0 >> 8) & 0xff }, 1, said)
        let lines = said.split(separator: "\n").filter { $0.hasPrefix("tapedeck:") }
        XCTAssertEqual(lines.count, 1, said)
        XCTAssertTrue(said.contains("nothing stored"), said)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/xdg/tapedeck/latency"))
    }
}
