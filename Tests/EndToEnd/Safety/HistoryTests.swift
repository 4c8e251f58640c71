import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// The undo history never vanishes silently (issue 40, item 4): a damaged `history/index.json`
/// is rebuilt from the step files with a warning, and a `history` that is a link or not a
/// folder is refused in one line, as a region file that is a link is.
final class HistoryTests: XCTestCase {
    /// A session with three saved edits: a track, then the markers Verse and Chorus.
    private func edited(_ dir: String) throws -> String {
        let session = dir + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "add"]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["marker", session, "add", "1:00", "Verse"]).status, 0)
        // Steps are ordered by when they were saved: a second apart on any file system.
        usleep(20_000)
        XCTAssertEqual(try Tapedeck.run(["marker", session, "add", "2:00", "Chorus"]).status, 0)
        return session
    }

    func testADamagedIndexIsRebuiltFromItsStepsWithAWarningAndUndoGoesOn() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let session = try edited(dir)
        let index = session + "/history/index.json"
        try "{not json".write(toFile: index, atomically: true, encoding: .utf8)

        let undo = try Tapedeck.run(["undo", session])
        XCTAssertEqual(undo.status, 0, undo.stderr)
        XCTAssertTrue(undo.stdout.hasPrefix("undid: the save of "), undo.stdout)
        let warning = undo.stderr.split(separator: "\n")
        XCTAssertEqual(warning.count, 1, undo.stderr)
        XCTAssertTrue(undo.stderr.contains("history/index.json: unreadable; the undo history was rebuilt from its 3 step files"), undo.stderr)
        XCTAssertEqual(try SessionFolder(path: session).load().markers.map(\.name), ["Verse"], "the last change was undone")
        XCTAssertEqual(try String(contentsOfFile: index + ".damaged", encoding: .utf8), "{not json", "the damaged index is kept")

        // Rebuilt once: the next commands read the new index, without a word.
        let again = try Tapedeck.run(["undo", session])
        XCTAssertEqual(again.stderr, "")
        XCTAssertEqual(try SessionFolder(path: session).load().markers.map(\.name), [])
        XCTAssertEqual(try Tapedeck.run(["marker", session, "add", "3:00", "After"]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["undo", session]).stdout, "undid: marker add 3:00 After\n")

        // An index that is gone while its steps are there is rebuilt the same way.
        unlink(index)
        let list = try Tapedeck.run(["undo", session, "--list"])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertTrue(list.stderr.contains("history/index.json: missing; the undo history was rebuilt"), list.stderr)
        XCTAssertTrue(list.stdout.contains("undo 1  the save of "), list.stdout)
    }

    func testAHistoryThatIsALinkOrAFileIsRefusedInOneLine() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let session = try edited(dir)
        let history = session + "/history"
        let outside = dir + "/elsewhere"
        try FileManager.default.moveItem(atPath: history, toPath: outside)
        let before = try FileManager.default.contentsOfDirectory(atPath: outside).sorted()
        symlink(outside, history)
        let bytes = Safety.sessionBytes(SessionFolder(path: session))
        for args in [["marker", session, "add", "3:00", "X"], ["undo", session], ["info", session]] {
            let r = try Tapedeck.run(args)
            Safety.assertRefused(r, status: 65, mentions: ["history", "is a link to \(outside)", "folder inside the session"])
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside).sorted(), before, "no step was written through the link")
        XCTAssertEqual(Safety.sessionBytes(SessionFolder(path: session)), bytes)

        unlink(history)
        try "not a folder".write(toFile: history, atomically: true, encoding: .utf8)
        let r = try Tapedeck.run(["marker", session, "add", "3:00", "X"])
        Safety.assertRefused(r, status: 65, mentions: ["history", "is not a folder"])
        XCTAssertEqual(Safety.sessionBytes(SessionFolder(path: session)), bytes, "no edit without its history")
    }
}
