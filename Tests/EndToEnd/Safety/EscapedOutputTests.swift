import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Everything printed from a user's data is escaped in every output format (issue 40, item 5):
/// a marker or track name holding a terminal escape, a line break or a bidirectional override
/// reaches no terminal raw — not in a chapters file people `cat`, not in JSON (where the
/// escape still reads back as the same name).
final class EscapedOutputTests: XCTestCase {
    private let hostile = "\u{1B}[2J\u{202E}evil\nline"

    private func rawCharacters(_ text: String) -> [String] {
        text.unicodeScalars.filter { $0 != "\n" && SafeText.needsEscape($0) }.map { String(format: "U+%04X", $0.value) }
    }

    func testChaptersAndJSONCarryAHostileNameEscaped() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        var s = try folder.load()
        s.markers = [Marker(name: hostile, frame: 24_000)]
        s.tracks[0].name = "A\u{202E}B"
        try folder.save(s)

        let export = try Tapedeck.run(["export", folder.path, "-o", dir + "/ep.wav", "--chapters", dir + "/ep.txt"])
        XCTAssertEqual(export.status, 0, export.stderr)
        let text = try String(contentsOfFile: dir + "/ep.txt", encoding: .utf8)
        XCTAssertEqual(rawCharacters(text), [], text)
        XCTAssertEqual(text, "00:00:00.500 \\u001B[2J\\u202Eevil\\nline\n", "one line, the name escaped as everywhere Tapedeck prints one")

        let json = try Tapedeck.run(["export", folder.path, "-o", dir + "/ep2.wav", "--chapters", dir + "/ep.json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let bytes = try String(contentsOfFile: dir + "/ep.json", encoding: .utf8)
        XCTAssertEqual(rawCharacters(bytes), [], bytes)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(bytes.utf8)) as? [String: Any])
        XCTAssertEqual((object["chapters"] as? [[String: Any]])?.first?["title"] as? String, hostile, "JSON's escapes read back as the name")

        let info = try Tapedeck.run(["info", folder.path, "--json"])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertEqual(rawCharacters(info.stdout), [], info.stdout)
        let described = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        XCTAssertTrue("\(described)".contains("A\u{202E}B"), "the track's name reads back whole")
    }
}
