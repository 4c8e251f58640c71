import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// The screen on a real ALSA device: the test config's file-tap devices (no sound card),
/// driven through tmux. They are not paced (they run many times faster than real time), so
/// the tests wait on what ends by itself (the session's end, a punch end) or stop quickly.
/// The screen keeps its device open from the start, capture included: playback is checked
/// on `duplextap`, whose OUT holds only what was played.
final class ScreenEngineTests: XCTestCase {
    private var folder = ""
    private var session = ""
    private let rate = 48000

    override func setUpWithError() throws {
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    private func open(device: String, environment: [String: String] = RecordSupport.environment, width: Int = 100) throws -> ScreenTmux {
        try ScreenTmux(self, folder: folder, args: [session, "--device", device], environment: environment, width: width)
    }

    /// Waits up to `timeout` seconds for `condition`; fails the test when it never holds.
    private func wait(_ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
                      _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return }
            usleep(20_000)
        }
        XCTFail("timed out waiting for \(what)", file: file, line: line)
    }

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    private func floats(_ path: String) throws -> [Float] {
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        return raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Disarms the Vocal (track 4), so the screen does not listen for retroactive capture: a
    /// filetap device writes what it captures to OUT too, which would mix into the output.
    private func disarmVocal(_ screen: ScreenTmux) {
        screen.send("Down", "Down", "Down", "a")
        screen.waitFor("disarm Vocal") { !$0.contains("LISTENING") && $0.contains("demo.tapedeck *") }
    }

    /// A punch range of its own over bars 1-5 (in at the start, out 16 beat steps on: 8 s at
    /// 120 BPM), switched on, the playhead back at the start: a take ends by itself at bar 5.
    private func punchTheFirstFourBars(_ screen: ScreenTmux) {
        screen.send("\\;")
        screen.waitFor("punch 00:00.000-")
        for _ in 0..<16 { screen.send("Right") }
        screen.waitFor("0:00:08.000")
        screen.send("'", "Home", "p")
        screen.waitFor("PUNCH on")
    }

    private func vocalRegions() throws -> [Region] {
        let loaded = try SessionFolder(path: session).load()
        return try XCTUnwrap(loaded.tracks.first { $0.name == "Vocal" }).regions
    }

    func testPlayingTheDemoToItsEndSendsTheMixToTheDeviceAndStops() throws {
        let out = folder + "/out.raw"
        let screen = try open(device: "duplextap:OUT=\(out)")
        let text = screen.waitFor("STOPPED")
        disarmVocal(screen)
        // The device stays open from the start: what play sends is appended after what is there.
        let before = size(out)
        XCTAssertTrue(text.contains("device duplextap:OUT="), "the device row names the device:\n\(text)")
        XCTAssertFalse(text.contains("offline"), "a device that opens is not offline:\n\(text)")
        screen.send("Space")
        // Float stereo: 8 bytes a frame; the demo lasts 8 s.
        wait("the whole mix to reach the device") { size(out) - before >= 8 * rate * 8 }
        // The transport stops by itself at the session's end: stopped, the playhead there.
        screen.waitFor("the end of the session") { $0.contains("STOPPED") && $0.contains("0:00:08.000") }
        let samples = Array(try floats(out).dropFirst(before / 4))
        let loud = samples.filter { abs($0) > 0.01 }.count
        XCTAssertGreaterThan(loud, samples.count / 4, "the demo mix is audible, not silence")
        XCTAssertLessThanOrEqual(samples.map(abs).max() ?? 0, 1.0)
    }

    func testLoopPlaysOnUntilSpaceStopsIt() throws {
        let out = folder + "/out.raw"
        let screen = try open(device: "duplextap:OUT=\(out)")
        screen.waitFor("STOPPED")
        disarmVocal(screen)
        let before = size(out)
        screen.send("l")
        screen.waitFor("LOOP on")
        screen.send("Space")
        screen.waitFor("PLAYING")
        // The loop (bars 1-5, 8 s) never ends by itself: after several laps it still plays.
        wait("two laps of the loop") { size(out) - before >= 2 * 8 * rate * 8 }
        XCTAssertTrue(screen.capture().contains("PLAYING"))
        screen.send("Space")
        screen.waitFor("STOPPED")
        let stopped = size(out)
        usleep(300_000)
        XCTAssertEqual(size(out), stopped, "nothing reaches the device once stopped")
    }

    func testAPunchedTakeOfTheArmedVocalLandsOnItsTrackAlignedAndSaved() throws {
        // filetap48 reads IN as S16 mono at 48 kHz; plug converts it to what the engine asks.
        let input = folder + "/in.raw"
        let sine = Signals.sine(hertz: 1000, amplitude: 0.5, frames: 12 * rate)
        RecordSupport.writeRaw(sine.map { Int32(($0 * 32767).rounded()) }, bits: 16, to: input)
        let screen = try open(device: "filetap48:IN=\(input)")
        screen.waitFor("STOPPED")
        punchTheFirstFourBars(screen)
        screen.send("r")
        screen.waitFor("recorded 0:00:08.000 on Vocal")
        screen.waitFor("STOPPED")
        let regions = try vocalRegions()
        XCTAssertEqual(regions.count, 1, "the take was saved onto the Vocal track")
        let region = try XCTUnwrap(regions.first)
        XCTAssertEqual(region.timelineStartFrame, 0)
        XCTAssertEqual(region.lengthFrames, Int64(8 * rate), "the punch range, to the frame")
        XCTAssertEqual(region.sourceOffsetFrame, 0, "the engine's gate starts the file at the punch start")
        XCTAssertEqual(region.fadeInFrames, 240, "punched in with 5 ms crossfades")
        let path = session + "/" + region.file
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".recording"), "the crash marker is gone once saved")
        let take = try Signals.read(path)
        XCTAssertEqual(take.channels.count, 1)
        let body = Array(take.channels[0][Int(region.sourceOffsetFrame)...])
        XCTAssertEqual(body.count, 8 * rate)
        // What came in is the sine, unchanged but for 16 → 24-bit steps.
        XCTAssertEqual(body.map(abs).max() ?? 0, 0.5, accuracy: 0.001)
        let hz = Frequency.estimate(body, sampleRate: rate, range: 0..<body.count)
        XCTAssertEqual(hz, 1000, accuracy: 2)
        // Ctrl-S after the take: the saved session keeps it.
        screen.send("C-s")
        screen.waitFor("saved ")
        XCTAssertEqual(try vocalRegions(), regions)
    }

    /// `r` records every armed track at once: Bass armed beside the Vocal, both listening to
    /// input 1, give two takes of one pass, bit-identical, on the same frame; one `u` undoes both.
    func testRecordingTakesEveryArmedTrackInOnePassAndOneUndoRemovesThePass() throws {
        let input = folder + "/in.raw"
        let sine = Signals.sine(hertz: 500, amplitude: 0.4, frames: 12 * rate)
        RecordSupport.writeRaw(sine.map { Int32(($0 * 32767).rounded()) }, bits: 16, to: input)
        let screen = try open(device: "filetap48:IN=\(input)")
        screen.waitFor("STOPPED")
        screen.send("Down", "a")
        screen.waitFor("Bass armed") { $0.contains("2 Bass         R") }
        punchTheFirstFourBars(screen)
        screen.send("r")
        screen.waitFor("recorded 0:00:08.000 on Bass, Vocal (u removes them)")
        let loaded = try SessionFolder(path: session).load()
        func take(_ name: String) throws -> Region {
            let track = try XCTUnwrap(loaded.tracks.first { $0.name == name })
            return try XCTUnwrap(track.regions.first { $0.file.hasPrefix("audio/take-") }, "\(name) has its take")
        }
        let bass = try take("Bass"), vocal = try take("Vocal")
        XCTAssertNotEqual(bass.file, vocal.file, "each track records to its own file")
        XCTAssertEqual(bass.timelineStartFrame, vocal.timelineStartFrame, "one pass starts on one frame")
        XCTAssertEqual(bass.lengthFrames, Int64(8 * rate))
        XCTAssertEqual(vocal.lengthFrames, Int64(8 * rate))
        let a = try Signals.read(session + "/" + bass.file), b = try Signals.read(session + "/" + vocal.file)
        XCTAssertEqual(a.channels, b.channels, "both tracks heard input 1: the takes are bit-identical")
        XCTAssertEqual(a.channels.first?.map(abs).max() ?? 0, 0.4, accuracy: 0.001)
        screen.send("u")
        screen.waitFor("undid: record on Bass, Vocal")
        let undone = screen.waitFor("demo.tapedeck *")
        XCTAssertFalse(undone.contains("take 1"), undone)
        screen.send("C-s")
        screen.waitFor("saved ")
        let after = try SessionFolder(path: session).load()
        XCTAssertFalse(after.tracks.flatMap(\.regions).contains { $0.file.hasPrefix("audio/take-") }, "one undo removed the whole pass")
    }

    /// The master's EBU R128 loudness, measured by the engine while the demo plays on the
    /// offline clock (paced in real time): `U` shows it, `X` starts it afresh.
    func testTheLoudnessLineShowsWhatThePlayingMixMeasuresAndXResetsIt() throws {
        let screen = try open(device: "offline", width: 120)
        screen.waitFor("STOPPED")
        screen.send("Space")
        screen.waitFor("PLAYING")
        screen.send("U")
        func integrated(_ text: String) -> Double? {
            guard let line = text.split(separator: "\n").first(where: { $0.contains("master M ") }),
                  let i = line.range(of: " I ") else { return nil }
            return Double(line[i.upperBound...].prefix { $0 != " " }).flatMap { $0.isFinite ? $0 : nil }
        }
        // A gated integrated value needs 400 ms of audio; the demo mix reads about -19 LUFS.
        let measured = screen.waitFor("an integrated loudness", timeout: 10) { integrated($0) != nil }
        let lufs = try XCTUnwrap(integrated(measured), measured)
        XCTAssertEqual(lufs, -19, accuracy: 4, "the demo's mix, measured live: \(measured)")
        screen.waitFor("STOPPED", timeout: 15)
        screen.send("X")
        screen.waitFor("meters reset")
        screen.waitFor("the measurement starts afresh") { $0.contains("I -inf LUFS") }
    }

    func testStoppingARecordingByKeyKeepsTheTakeAndUndoRemovesIt() throws {
        let screen = try open(device: "filetap:IN=/dev/zero")
        screen.waitFor("STOPPED")
        screen.send("r")
        screen.waitFor("● REC")
        screen.send("r")
        screen.waitFor("recorded ")
        let text = screen.waitFor("STOPPED")
        XCTAssertFalse(text.contains("demo.tapedeck *"), "the take is saved at once:\n\(text)")
        let region = try XCTUnwrap(try vocalRegions().first)
        XCTAssertGreaterThan(region.lengthFrames, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: session + "/" + region.file))
        screen.send("u")
        screen.waitFor("undid: record on Vocal")
        screen.waitFor("demo.tapedeck *")
    }

    func testADeviceFailingWhilePlayingStopsTheTransportWithOneLine() throws {
        // /dev/full opens, then every write fails: the engine stops by itself.
        let screen = try open(device: "filetap:OUT=/dev/full")
        screen.waitFor("STOPPED")
        screen.send("Space")
        let text = screen.waitFor("the failure on the message line") {
            $0.contains("audio device 'filetap:OUT=/dev/full'") && $0.contains("STOPPED")
        }
        XCTAssertFalse(text.contains("ALSA lib"), "libasound's own report stays off the screen:\n\(text)")
        XCTAssertTrue(screen.isRunning)
    }

    func testSpeedAndPitchChangeWhilePlaying() throws {
        let screen = try open(device: "filetap:OUT=/dev/null")
        screen.waitFor("STOPPED")
        disarmVocal(screen)
        screen.send("l")
        screen.waitFor("LOOP on")
        screen.send("Space")
        screen.waitFor("PLAYING")
        screen.send("<")
        screen.waitFor("speed 0.90x")
        screen.send("M")
        screen.waitFor("speed mode: varispeed")
        screen.send("}")
        screen.waitFor("pitch +1")
        XCTAssertTrue(screen.capture().contains("PLAYING"), "live changes keep it playing")
        screen.send("Space")
        screen.waitFor("STOPPED")
    }

    /// The first speed change builds Rubber Band's stretchers (seconds of CPU in a debug
    /// build): in the background, so on a device paced in real time the clock keeps moving
    /// within 200 ms and the control socket keeps answering within 100 ms meanwhile. (Built on
    /// the UI thread, it froze both for 4–10 s.)
    func testTheFirstSpeedChangeNeverFreezesTheClockOrTheControlSocket() throws {
        let jack = try JackServer.start(self, folder: folder)
        let run = folder + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let env = jack.environment.merging(["XDG_RUNTIME_DIR": run]) { $1 }
        let screen = try open(device: "jacktap:OUT=/dev/null", environment: env, width: 120)
        screen.waitFor("STOPPED")
        disarmVocal(screen)
        screen.send("l")
        screen.waitFor("LOOP on")
        let pid = try XCTUnwrap(screen.panePID)
        var socketPath = ""
        wait("the control socket") {
            socketPath = ((try? FileManager.default.contentsOfDirectory(atPath: run + "/tapedeck")) ?? [])
                .first { $0.hasSuffix(".sock") }.map { run + "/tapedeck/" + $0 } ?? ""
            return !socketPath.isEmpty
        }
        screen.send("Space")
        screen.waitFor("PLAYING")
        XCTAssertNotNil(ControlProbe.status(socketPath), "the socket answers before the change")
        screen.send(">")
        // From the key on: every 50 ms the socket answers (timed), and the clock never stands
        // still for 200 ms, until the stretcher is built and the change is heard.
        var slowest = 0.0
        var unanswered = 0
        var lastPosition = -1, lastMove = Date()
        var longestStill = 0.0
        let deadline = Date().addingTimeInterval(8)
        while Date() < deadline {
            let asked = Date()
            guard let answer = ControlProbe.status(socketPath) else { unanswered += 1; usleep(50_000); continue }
            slowest = max(slowest, Date().timeIntervalSince(asked))
            if let position = answer["position_frame"] as? Int {
                if position != lastPosition { lastPosition = position; lastMove = Date() }
                longestStill = max(longestStill, Date().timeIntervalSince(lastMove))
            }
            usleep(50_000)
        }
        // Measured with others building: the slowest answer 18–37 ms, the clock still at most
        // 54–116 ms (a status every 50 ms). The bounds are ten times that; the goals (< 100 ms,
        // < 200 ms) are `tapedeck bench budgets`'s. A build in the way (a second or more in
        // this debug build) still fails them.
        print("first speed change: slowest status answer \(slowest) s, clock still at most \(longestStill) s")
        XCTAssertEqual(unanswered, 0, "the control socket stopped answering after the first speed change")
        XCTAssertLessThan(slowest, 0.5, "ctl status took \(slowest) s to answer after the first speed change")
        XCTAssertLessThan(longestStill, 1.0, "the clock stood still for \(longestStill) s after the first speed change")
        // Then the change is heard: the clock runs at 1.1× (however long the build took).
        var heard = false
        let built = Date().addingTimeInterval(90)
        while !heard && Date() < built {
            guard let a = ControlProbe.status(socketPath)?["position_frame"] as? Int else { usleep(100_000); continue }
            let t0 = Date()
            usleep(500_000)
            guard let b = ControlProbe.status(socketPath)?["position_frame"] as? Int, b > a else { continue }
            let rate = Double(b - a) / Date().timeIntervalSince(t0) / Double(self.rate)
            heard = rate > 1.06 && rate < 1.14
        }
        XCTAssertTrue(heard, "the speed change was never heard")
        let bar = screen.waitFor("the header without the building mark") { $0.contains("1.10x stretch ") }
        XCTAssertFalse(bar.contains("stretch…"), bar)
        XCTAssertTrue(screen.isRunning)
        _ = pid
    }

    func testRecordingIsRefusedAtAnotherSpeed() throws {
        let screen = try open(device: "filetap:IN=/dev/zero")
        screen.waitFor("STOPPED")
        screen.send(">")
        screen.waitFor("speed 1.10x")
        screen.send("r")
        screen.waitFor("recording plays at 1.00x")
        XCTAssertFalse(screen.capture().contains("● REC"))
        XCTAssertEqual(try vocalRegions(), [])
    }

    func testAnUnknownDeviceOpensOfflineAndSaysWhy() throws {
        let screen = try open(device: "nosuchpcm")
        let text = screen.waitFor("offline: audio device 'nosuchpcm'")
        XCTAssertTrue(text.contains("Drums"), "the screen still opens:\n\(text)")
        screen.send("r")
        screen.waitFor("no audio device: recording needs one")
    }

    func testAMissingALSAConfigOpensOfflineAndSaysWhy() throws {
        let screen = try open(device: "filetap", environment: ["TAPEDECK_ALSA_CONFIG": folder + "/missing.conf"], width: 200)
        screen.waitFor("cannot read ALSA config")
        screen.send("Space")
        screen.waitFor("PLAYING")
        screen.send("Space")
        screen.waitFor("STOPPED")
    }
}
