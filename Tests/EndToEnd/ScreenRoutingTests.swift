import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Buses, sends and outputs made on the real screen, driven through tmux at 80×24: a bus and
/// a send with their level and undo, the mixer showing both, the delay compensation a latent
/// bus chain makes, a cycle and `r` on a bus refused on screen, and a cue mix built with keys
/// heard on outputs 3–4 of a four-output device with the fader and the master at −∞.
final class ScreenRoutingTests: XCTestCase {
    private var folder = ""
    private var session = ""
    private let rate = 48000

    override func setUpWithError() throws {
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    private func open(device: String = "offline", environment: [String: String] = [:], width: Int = 80, height: Int = 24) throws -> ScreenTmux {
        try ScreenTmux(self, folder: folder, args: [session, "--device", device], environment: environment, width: width, height: height)
    }

    private func saved() throws -> Session { try SessionFolder(path: session).load() }

    /// The message line (the last row).
    private func messageLine(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).last { !$0.isEmpty }.map(String.init) ?? ""
    }

    /// `B`, a name typed over the one offered, Enter, `s`: a stereo bus, selected.
    private func addBus(_ name: String, on screen: ScreenTmux) {
        screen.send("B")
        screen.waitFor("Name of the new bus")
        for _ in 0..<8 { screen.send("BSpace") }
        screen.send(name, "Enter")
        screen.waitFor("New bus \(name)")
        screen.send("s")
        screen.waitFor("new stereo bus \(name)")
    }

    func testABusAndASendMadeWithKeysAreShownInTheMixerUndoneAndSaved() throws {
        let screen = try open()
        screen.waitFor("Drums")
        addBus("Verb", on: screen)
        let list = screen.waitFor("the bus in the list") { $0.contains("Verb") && $0.contains("bus 2ch") && $0.contains("bus: plays what is sent to it") }
        XCTAssertTrue(list.split(separator: "\n").allSatisfy { $0.count <= 80 }, list)
        // To Drums, four tracks up; send it to the bus and step the level down twice.
        screen.send("Up", "Up", "Up", "Up", "b")
        screen.waitFor("Send Drums to")
        screen.send("Enter")
        screen.waitFor("Drums sends to Verb at 0.0 dB post-fader")
        screen.send("!", "!")
        screen.waitFor("send Drums → Verb -1.0 dB post-fader")
        screen.send("u")
        screen.waitFor("undid: send level Drums to Verb")
        screen.send("v")
        let mixer = screen.waitFor("the mixer with the bus strip and the send") {
            $0.contains("[Mixer]") && $0.contains("bus 2ch") && $0.contains("Verb -0.5") && $0.contains("Master")
        }
        let rows = mixer.split(separator: "\n").map(String.init)
        XCTAssertTrue(rows.contains { $0.hasPrefix("send") && $0.contains("Verb -0.5") }, "the send sits in the named row under Drums:\n\(mixer)")
        XCTAssertTrue(rows.contains { $0.contains("m s R A   m s") }, "the bus strip has M/S, no arm or monitoring:\n\(mixer)")
        // A latent chain on the bus: the output is held back by its look-ahead, and it shows.
        screen.send("Right", "Right", "Right", "Right", "c")
        screen.waitFor("playback chain of Verb")
        screen.send("limiter", "Enter")
        let compensated = screen.waitFor("the delay compensation") { $0.contains("latency 5.0ms") && $0.contains("dly 5.0ms") }
        XCTAssertTrue(compensated.split(separator: "\n")[1].contains("latency 5.0ms"), compensated)
        screen.send("C-s")
        screen.waitFor("saved ")
        let s = try saved()
        XCTAssertEqual(s.tracks.count, 5)
        XCTAssertTrue(s.tracks[4].isBus)
        XCTAssertEqual(s.tracks[4].name, "Verb")
        XCTAssertEqual(s.tracks[4].playbackChain.hasPrefix("limiter"), true, s.tracks[4].playbackChain)
        XCTAssertEqual(s.tracks[0].sends, [Send(bus: "Verb", levelDecibels: -0.5)])
    }

    func testACycleAndRecordingOnABusAreRefusedOnScreenAndNothingChanges() throws {
        let screen = try open()
        screen.waitFor("Drums")
        addBus("Bus 1", on: screen)
        addBus("Bus 2", on: screen)
        // Bus 2 outputs to Bus 1 ...
        screen.send("O")
        screen.waitFor("Output of Bus 2")
        screen.send("Down", "Enter")
        screen.waitFor("Bus 2 outputs to bus:Bus 1")
        screen.send("C-s")
        screen.waitFor("saved ")
        let before = try saved()
        // ... so Bus 1 sending to Bus 2 would feed itself.
        screen.send("Up", "b")
        screen.waitFor("Send Bus 1 to")
        screen.send("Enter")
        let refused = screen.waitFor("routing cycle: Bus 1 → Bus 2 → Bus 1")
        XCTAssertEqual(messageLine(refused).trimmingCharacters(in: .whitespaces), "routing cycle: Bus 1 → Bus 2 → Bus 1")
        XCTAssertFalse(refused.contains("demo.tapedeck *"), "nothing changed: the session is not dirty\n\(refused)")
        screen.send("r")
        let noRecord = screen.waitFor("Bus 1 is a bus: a bus has no input to record")
        XCTAssertTrue(noRecord.contains("STOPPED"), noRecord)
        screen.send("a")
        screen.waitFor("Bus 1 is a bus: a bus has no input to arm")
        screen.send("Enter")
        screen.waitFor("Bus 1 is a bus: a bus has no regions")
        XCTAssertTrue(screen.isRunning)
        screen.send("C-s")
        screen.waitFor("saved ")
        XCTAssertEqual(try saved(), before)
    }

