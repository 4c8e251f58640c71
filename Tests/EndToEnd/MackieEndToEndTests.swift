import Foundation
import XCTest
import TapedeckCore

/// A Mackie Control surface on the screen over JACK MIDI, on a private `jackd -d dummy`: a
/// test client (`td-jack-midi-send`) plays the surface's buttons and fader 1, a MIDI dump
/// hears the feedback (scribble strips, LEDs, motor faders), the paced `jackplaytap` device what
/// is heard. (The ALSA sequencer path is the same code past the port; this machine may have
/// no sequencer, the JACK one always runs here.)
final class MackieEndToEndTests: XCTestCase {
    /// The bytes of each event the dump printed (`frame: 90 5e 7f`, as `jack_midi_dump -a` prints).
    func dumpedMessages(_ path: String) -> [[UInt8]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map { line in
            guard let colon = line.firstIndex(of: ":") else { return [] }
            var bytes: [UInt8] = []
            for word in line[line.index(after: colon)...].split(separator: " ") {
                guard word.count == 2, let b = UInt8(word, radix: 16) else { break }
                bytes.append(b)
            }
            return bytes
        }
    }

    func poll(_ what: String, timeout: Double = 15, _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return }
            usleep(100_000)
        }
        XCTFail("timed out waiting for \(what)")
    }

    /// What every surface run starts from: a private JACK server and the two test tools
    /// (skipped where they are not built or installed).
    struct SurfaceRig {
        let dir: URL
        let jack: JackServer
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
    }

    func surfaceRig() throws -> SurfaceRig {
        let dir = try Tapedeck.temporaryFolder(self)
        let jack = try JackServer.start(self, folder: dir.path)
        return SurfaceRig(dir: dir, jack: jack)
    }

    /// Starts the tests' MIDI dump (`td-jack-midi-clock CLIENT --dump`, which prints as
    /// `jack_midi_dump -a` does) as JACK client `client`, printing into `file`; returns its path
    /// once its port `CLIENT:input` is on the server. Not `jack_midi_dump` itself: it keeps about
    /// 120 messages between its reads (a 100-message ring, rounded up), and a surface's first feedback (a whole bank: strips,
    /// LEDs, faders) is about that many. On a busy machine (CI) it skipped the scribble strips,
    /// and the wait for them outlasted the transient lines the later checks look for.
    func startDump(_ rig: SurfaceRig, client: String, file: String) throws -> String {
        let dumpPath = rig.path(file)
        let tool = URL(fileURLWithPath: Tapedeck.binary).deletingLastPathComponent().appendingPathComponent("td-jack-midi-clock").path
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw XCTSkip("td-jack-midi-clock is not built next to tapedeck") }
        let dump = try SpawnedChild([tool, client, "--dump"], environment: rig.jack.environment, stdoutPath: dumpPath,
                                    stderrPath: dumpPath + ".err")
        addTeardownBlock { _ = dump.kill(SIGKILL) }
        poll("the MIDI dump \(client) to start", timeout: 30) {
            ((try? String(contentsOfFile: dumpPath + ".err", encoding: .utf8)) ?? "").hasPrefix("ready")
        }
        return dumpPath
    }

    /// Starts the test's surface as JACK client `client`: two seconds after Tapedeck connects
    /// (or, given `go`, once the test created that file) it sends `messages` (bytes as decimal
    /// words, or `x`-prefixed hex SysEx), a second and a half apart. Returns once the client
    /// is ready.
    func startSurface(_ rig: SurfaceRig, client: String, messages: [String], go: String? = nil) throws {
        try JackMIDISender.start(self, client: client, start: go ?? "2000", gapMilliseconds: 1500, messages: messages,
                                 environment: rig.jack.environment, folder: rig.dir.path)
    }

    func testFaderOneByPitchBendIsHeardAndTheSurfaceGetsNamesLEDsAndMotorFeedback() throws {
        try surfaceRun(device: ["--device", "jackplaytap:OUT=OUT"], heard: true)
    }

    /// The same on the JACK backend, whose own MIDI ports the surface is connected to (its
    /// messages reach the engine on the audio thread's cycle, feedback leaves on its midi_out).
    func testOnTheJACKBackendTheSurfaceUsesItsOwnMIDIPorts() throws {
        try surfaceRun(device: ["--device", "jack", "--connect", "none"], heard: false)
    }

    private func surfaceRun(device: [String], heard: Bool) throws {
        let rig = try surfaceRig()
        let dir = rig.dir, jack = rig.jack
        func path(_ name: String) -> String { rig.path(name) }

        // Two tracks: "Lead Vocals" (longer than a strip: "Lead V") playing a steady 0.5, and Bass.
        let session = path("s.tapedeck")
        try Signals.write([[Float](repeating: 0.5, count: 40 * 48000)], to: path("Lead Vocals.wav"))
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        let imported = try Tapedeck.run(["import", session, path("Lead Vocals.wav")])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(try Tapedeck.run(["track", session, "add", "Bass"]).status, 0)

        let dumpPath = try startDump(rig, client: "tddump", file: "dump.txt")
        // The surface: two seconds after Tapedeck connects, a second and a half apart: play
        // pressed and released, fader 1 to -6 dB, bank right pressed and released (two tracks:
        // nowhere to go).
        let minus6 = MackieControl.faderValue(decibels: -6)
        let messages = [[0x90, 0x5E, 0x7F], [0x90, 0x5E, 0x00], [0xE0, minus6 & 0x7F, minus6 >> 7],
                        [0x90, 0x2F, 0x7F], [0x90, 0x2F, 0x00]].flatMap { $0.map(String.init) }
        // Played once the screen serves the surface (its strips came): a button pressed two
        // seconds after the connection, while a busy machine (CI) still started the screen,
        // was lost, and the fader pressed after it was not.
        let go = path("go")
        try startSurface(rig, client: "tdmcu", messages: messages, go: go)

        let out = path("out.raw")
        let args = [session] + device.map { $0.replacingOccurrences(of: "OUT=OUT", with: "OUT=\(out)") }
            + ["--midi-in", "jack:tdmcu:midi_out", "--midi-out", "jack:tddump:input", "--midi-surface", "mcu"]
        let screen = try ScreenTmux(self, folder: dir.path, args: args, environment: jack.environment, width: 120)
        screen.waitFor("Lead Vocals", timeout: 20)

        // Connected: the strips' names, and the play LED once the surface's play button rolled.
        let leadV = MackieControl.scribbleMessage(strip: 0, line: 0, text: "Lead Vocals")
        poll("the scribble strips with the track names") {
            let got = dumpedMessages(dumpPath)
            return got.contains(leadV) && got.contains(MackieControl.scribbleMessage(strip: 1, line: 0, text: "Bass"))
        }
        XCTAssertEqual(Array(leadV[7..<14]), Array("Lead V ".utf8))
        XCTAssertTrue(FileManager.default.createFile(atPath: go, contents: nil), "the go file")
        screen.waitFor("PLAYING", timeout: 20)
        poll("the play LED") { dumpedMessages(dumpPath).contains(MackieControl.ledMessage(note: 0x5E, on: true)) }

        // Fader 1 by pitch-bend: the screen's fader follows.
        screen.waitFor("Lead Vocals fader -6.0 dB", timeout: 20)
        // Bank right with two tracks: said, nothing moved, still running.
        screen.waitFor("no more tracks that way", timeout: 20)
        XCTAssertTrue(screen.isRunning)

        // Heard: the steady 0.5 (centred: 0.354 at 0 dB) 6 dB quieter, as only the surface set it.
        let out6 = Float(0.5 * 0.70711 * 0.50119)
        if heard { poll("half a second at -6 dB in what the device played", timeout: 30) {
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: out)) else { return false }
            let frames: Int = data.withUnsafeBytes { raw in
                let f = raw.bindMemory(to: Float.self)
                return stride(from: 0, to: f.count - 1, by: 2).filter { abs(abs(f[$0]) - out6) < out6 * 0.01 }.count
            }
            return frames >= 48000 / 2
        } }

        // Moved from the screen (the fader key, +0.5 dB): the motor follows.
        let before = dumpedMessages(dumpPath).count
        screen.send("0")
        screen.waitFor("Lead Vocals fader -5.5 dB")
        let motor = MackieControl.faderMessage(strip: 0, value: MackieControl.faderValue(decibels: -5.5))
        poll("motor feedback for fader 1") { dumpedMessages(dumpPath).dropFirst(before).contains(motor) }
        XCTAssertTrue(dumpedMessages(dumpPath).dropFirst(before)
            .contains(MackieControl.scribbleMessage(strip: 0, line: 1, text: "-5.5")), "the level on the strip's bottom line")

        screen.send("Space")
    }

    /// Ardour's handshake, meters and jog on the emulated surface: the device queries on
    /// connect, a Logic Control's challenge answered (the bytes Ardour's own expression gives,
    /// computed apart from this code), its confirmation met with the version request; a jog
    /// turn while stopped moves the playhead (the time display says so); playing, the strips'
    /// meters come as channel pressure about ten times a second; Flip puts fader 1 on the
    /// pan (its motor to the centre), and the fader pans.
    func testALogicControlIsAnsweredTheJogMovesThePlayheadAndMetersRunWhilePlaying() throws {
        try handshakeRun(device: ["--device", "jackplaytap:OUT=OUT"])
    }

    /// The same on the JACK backend, whose own MIDI ports carry the surface (its SysEx is
    /// set aside on the audio thread's cycle).
    func testOnTheJACKBackendALogicControlIsAnsweredToo() throws {
        try handshakeRun(device: ["--device", "jack", "--connect", "none"])
    }

    private func handshakeRun(device: [String]) throws {
        let rig = try surfaceRig()
        let dir = rig.dir, jack = rig.jack
        func path(_ name: String) -> String { rig.path(name) }
        let session = path("s.tapedeck")
        try Signals.write([[Float](repeating: 0.5, count: 40 * 48000)], to: path("Lead.wav"))
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", session, path("Lead.wav")]).status, 0)

        let dumpPath = try startDump(rig, client: "tddump", file: "dump.txt")
        // The surface: a Logic Control's challenge (serial "ABCDEFG", challenge 01 02 03 04),
        // its confirmation, ten detents of the jog wheel clockwise, play, then (after three
        // releases of an unused button, 4.5 s) Flip and fader 1 to the top.
        let serial = "41424344454647"
        let messages = ["xF000006610 01" + serial + "01020304F7", "xF000006610 03" + serial + "F7"]
            .map { $0.replacingOccurrences(of: " ", with: "") } + ["176", "60", "10", "144", "94", "127", "144", "94", "0"]
            + ["144", "42", "0", "144", "42", "0", "144", "42", "0", "144", "50", "127", "144", "50", "0", "224", "127", "127"]
        try startSurface(rig, client: "tdmcu", messages: messages)

        let args = [session] + device.map { $0.replacingOccurrences(of: "OUT=OUT", with: "OUT=\(path("out.raw"))") } + ["--midi-in", "jack:tdmcu:midi_out",
                    "--midi-out", "jack:tddump:input", "--midi-surface", "mcu"]
        let screen = try ScreenTmux(self, folder: dir.path, args: args, environment: jack.environment, width: 120)
        screen.waitFor("Lead", timeout: 20)

        // On connect: the device query to a Mackie Control and to an XT.
        poll("the device queries") {
            let got = dumpedMessages(dumpPath)
            return got.contains([0xF0, 0x00, 0x00, 0x66, 0x14, 0x00, 0xF7]) && got.contains([0xF0, 0x00, 0x00, 0x66, 0x15, 0x00, 0xF7])
        }
        // The challenge answered: serial back, then Ardour's response to 01 02 03 04.
        let reply: [UInt8] = [0xF0, 0x00, 0x00, 0x66, 0x10, 0x02, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x05, 0x05, 0x7B, 0x2F, 0xF7]
        poll("the answer to the challenge") { dumpedMessages(dumpPath).contains(reply) }
        poll("the version request after the confirmation") {
            dumpedMessages(dumpPath).contains([0xF0, 0x00, 0x00, 0x66, 0x10, 0x13, 0x00, 0xF7])
        }
        screen.waitFor("Logic Control connected", timeout: 20)
        // Then the strips again, in the Logic Control's header.
        poll("the strips in the Logic Control's header") {
            dumpedMessages(dumpPath).contains([0xF0, 0x00, 0x00, 0x66, 0x10, 0x12, 0x00] + Array("Lead   ".utf8) + [0xF7])
        }

        // The jog turn, while stopped: the time display (CC 0x40-0x49, 0x49 the leftmost)
        // leaves zero before the play LED lights: ten columns of 1/8 s, 1.25 s, in the
        // session's timecode at Ardour's default 30 fps (`HH MMSS FF`): frame 7 of second 1.
        screen.waitFor("PLAYING", timeout: 20)
        var digits = [UInt8](repeating: 0x20, count: 10)
        var beforePlay: String?
        for m in dumpedMessages(dumpPath) {
            if m.count == 3, m[0] == 0xB0, (0x40...0x49).contains(m[1]) { digits[9 - Int(m[1] - 0x40)] = m[2] & 0x3F }
            if m == MackieControl.ledMessage(note: 0x5E, on: true) { beforePlay = String(decoding: digits, as: UTF8.self); break }
        }
        XCTAssertEqual(beforePlay, "00 0001 07", "the jog moved the playhead 1.25 s before play")

        // Playing: meters on (SysEx 20), then the strip's meter about ten times a second. The
        // track's meter (post-fader, before the pan) reads the steady 0.5, -6.02 dB: segment
        // 10 of 13 on Ardour's curve (deflection 84.9 %; -9 dB would be 9, -3 dB 11).
        poll("the meters switched on") {
            dumpedMessages(dumpPath).contains([0xF0, 0x00, 0x00, 0x66, 0x10, 0x20, 0x00, 0x07, 0xF7])
        }
        let start = dumpedMessages(dumpPath).count
        Thread.sleep(forTimeInterval: 2)
        let meters = dumpedMessages(dumpPath).dropFirst(start).filter { $0.count == 2 && $0[0] == 0xD0 && $0[1] >> 4 == 0 }
        XCTAssertGreaterThanOrEqual(meters.count, 8, "about ten meter messages a second for strip 1: \(meters.count) in 2 s")
        XCTAssertLessThanOrEqual(meters.count, 60, "not more than the surface's rate")
        XCTAssertTrue(meters.contains([0xD0, 0x0A]), "the level's segment: \(meters.suffix(5))")

        // Flip: its LED, fader 1's motor to the centred pan, then the fader pans hard right.
        poll("Flip's LED") { dumpedMessages(dumpPath).contains([0x90, 0x32, 0x7F]) }
        XCTAssertTrue(dumpedMessages(dumpPath).contains(MackieControl.faderMessage(strip: 0, value: 8192)), "the motor to the centre")
        screen.waitFor("Lead pan R100", timeout: 20)
        screen.send("Space")
    }
}
