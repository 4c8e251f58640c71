import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `export --chapters FILE` (issue 29, item 7): the session's markers inside the export as
/// podcast chapters, at their time in the exported file (from the range's start, at the
/// export's speed), as Podcasting 2.0 JSON or `HH:MM:SS.mmm Title` lines.
final class ExportChaptersTests: XCTestCase {
    private func demo() throws -> (dir: String, session: String) {
        let dir = try Tapedeck.temporaryFolder(self).path
        let session = dir + "/show.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["demo", session, "--samples", Tapedeck.packageRoot.appendingPathComponent("Samples").path]).status, 0)
        // The demo has markers of its own: these are the only ones.
        var s = try SessionFolder(path: session).load()
        s.markers = []
        try SessionFolder(path: session).save(s)
        for (time, name) in [("0", "Intro"), ("1.25", "Guest \"Ada\" / news"), ("3", "Outro")] {
            XCTAssertEqual(try Tapedeck.run(["marker", session, "add", time, name]).status, 0)
        }
        return (dir, session)
    }

    func testAPodcastExportWritesItsMarkersAsJSONChaptersAtTheirTimes() throws {
        let (dir, session) = try demo()
        let r = try Tapedeck.run(["export", session, "-o", dir + "/ep.wav", "--normalize", "podcast", "--chapters", dir + "/ep.json"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("chapters \(dir)/ep.json: 3 from the session's markers"), r.stdout)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/ep.json"))) as? [String: Any])
        XCTAssertEqual(object["version"] as? String, "1.2.0")
        let chapters = try XCTUnwrap(object["chapters"] as? [[String: Any]])
        XCTAssertEqual(chapters.compactMap { $0["title"] as? String }, ["Intro", "Guest \"Ada\" / news", "Outro"])
        let times = chapters.compactMap { ($0["startTime"] as? NSNumber)?.doubleValue }
        XCTAssertEqual(times.count, 3)
        for (got, want) in zip(times, [0.0, 1.25, 3.0]) { XCTAssertEqual(got, want, accuracy: 0.0005) }
    }

    func testARangeAtAnotherSpeedMovesTheChaptersWithTheAudio() throws {
        let (dir, session) = try demo()
        let r = try Tapedeck.run(["export", session, "-o", dir + "/part.flac", "--range", "1-5", "--speed", "2", "--chapters", dir + "/part.txt"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = try String(contentsOfFile: dir + "/part.txt", encoding: .utf8).split(separator: "\n").map(String.init)
        // From the range's start (1 s), at twice the speed: 0.25 s → 0.125 s, 2 s → 1 s.
        XCTAssertEqual(lines, ["00:00:00.125 Guest \"Ada\" / news", "00:00:01.000 Outro"])
    }

    func testChaptersTheExportCannotWriteAreRefusedBeforeRendering() throws {
        let (dir, session) = try demo()
        for (args, words) in [(["--chapters", dir + "/c.mp3"], "must end in .json"),
                              (["--chapters", dir + "/c.json", "--midi"], "--chapters goes with an audio export")] {
            let out = args.contains("--midi") ? dir + "/x.mid" : dir + "/x.wav"
            let r = try Tapedeck.run(["export", session, "-o", out] + args)
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertTrue(r.stderr.contains(words), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "nothing rendered")
        }
        // No markers in the range: written empty, and said.
        let r = try Tapedeck.run(["export", session, "-o", dir + "/tail.wav", "--range", "5-6", "--chapters", dir + "/tail.json"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("holds no chapters"), r.stderr)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/tail.json"))) as? [String: Any]
        XCTAssertEqual((object?["chapters"] as? [Any])?.count, 0)
    }
}
