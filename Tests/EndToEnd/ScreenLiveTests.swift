import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// The screen shows what is happening while it happens (issue 44), in tmux on JACK: a take of
/// another program's sine (jack_simple_client on the test's private dummy server) grows on
/// its track's row while the status reads REC — plain, on two tracks at once, punched in —
/// a kept retroactive take is drawn at once, and a latch pass shows the lane's new values
/// before the pass ends.
final class ScreenLiveTests: XCTestCase {
    private var folder = ""
    private var session = ""
    /// The timeline's first column at 100 columns (the list is 45 wide, then the separator).
    private let timelineLeft = 46

    override func setUpWithError() throws {
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    /// jack_simple_client playing its sine (-14 dBFS) on `jack`, until the test ends.
    private func startSine(_ jack: JackServer) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jack_simple_client") else {
            throw XCTSkip("jack_simple_client (jackd2's example clients) is not installed")
        }
        let sine = try SpawnedChild(["/usr/bin/jack_simple_client"], environment: jack.environment)
        addTeardownBlock { _ = sine.kill(SIGTERM) }
        for _ in 0..<100 {
            let out = folder + "/lsp.txt"
            _ = try SpawnedChild(["/usr/bin/jack_lsp"], environment: jack.environment, stdoutPath: out).wait(timeoutSeconds: 10)
            if ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("jack_simple_client:output1") { return }
            usleep(50_000)
        }
        XCTFail("jack_simple_client's ports never appeared")
    }

    /// The screen as a JACK client whose inputs hear the sine.
    private func open(_ jack: JackServer) throws -> ScreenTmux {
        try ScreenTmux(self, folder: folder, args: [session, "--device", "jack", "--connect", "jack_simple_client:output"],
                       environment: jack.environment, width: 100, height: 30)
    }

    /// The timeline columns (0 = its first) where `track`'s lane holds a waveform cell on its
    /// bottom row, in `text` (a capture of the 100-column screen).
    private func waveform(_ text: String, track: String) -> [Int] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0) }
        guard let row = lines.firstIndex(where: { String($0.prefix(timelineLeft - 1)).contains(" \(track) ") }),
              row + 1 < lines.count else { return [] }
        let bottom = lines[row + 1]
        return (timelineLeft..<bottom.count).filter { "▁▂▃▄▅▆▇█".contains(bottom[$0]) }.map { $0 - timelineLeft }
    }

    func testATakeOfAnotherProgramsSineGrowsOnItsRowWhileTheStatusReadsRec() throws {
        let jack = try JackServer.start(self, folder: folder)
        try startSine(jack)
        let screen = try open(jack)
        screen.waitFor("STOPPED")
        // A second track recording the same input: both rows grow at once.
        screen.send("n")
        screen.waitFor("Track 5")
        screen.send("a")
        screen.waitFor("arm Track 5") { $0.contains("arm Track 5") || $0.contains("Track 5") && $0.contains("R -") }
        XCTAssertEqual(waveform(screen.capture(), track: "Vocal"), [], "nothing on the Vocal's row before the take")
        screen.send("r")
        let text = screen.waitFor("ten waveform cells on both rows while REC", timeout: 15) {
            $0.contains("● REC") && self.waveform($0, track: "Vocal").count >= 10 && self.waveform($0, track: "Track 5").count >= 10
        }
        // From the record point (the playhead, at the start) on, column after column.
        let cells = waveform(text, track: "Vocal")
        XCTAssertEqual(cells.first, 0, text)
        XCTAssertEqual(cells, Array(0..<cells.count), "one growing run from the record point: \(cells)")
        screen.send("r")
        let after = screen.waitFor("recorded ", timeout: 10)
        XCTAssertGreaterThanOrEqual(waveform(after, track: "Vocal").count, cells.count, "placed, drawn from its peaks:\n\(after)")
        let vocal = try XCTUnwrap(try SessionFolder(path: session).load().tracks.first { $0.name == "Vocal" })
        XCTAssertEqual(vocal.regions.count, 1)
    }

    func testAPunchedTakeGrowsFromThePunchInWhileTheStatusReadsRec() throws {
        let jack = try JackServer.start(self, folder: folder)
        try startSine(jack)
        let screen = try open(jack)
        screen.waitFor("STOPPED")
        // Punch in at 2 s (four beats on), out at 6 s; the playhead back at the start.
        screen.send("Right", "Right", "Right", "Right")
        screen.waitFor("0:00:02.000")
        screen.send("\\;")
        screen.waitFor("punch 00:02.000-")
        for _ in 0..<8 { screen.send("Right") }
        screen.waitFor("0:00:06.000")
        screen.send("'", "Home", "p")
        screen.waitFor("PUNCH on")
        screen.send("r")
        let preRoll = screen.waitFor("the pre-roll", timeout: 10) { $0.contains("PRE-ROLL") || $0.contains("COUNT-IN") }
        XCTAssertEqual(waveform(preRoll, track: "Vocal"), [], "nothing kept before the punch-in:\n\(preRoll)")
        let text = screen.waitFor("ten waveform cells while REC", timeout: 15) {
            $0.contains("● REC") && self.waveform($0, track: "Vocal").count >= 10
        }
        // 125 ms a column: the punch-in at 2 s is column 16.
        let cells = waveform(text, track: "Vocal")
        XCTAssertEqual(cells.first ?? -1, 16, accuracy: 1, "from the punch-in on: \(cells)\n\(text)")
        screen.send("r")
        screen.waitFor("recorded ", timeout: 10)
    }

    func testAKeptRetroactiveTakeIsDrawnAtOnce() throws {
        let jack = try JackServer.start(self, folder: folder)
        try startSine(jack)
        let screen = try open(jack)
        screen.waitFor("LISTENING")
        usleep(2_500_000)
        screen.send("R")
        let text = screen.waitFor("the kept take's waveform", timeout: 10) {
            $0.contains("kept ") && self.waveform($0, track: "Vocal").count >= 10
        }
        XCTAssertEqual(waveform(text, track: "Vocal").first, 0, text)
    }

    func testALatchPassShowsTheLanesNewValuesBeforeThePassEnds() throws {
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline"], width: 100, height: 30)
        screen.waitFor("STOPPED")
        // A gain lane on the Drums (one point, at its fader's -5 dB), in latch; then the track's own row.
        screen.send("E")
        screen.waitFor("New automation lane")
        screen.send("g", "a", "i", "n", "Enter")
        screen.waitFor("a lane, one point")
        screen.send("Y", "Y")
        screen.waitFor("Drums gain: latch")
        screen.send("Up")
        screen.send("Space")
        screen.waitFor("PLAYING")
        usleep(500_000)
        screen.send("0", "0", "0")
        // While it still plays, the lane reads the value written (-3.5 dB) and the points so far.
        let text = screen.waitFor("the lane's new value while playing", timeout: 5) { text in
            let lane = text.split(separator: "\n").first { $0.contains(" gain ") && $0.contains("latch") }.map(String.init) ?? ""
            return text.contains("PLAYING") && lane.contains(" -3.5 ")
        }
        let lane = text.split(separator: "\n").first { $0.contains(" gain ") && $0.contains("latch") }.map(String.init) ?? ""
        let points = lane.split(separator: " ").firstIndex(of: "pt").map { Int(lane.split(separator: " ")[$0 - 1]) ?? 0 } ?? 0
        XCTAssertGreaterThan(points, 1, "the points written so far: \(lane)")
        XCTAssertTrue(lane.contains("●"), "drawn on the timeline: \(lane)")
        // The pass ends with the session (8 s): the result stays, as an edit.
        let done = screen.waitFor("automation written: Drums gain", timeout: 15)
        XCTAssertTrue(done.contains("STOPPED"), done)
    }
}
