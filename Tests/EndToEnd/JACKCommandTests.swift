import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `--device jack` through the commands and the screen, as a user meets it.
final class JACKCommandTests: XCTestCase {
    /// A server this test owns (its child), so a SIGKILL can be reaped and its entry in JACK's
    /// shared registry handed back by a server of the same name.
    private struct OwnedServer {
        let name: String
        let process: SpawnedChild
        var environment: [String: String] { ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"] }

        static func start(_ name: String) throws -> OwnedServer {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") else { throw XCTSkip("jackd2 is not installed") }
            let process = try SpawnedChild(["/usr/bin/jackd", "-n", name, "-d", "dummy", "-r", "48000", "-p", "256"],
                                           environment: ["JACK_NO_AUDIO_RESERVATION": "1"])
            let wait = try SpawnedChild(["/usr/bin/jack_wait", "-s", name, "-w", "-t", "10"], environment: ["JACK_DEFAULT_SERVER": name])
            guard wait.wait(timeoutSeconds: 15) == 0 else {
                _ = process.kill(SIGKILL)
                throw XCTSkip("the private JACK server did not start")
            }
            return OwnedServer(name: name, process: process)
        }
    }

    func testAKilledServerLeavesAValidTakeAndOneClearMessage() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let name = "td-kill-\(getpid())-\(UUID().uuidString.prefix(6))"
        let server = try OwnedServer.start(name)
        var killed = false
        addTeardownBlock {
            if !killed { _ = server.process.kill(SIGKILL) }
            // Reaped: a server of the same name takes its registry entry back, and leaves.
            if let again = try? OwnedServer.start(name) { _ = again.process.kill(SIGTERM) }
        }
        let folder = SessionFolder(path: dir.path + "/song.tapedeck")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "Vocal", inputChannels: [1], armed: true, monitoring: .off)]
        try folder.create(session)
        let record = try SpawnedChild([Tapedeck.binary, "record", folder.path, "--device", "jack"],
                                      environment: server.environment.merging(["XDG_RUNTIME_DIR": dir.path]) { $1 },
                                      stderrPath: dir.path + "/err.txt")
        usleep(2_500_000)
        XCTAssertEqual(server.process.kill(SIGKILL).map { $0 & 0x7f }, SIGKILL, "the server was killed")
        killed = true
        let status = record.wait(timeoutSeconds: 20)
        if status == nil { _ = record.kill(SIGKILL) }
        let err = (try? String(contentsOfFile: dir.path + "/err.txt", encoding: .utf8)) ?? ""
        XCTAssertNotNil(status, "the take ends by itself once the server is gone")
        XCTAssertEqual(status.map { ($0 >> 8) & 0xff }, 1, "a lost device is a failure: \(err)")
        let told = err.components(separatedBy: CharacterSet(charactersIn: "\r\n")).filter { $0.contains("JACK server") }
        XCTAssertEqual(told, ["tapedeck: the device stopped: audio device 'jack': the JACK server stopped serving 'tapedeck': the server went away (JACK server has been closed) (the takes were kept up to there)"],
                       "one clear line:\n\(err)")
        let region = try XCTUnwrap(try folder.load().tracks[0].regions.first, "the take is on its track")
        XCTAssertGreaterThan(region.lengthFrames, 48000, "two seconds and more were recorded and kept")
        let reader = try AudioFileReader(path: folder.absolutePath(of: region.file))
        XCTAssertEqual(reader.frameCount, region.lengthFrames, "a valid file holding all of it")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.absolutePath(of: region.file) + ".recording"))
    }

    func testJackFlagsMistakesAndAMissingServerAreOneLineEach() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let noServer = ["JACK_DEFAULT_SERVER": "td-none-\(getpid())", "JACK_NO_START_SERVER": "1", "XDG_RUNTIME_DIR": dir.path]
        let cases: [([String], Int32, String)] = [
            (["record", "--out", "x.wav", "--connect", "system:"], 64, "tapedeck: record: --connect is for JACK: add --device jack (or jack:CLIENT)"),
            (["play", "x.wav", "--timebase"], 64, "tapedeck: play: --timebase is for JACK: add --device jack (or jack:CLIENT)"),
            (["record", "--out", "x.wav", "--device", "jack", "--period", "128"], 64,
             "tapedeck: record: --period is for ALSA: the JACK server sets its own buffer size and format (jack_bufsize changes it)"),
            (["record", "--out", "x.wav", "--device", "jack", "--jack-transport", "maybe"], 64,
             "tapedeck: record: --jack-transport 'maybe' must be sync or off"),
            (["record", "--out", "x.wav", "--device", "jack", "--timebase", "--jack-transport", "off"], 64,
             "tapedeck: record: --timebase publishes bar and beat on JACK's transport: it needs --jack-transport sync"),
            (["record", "--out", "x.wav", "--device", ""], 64, "tapedeck: record: --device needs a name (see 'tapedeck devices')"),
            (["record", "--out", dir.path + "/x.wav", "--device", "jack:" + String(repeating: "n", count: 300)], 1,
             "tapedeck: audio device 'jack:" + String(repeating: "n", count: 35) + "…': a JACK client name has at most 64 bytes, this one 300"),
            (["record", "--out", dir.path + "/x.wav", "--device", "jack"], 1,
             "tapedeck: audio device 'jack': no JACK server is running 'td-none-\(getpid())': start one (jackd -d alsa, qjackctl, or PipeWire's JACK) or pick an ALSA device"),
        ]
        for (args, code, line) in cases {
            let r = try Tapedeck.run(args, environment: noServer)
            XCTAssertEqual(r.status, code, args.joined(separator: " ") + ": " + r.stderr)
            XCTAssertEqual(r.stderr, line + "\n", args.joined(separator: " "))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path + "/x.wav"), "nothing was recorded")
    }

    /// The screen's device chooser offers `jack` while a server runs; choosing it moves the
    /// screen onto its own JACK client, and `play` names its client as asked.
    func testTheScreensChooserOffersJackAndPlayNamesItsClient() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let jack = try JackServer.start(self, folder: dir.path)
        let session = dir.path + "/demo.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["demo", session]).status, 0)
        let env = jack.environment.merging(["XDG_RUNTIME_DIR": dir.path]) { $1 }
        let screen = try ScreenTmux(self, folder: dir.path, args: [session, "--device", "jacktap:OUT=\(dir.path)/out.raw"],
                                    environment: env, width: 120)
        screen.waitFor("Drums")
        screen.send("d")
        screen.waitFor("jack")
        // The current device first, then jack.
        screen.send("Down")
        screen.send("Enter")
        screen.waitFor("device: jack")
        let lsp = try SpawnedChild(["/usr/bin/jack_lsp"], environment: jack.environment, stdoutPath: dir.path + "/lsp.txt")
        _ = lsp.wait(timeoutSeconds: 10)
        let ports = (try? String(contentsOfFile: dir.path + "/lsp.txt", encoding: .utf8)) ?? ""
        XCTAssertTrue(ports.contains("tapedeck:out_L"), ports)
        XCTAssertTrue(ports.contains("tapedeck:Vocal_in"), "the armed track's input is named after it: \(ports)")
        screen.send("q")

        let play = try SpawnedChild([Tapedeck.binary, "play", session, "--device", "jack:Rehearsal", "--to", "2"],
                                    environment: env, stderrPath: dir.path + "/play.txt")
        var named = false
        for _ in 0..<100 where !named {
            let l = try SpawnedChild(["/usr/bin/jack_lsp"], environment: jack.environment, stdoutPath: dir.path + "/lsp2.txt")
            _ = l.wait(timeoutSeconds: 10)
            named = ((try? String(contentsOfFile: dir.path + "/lsp2.txt", encoding: .utf8)) ?? "").contains("Rehearsal:out_L")
            if !named { usleep(50_000) }
        }
        XCTAssertTrue(named, "jack:Rehearsal names the client")
        XCTAssertEqual(play.wait(timeoutSeconds: 20).map { ($0 >> 8) & 0xff }, 0,
                       (try? String(contentsOfFile: dir.path + "/play.txt", encoding: .utf8)) ?? "")
    }
}
