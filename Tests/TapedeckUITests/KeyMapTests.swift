import XCTest
@testable import TapedeckUI

final class KeyMapTests: XCTestCase {
    func testDefaultsBindTheDocumentedKeys() {
        let map = KeyMap()
        XCTAssertEqual(map.action(for: .named(.space)), .play)
        XCTAssertEqual(map.action(for: .char("r")), .record)
        XCTAssertEqual(map.action(for: .ctrl("r")), .redo)
        XCTAssertEqual(map.action(for: .ctrl("s")), .save)
        XCTAssertEqual(map.action(for: .char("<")), .speedDown)
        XCTAssertEqual(map.action(for: .char("M")), .mode)
        XCTAssertEqual(map.action(for: .char("{")), .pitchDown)
    }

    func testEveryActionHasADefaultKey() {
        let map = KeyMap()
        for action in Action.allCases { XCTAssertFalse(map.keys(for: action).isEmpty, "\(action) has no key") }
    }

    func testRemapReplacesTheActionsKeysAndTakesTheKeyFromItsOldAction() {
        let (map, problems) = KeyMap.parse("""
        # my keys
        play = p, ctrl-p
        record = F5   # a comment after the key
        """)
        XCTAssertEqual(problems, ["keys line 2: 'p' was punch's only key: punch has no key now (give it one on its own line)"],
                       "an action left without a key is never silent")
        XCTAssertEqual(map.action(for: .char("p")), .play)
        XCTAssertEqual(map.action(for: .ctrl("p")), .play)
        XCTAssertNil(map.action(for: .named(.space)), "space is no longer play")
        XCTAssertEqual(map.action(for: .function(5)), .record)
        XCTAssertEqual(map.keys(for: .punch), [], "p was punch's only key; it moved to play")
    }

    func testBadLinesAreReportedWithTheirLineNumbersAndGoodLinesStillApply() {
        let (map, problems) = KeyMap.parse("""
        play = space
        plya = x
        mute = shift-banana

        solo
        help = G
        """, source: "keys")
        XCTAssertEqual(problems.count, 3)
        XCTAssertTrue(problems[0].hasPrefix("keys line 2:"), problems[0])
        XCTAssertTrue(problems[0].contains("plya"))
        XCTAssertTrue(problems[1].hasPrefix("keys line 3:"), problems[1])
        XCTAssertTrue(problems[1].contains("shift-banana"))
        XCTAssertTrue(problems[2].hasPrefix("keys line 5:"), problems[2])
        XCTAssertEqual(map.action(for: .char("G")), .help)
        XCTAssertEqual(map.action(for: .char("m")), .mute, "a bad line leaves the default")
    }

    func testHashAndCommaCanBeKeys() {
        let (map, problems) = KeyMap.parse("marker = #\nruler = ,\nregion-previous = <")
        XCTAssertEqual(problems.count, 2, "',' and '<' were the only keys of region-previous and speed-down: \(problems)")
        XCTAssertEqual(map.action(for: .char("#")), .marker)
        XCTAssertEqual(map.action(for: .char(",")), .rulerMode)
    }

    func testKeyNamesRoundTrip() {
        for name in ["space", "tab", "enter", "esc", "up", "shift-left", "pgdn", "f12", "ctrl-r", "x", "?"] {
            XCTAssertEqual(Key(name: name)?.name, name)
        }
        XCTAssertEqual(Key(name: "^s"), .ctrl("s"))
        XCTAssertNil(Key(name: "ctrl-1"))
        XCTAssertNil(Key(name: "f13"))
    }

    func testTerminalCodesBecomeKeys() {
        XCTAssertEqual(Curses.key(forCharacter: 32), .named(.space))
        XCTAssertEqual(Curses.key(forCharacter: 18), .ctrl("r"))
        XCTAssertEqual(Curses.key(forCharacter: 9), .named(.tab))
        XCTAssertEqual(Curses.key(forCharacter: 13), .named(.enter))
        XCTAssertEqual(Curses.key(forCharacter: 0x7B), .char("{"))
    }

    // Keys no default action depends on alone, so no line reports a key taken away.
    func testWindowsLineEndsAndABadByteCostOnlyTheirLine() throws {
        let (crlf, problems) = KeyMap.parse("play = f5\r\nrecord = f6\r\n")
        XCTAssertEqual(problems, [])
        XCTAssertEqual(crlf.action(for: .function(5)), .play)
        XCTAssertEqual(crlf.action(for: .function(6)), .record)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("td-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("tapedeck"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = Array("play = f5\r\nmute = \u{1B}[2J".utf8) + [0xFF, 0x0A] + Array("record = f6\n".utf8)
        bytes += Array("solo = f11\r".utf8)
        FileManager.default.createFile(atPath: dir.path + "/tapedeck/keys", contents: Data(bytes))
        let config = ScreenConfig(environment: ["XDG_CONFIG_HOME": dir.path], bundledThemes: [])
        let (map, fileProblems) = config.loadKeyMap()
        XCTAssertEqual(fileProblems.count, 1, "\(fileProblems)")
        XCTAssertTrue(fileProblems[0].hasSuffix("keys line 2: not valid UTF-8 (skipped)"), fileProblems[0])
        XCTAssertEqual(map.action(for: .function(5)), .play)
        XCTAssertEqual(map.action(for: .function(6)), .record)
        XCTAssertEqual(map.action(for: .function(11)), .solo)
        let (_, escaped) = KeyMap.parse("mute = \u{1B}[2J\n")
        XCTAssertTrue(escaped[0].contains("\\u001B[2J") && !escaped[0].contains("\u{1B}"), escaped[0])
    }
}
