import Foundation
import XCTest

/// The interactive screen, driven through tmux on the demo session.
final class ScreenTests: XCTestCase {
    private var folder = ""
    private var session = ""

    override func setUpWithError() throws {
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    private func open(_ extra: [String] = [], environment: [String: String] = [:], width: Int = 100, height: Int = 30) throws -> ScreenTmux {
        // Offline on purpose: on a machine with a sound card the default device would open.
        try ScreenTmux(self, folder: folder, args: [session, "--device", "offline"] + extra, environment: environment,
                       width: width, height: height)
    }

    func testTheScreenOpensOnTheDemoSessionWithTrackNamesAndTheOfflineDevice() throws {
        let screen = try open()
        let text = screen.waitFor("Drums")
        for name in ["Bass", "Keys", "Vocal", "STOPPED", "120.0 BPM", "4/4", "offline", "0:00:00.000", "1|1|0"] {
            XCTAssertTrue(text.contains(name), "missing \(name) in\n\(text)")
        }
    }

    func testSpaceStartsAndStopsPlayback() throws {
        let screen = try open()
        screen.waitFor("STOPPED")
        screen.send("Space")
        screen.waitFor("PLAYING")
        // The position moves while playing.
        screen.waitFor("the clock to move") { !$0.contains("0:00:00.000") }
        screen.send("Space")
        screen.waitFor("STOPPED")
    }

    func testRecordIsRefusedWithoutADevice() throws {
        let screen = try open()
        screen.waitFor("STOPPED")
        screen.send("r")
        let text = screen.waitFor("no audio device: recording needs one")
        XCTAssertFalse(text.contains("● REC"))
    }

    func testRecordShowsRecWhenTheLinkCanRecord() throws {
        let screen = try open(environment: ["TAPEDECK_FAKE_RECORD": "1"])
        screen.waitFor("STOPPED")
        screen.send("r")
        screen.waitFor("● REC")
        screen.send("r")
        screen.waitFor("STOPPED")
    }

    func testMuteShowsItsIndicatorOnTheSelectedTrack() throws {
        let screen = try open()
        let before = screen.waitFor("Drums")
        let drumsLine = { (text: String) in text.split(separator: "\n").first { $0.contains("Drums") }.map(String.init) ?? "" }
        XCTAssertTrue(drumsLine(before).contains("- - -"), drumsLine(before))
        screen.send("m")
        let after = screen.waitFor("the mute flag") { drumsLine($0).contains("- M -") }
        XCTAssertTrue(after.contains("demo.tapedeck *"), "an edit marks the session unsaved")
    }

    func testHelpOverlayListsTheKeys() throws {
        let screen = try open()
        screen.waitFor("STOPPED")
        screen.send("?")
        // (Waited for whole: on a loaded machine the overlay can be caught half drawn.)
        let entries = ["play / stop", "record (armed tracks)", "loop start at playhead", "loop-start", "mute track", "scroll"]
        let text = screen.waitFor("the help's first page") { page in entries.allSatisfy { page.contains($0) } }
        for entry in entries {
            XCTAssertTrue(text.contains(entry), "help lacks \(entry)")
        }
        // Page by page to the end (the list is longer than any page): every key on one of them.
        var pages = text
        for _ in 0..<10 {
            screen.send("PageDown")
            pages += screen.waitFor("the next page") { _ in true }
        }
        let end = screen.waitFor("the last page") { $0.contains("Panels and dialogs") }
        pages += end
        for entry in ["undo", "ctrl-r", "ctrl-s", "quit", "new-bus", "send-level", "solo-safe"] {
            XCTAssertTrue(pages.contains(entry), "help lacks \(entry)")
        }
        screen.send("Escape")
        screen.waitFor("the help to close") { !$0.contains("play / stop") }
    }

    func testThemeChangesTheColours() throws {
        let plain = try open()
        let defaultColors = plain.waitFor("colours", colors: true) { $0.contains("Drums") && $0.contains("\u{1B}[") }
        plain.kill()
        let light = try ScreenTmux(self, folder: folder + "/config", args: [session, "--theme", "light", "--device", "offline"])
        let lightColors = light.waitFor("colours", colors: true) { $0.contains("Drums") && $0.contains("\u{1B}[") }
        XCTAssertNotEqual(escapes(defaultColors), escapes(lightColors))
        XCTAssertFalse(lightColors.contains("theme"), "no theme problem is reported")
    }

    func testNoColorLeavesOnlyAttributes() throws {
        let screen = try open(environment: ["NO_COLOR": "1"])
        let text = screen.waitFor("Drums screen", colors: true) { $0.contains("Drums") }
        let colourCodes = escapes(text).filter { $0.contains("38;5") || $0.contains("48;5") || $0.range(of: #"\[(3|4)[0-7]m"#, options: .regularExpression) != nil }
        XCTAssertEqual(colourCodes, [], "NO_COLOR set, yet colour escapes appear")
    }

    func testAMalformedThemeFallsBackAndNamesTheLine() throws {
        try FileManager.default.createDirectory(atPath: folder + "/config/tapedeck/themes", withIntermediateDirectories: true)
        try "name = bad\nplaying = green\n".write(toFile: folder + "/config/tapedeck/themes/bad.theme", atomically: true, encoding: .utf8)
        let screen = try open(["--theme", "bad"])
        let text = screen.waitFor("bad.theme line 2")
        XCTAssertTrue(text.contains("Drums"), "the screen still opens with the default theme")
    }

    func testABadKeysFileLineIsReportedByNumberAndGoodLinesApply() throws {
        try "# keys\nplay = p\nfrobnicate = x\n".write(toFile: folder + "/config/tapedeck/keys", atomically: true, encoding: .utf8)
        let screen = try open()
        screen.waitFor("keys line 3")
        screen.send("p")
        screen.waitFor("PLAYING")
    }

    func testResizingKeepsTheLayoutWholeAndTooSmallShowsANotice() throws {
        let screen = try open()
        screen.waitFor("Vocal")
        screen.resize(width: 70, height: 16)
        var text = screen.waitFor("the small layout") { $0.contains("Drums") && $0.split(separator: "\n").count <= 16 }
        XCTAssertTrue(text.contains("STOPPED"))
        screen.resize(width: 40, height: 8)
        text = screen.waitFor("Terminal too small")
        XCTAssertFalse(text.contains("Drums"))
        screen.resize(width: 140, height: 40)
        text = screen.waitFor("the large layout") { $0.contains("Vocal") && !$0.contains("too small") }
        XCTAssertTrue(text.contains("Keys"))
        XCTAssertTrue(text.split(separator: "\n").contains { $0.contains("? help") }, "the status line is at the bottom")
    }

    func testQuitAsksWhenThereAreUnsavedChanges() throws {
        let screen = try open()
        screen.waitFor("Vocal")
        screen.send("n")
        screen.waitFor("Track 5")
        screen.send("q")
        screen.waitFor("Unsaved changes")
        XCTAssertTrue(screen.isRunning)
        screen.send("n")
        screen.waitFor("not quitting")
        screen.send("q")
        screen.waitFor("Unsaved changes")
        screen.send("y")
        let deadline = Date().addingTimeInterval(5)
        while screen.isRunning && Date() < deadline { usleep(50_000) }
        XCTAssertFalse(screen.isRunning, "y quits")
    }

    func testSaveWritesTheSessionAndQuitThenNeedsNoAnswer() throws {
        let screen = try open()
        screen.waitFor("Vocal")
        screen.send("m")
        screen.waitFor("demo.tapedeck *")
        screen.send("C-s")
        screen.waitFor("saved ")
        let json = try String(contentsOfFile: session + "/session.json", encoding: .utf8)
        XCTAssertTrue(json.contains("\"mute\" : true"))
        screen.send("q")
        let deadline = Date().addingTimeInterval(5)
        while screen.isRunning && Date() < deadline { usleep(50_000) }
        XCTAssertFalse(screen.isRunning)
    }

    func testAsciiIsUsedWhenTheLocaleIsNotUTF8() throws {
        let screen = try open(environment: ["LANG": "C"])
        let text = screen.waitFor("[] STOPPED")
        XCTAssertTrue(text.contains("Drums"))
        XCTAssertFalse(text.contains("■") || text.contains("█") || text.contains("│"), "Unicode in a C locale:\n\(text)")
    }

    func testAnIdleScreenCostsNextToNoCPU() throws {
        let screen = try open()
        screen.waitFor("Vocal")
        let pid = try XCTUnwrap(screen.panePID)
        usleep(300_000)
        let before = try XCTUnwrap(ScreenTmux.cpuTicks(pid))
        sleep(2)
        let after = try XCTUnwrap(ScreenTmux.cpuTicks(pid))
        // Clock ticks are 1/100 s: idle for 2 s must stay under 0.1 s of CPU (5 %).
        XCTAssertLessThan(after - before, 10, "idle screen used \(after - before) ticks in 2 s")
    }

    func testSigtermEndsTheScreen() throws {
        let screen = try open()
        screen.waitFor("Vocal")
        let pid = try XCTUnwrap(screen.panePID)
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while screen.isRunning && Date() < deadline { usleep(50_000) }
        XCTAssertFalse(screen.isRunning, "SIGTERM ends the screen")
    }

    /// The distinct escape sequences in a capture.
    private func escapes(_ text: String) -> Set<String> {
        var found = Set<String>()
        var rest = Substring(text)
        while let start = rest.firstIndex(of: "\u{1B}") {
            let tail = rest[start...]
            guard let end = tail.firstIndex(where: { $0 == "m" }) else { break }
            found.insert(String(tail[...end]))
            rest = tail[tail.index(after: end)...]
        }
        return found
    }
}
