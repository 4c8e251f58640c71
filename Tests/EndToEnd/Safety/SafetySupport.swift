import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Helpers for the data-safety tests: a session with audio, checks on messages and files.
enum Safety {
    /// A session at `dir/s.tapedeck` with one imported second of a 440 Hz sine on track 1.
    static func session(in dir: String, file: String = "tone.wav") throws -> SessionFolder {
        let folder = SessionFolder(path: dir + "/s")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 48000)], to: dir + "/" + file, encoding: .int16)
        let r = try Tapedeck.run(["import", folder.path, dir + "/" + file])
        XCTAssertEqual(r.status, 0, r.stderr)
        return folder
    }

    /// The exact bytes of `session.json`, to show that a refused command changed nothing.
    static func sessionBytes(_ folder: SessionFolder) -> Data {
        FileManager.default.contents(atPath: folder.sessionFile) ?? Data()
    }

    /// A refusal: the expected status, one line on stderr naming `mentions`, no trap, no raw
    /// control character.
    static func assertRefused(_ r: Tapedeck.Result, status: Int32, mentions: [String] = [],
                              file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, status, r.stderr, file: file, line: line)
        let lines = r.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "one line: \(r.stderr)", file: file, line: line)
        XCTAssertFalse(r.stderr.contains("Fatal error"), file: file, line: line)
        XCTAssertFalse(r.stderr.unicodeScalars.contains { $0 != "\n" && SafeText.needsEscape($0) }, "raw control character: \(r.stderr)", file: file, line: line)
        for m in mentions { XCTAssertTrue(r.stderr.contains(m), "'\(m)' in: \(r.stderr)", file: file, line: line) }
    }

    /// Every sample of a file, channel by channel.
    static func samples(_ path: String) throws -> [[Float]] { try Signals.read(path).channels }

    /// The `peak X dBFS` number of an export's final line.
    static func reportedPeak(_ stdout: String) -> Double? {
        guard let range = stdout.range(of: "peak ") else { return nil }
        return Double(stdout[range.upperBound...].prefix { $0 != " " })
    }
}
