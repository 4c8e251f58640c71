import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Issue 45: `session S --timecode FPS` sets the rate surfaces count timecode in; `session`
/// and `info` show it; anything but the ten rates is refused in one line; it is one undo step.
final class SessionTimecodeTests: XCTestCase {
    private static let names = "23.976, 24, 24.975, 25, 29.97, 29.97df, 30, 30df, 59.94, 60"

    func testTheRateIsSetShownUndoneAndAnythingElseRefusedInOneLine() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.appendingPathComponent("s.tapedeck").path)
        try folder.create(Session(sampleRate: 48000))
        // A session that never chose counts at Ardour's default, and its file does not say so.
        let shown = try Tapedeck.run(["session", folder.path])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertEqual(shown.stdout, "time-of-day origin: none\ntimecode: 30 fps\n")
        XCTAssertFalse(try String(contentsOfFile: folder.path + "/session.json", encoding: .utf8).contains("timecodeRate"))

        let set = try Tapedeck.run(["session", folder.path, "--timecode", "25"])
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertEqual(set.stdout, "timecode: 25 fps\n")
        XCTAssertEqual(try folder.load().timecodeRate, .fps25)
        XCTAssertTrue(try Tapedeck.run(["info", folder.path]).stdout.contains("timecode  25 fps"))
        let json = try Tapedeck.run(["info", folder.path, "--json"])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["timecode_rate"] as? String, "25")

        // Ardour's spelling of drop-frame is read.
        XCTAssertEqual(try Tapedeck.run(["session", folder.path, "--timecode", "29.97 drop"]).stdout, "timecode: 29.97df fps\n")
        XCTAssertEqual(try folder.load().timecodeRate, .fps29_97Drop)
        XCTAssertTrue(try Tapedeck.run(["session", folder.path]).stdout.contains("timecode: 29.97df fps"))

        for bad in ["31", "", "25df", "drop", "29.97 dropped", "-30"] {
            let r = try Tapedeck.run(["session", folder.path, "--timecode", bad])
            XCTAssertNotEqual(r.status, 0, bad)
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "\(bad): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(Self.names), "\(bad): \(r.stderr)")
        }
        // A bad time of day with a good rate changes neither.
        XCTAssertNotEqual(try Tapedeck.run(["session", folder.path, "--timecode", "24", "--time-of-day", "25:00:00"]).status, 0)
        XCTAssertEqual(try folder.load().timecodeRate, .fps29_97Drop, "unchanged")

        // One undo step back to 25, redo forward again.
        let undo = try Tapedeck.run(["undo", folder.path])
        XCTAssertEqual(undo.status, 0, undo.stderr)
        XCTAssertEqual(try folder.load().timecodeRate, .fps25)
        XCTAssertEqual(try Tapedeck.run(["redo", folder.path]).status, 0)
        XCTAssertEqual(try folder.load().timecodeRate, .fps29_97Drop)

        // Both settings at once; back to the default 30, the file forgets the rate.
        let both = try Tapedeck.run(["session", folder.path, "--timecode", "30", "--time-of-day", "09:00:00"])
        XCTAssertEqual(both.status, 0, both.stderr)
        XCTAssertEqual(both.stdout, "time-of-day origin: 09:00:00.000\ntimecode: 30 fps\n")
        let session = try folder.load()
        XCTAssertEqual(session.timecodeRate, .fps30)
        XCTAssertEqual(session.timeOfDayOrigin, 9 * 3600 * 48000)
        XCTAssertFalse(try String(contentsOfFile: folder.path + "/session.json", encoding: .utf8).contains("timecodeRate"))
    }

    func testASessionFileWithAnUnknownRateIsRefusedInOneLineNamingTheField() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.appendingPathComponent("s.tapedeck").path)
        var session = Session(sampleRate: 48000)
        session.timecodeRate = .fps25
        try folder.create(session)
        let file = folder.path + "/session.json"
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(text.contains("\"timecodeRate\":\"25\"") || text.contains("\"timecodeRate\" : \"25\""), text)
        try text.replacingOccurrences(of: "\"25\"", with: "\"31\"").write(toFile: file, atomically: true, encoding: .utf8)
        let r = try Tapedeck.run(["info", folder.path])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("timecodeRate") && r.stderr.contains("'31' is not a timecode rate"), r.stderr)
    }
}
