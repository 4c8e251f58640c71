import XCTest
@testable import TapedeckUI

/// No keys file can leave the screen without a way to quit.
final class KeyMapQuitTests: XCTestCase {
    func testQuitBoundToNULOrABidiOverrideIsRefusedWithOneLineAndQKeepsQuitting() {
        let (map, problems) = KeyMap.parse("quit = \u{0}\nquit = \u{202E}\n", source: "keys")
        XCTAssertEqual(problems.count, 2, "\(problems)")
        for p in problems {
            XCTAssertTrue(p.contains("control, unprintable or bidi"), p)
            XCTAssertFalse(p.unicodeScalars.contains { $0 == "\u{0}" || $0 == "\u{202E}" }, "the line itself is escaped: \(p)")
        }
        XCTAssertEqual(map.action(for: .char("q")), .quit, "the refused lines changed nothing")
        XCTAssertNil(Key(name: "\u{1B}"))
    }

    func testCtrlCQuitsEvenWhenTheKeysFileTakesQuitsOnlyKey() {
        let (map, problems) = KeyMap.parse("play = q\nundo = ctrl-c\n", source: "keys")
        XCTAssertEqual(map.action(for: .char("q")), .play)
        XCTAssertEqual(map.action(for: .ctrl("c")), .quit, "ctrl-c always quits")
        XCTAssertTrue(problems.contains { $0.contains("ctrl-c always quits") }, "\(problems)")
    }
}