    /// A cue mix made on the screen: Drums sent pre-fader to a bus routed to out:3-4, the
    /// Drums fader and the master at −∞. The screen opened the device with two outputs; `d`,
    /// Enter opens it again with the four the routing names. Played to the end on `duplextap`
    /// (OUT holds only what was played, four float channels a frame): outputs 1–2 silent, 3–4
    /// the drums.
    func testACueMixBuiltWithKeysPlaysOnOutputsThreeAndFourWithTheFadersDown() throws {
        let out = folder + "/out.raw"
        let screen = try open(device: "duplextap:OUT=\(out)", environment: RecordSupport.environment, width: 100, height: 30)
        screen.waitFor("STOPPED")
        addBus("Cue", on: screen)
        screen.send("O")
        screen.waitFor("the device plays 2 outputs")
        screen.send("Down", "Down", "Down", "Down", "Enter")
        screen.waitFor("Device outputs of Cue")
        screen.send("3-4", "Enter")
        screen.waitFor("Cue outputs to out:3-4 (the device has 2: d, Enter reopens it with 4)")
        screen.send("Up", "Up", "Up", "Up", "b")
        screen.waitFor("Send Drums to")
        screen.send("Enter", "H")
        screen.waitFor("send Drums → Cue 0.0 dB pre-fader")
        for _ in 0..<25 { screen.send("(") }
        screen.waitFor("Drums fader -inf dB")
        screen.send("v", "Right", "Right", "Right", "Right", "Right")
        for _ in 0..<25 { screen.send("PageDown") }
        screen.waitFor("master fader -inf dB")
        screen.send("d")
        screen.waitFor("Audio device")
        screen.send("Enter")
        screen.waitFor("device: duplextap")
        // The bus's output list now offers the four outputs.
        screen.send("Left", "O")
        screen.waitFor("the device plays 4 outputs")
        screen.send("Escape")
        screen.send("C-s")
        screen.waitFor("saved ")
        let s = try saved()
        XCTAssertEqual(s.tracks[4].output, .device([3, 4]))
        XCTAssertEqual(s.tracks[0].sends, [Send(bus: "Cue", preFader: true)])
        XCTAssertEqual(s.tracks[0].gainDecibels, Fader.silentDecibels)
        XCTAssertEqual(s.masterGainDecibels, Fader.silentDecibels)

        let before = size(out)
        screen.send("Space")
        // Four float channels: 16 bytes a frame; the demo lasts 8 s (what the device had
        // written before play, a few hundred frames of it, is not counted here).
        let deadline = Date().addingTimeInterval(20)
        while size(out) - before < 79 * rate * 16 / 10 && Date() < deadline { usleep(20_000) }
        screen.waitFor("the end of the session", timeout: 10) { $0.contains("STOPPED") && $0.contains("0:00:08.000") }
        let raw = try Data(contentsOf: URL(fileURLWithPath: out)).dropFirst(before)
        let samples = raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertGreaterThanOrEqual(samples.count, 79 * rate * 4 / 10, "the session reached the device")
        let frames = samples.count / 4
        func channel(_ c: Int) -> [Float] { (0..<frames).map { samples[$0 * 4 + c] } }
        let (one, two, three, four) = (channel(0), channel(1), channel(2), channel(3))
        XCTAssertEqual(one.map(abs).max(), 0, "the master is at -inf: outputs 1-2 are silent")
        XCTAssertEqual(two.map(abs).max(), 0)
        XCTAssertEqual(zip(three, four).filter { $0 != $1 }.count, 0, "a mono track sent centred: both sides of the cue alike")
        XCTAssertGreaterThan(three.filter { abs($0) > 0.01 }.count, frames / 4, "the cue carries the drums")
        XCTAssertLessThanOrEqual(three.map(abs).max() ?? 0, 1)
        // And it is the drums: one lag lines the cue up with the Drums file almost perfectly.
        let drums = try Signals.read(session + "/audio/drums.wav").channels[0]
        XCTAssertGreaterThan(bestCorrelation(three, drums, from: rate, length: rate / 4, maxLag: 2048), 0.99)
    }

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// The highest normalised correlation of `played[from..<from+length]` with `source` at a
    /// lag of 0…`maxLag` frames (the device's output starts at some frame of the timeline).
    private func bestCorrelation(_ played: [Float], _ source: [Float], from: Int, length: Int, maxLag: Int) -> Double {
        guard played.count >= from + length else { return 0 }
        var best = 0.0
        for lag in 0...maxLag {
            let start = from - lag
            guard start >= 0, start + length <= source.count else { continue }
            var xy = 0.0, xx = 0.0, yy = 0.0
            for i in 0..<length {
                let x = Double(played[from + i]), y = Double(source[start + i])
                xy += x * y; xx += x * x; yy += y * y
            }
            if xx > 0 && yy > 0 { best = max(best, xy / (xx * yy).squareRoot()) }
        }
        return best
    }
}
