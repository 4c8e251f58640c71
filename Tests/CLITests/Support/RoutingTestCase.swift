import Foundation
import XCTest

/// A fresh session in a temporary folder for each test, and the two things every routing
/// test asks of a command line: it works, or it is refused with one line naming why.
class RoutingTestCase: XCTestCase {
    var dir: URL!
    var session: String { dir.appendingPathComponent("s.tapedeck").path }

    override func setUpWithError() throws {
        dir = try CLIRun.temporaryFolder(self)
        XCTAssertEqual(try CLIRun.run(["new", dir.appendingPathComponent("s").path]).status, 0)
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Runs `tapedeck ARGS`, expects exit 0, returns stdout.
    @discardableResult
    func ok(_ args: [String], environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let r = try CLIRun.run(args, environment: environment)
        XCTAssertEqual(r.status, 0, "tapedeck \(args.joined(separator: " ")): \(r.stderr)", file: file, line: line)
        return r.stdout
    }

    /// Runs `tapedeck ARGS`, expects a usage mistake (64) told in one line holding `needle`.
    func refused(_ args: [String], _ needle: String, status: Int32 = 64, environment: [String: String] = [:],
                 file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try CLIRun.run(args, environment: environment)
        XCTAssertEqual(r.status, status, "tapedeck \(args.joined(separator: " ")) should be refused: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains(needle), "'\(needle)' missing from: \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "one line: \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.stdout, "", "nothing on stdout when refused", file: file, line: line)
    }

    /// The session file's bytes: a refused change must leave them exactly as they were.
    func sessionBytes() throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: session + "/session.json"))
    }

    /// `info SESSION --json`, parsed.
    func info() throws -> [String: Any] {
        try CLIRun.json(try ok(["info", session, "--json"]))
    }

    /// The strip called `name` in `info --json`'s tracks.
    func strip(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let tracks = try info()["tracks"] as? [[String: Any]] ?? []
        guard let t = tracks.first(where: { ($0["name"] as? String) == name }) else {
            XCTFail("no strip \(name) in \(tracks.map { $0["name"] ?? "?" })", file: file, line: line)
            return [:]
        }
        return t
    }

    /// A track called `name` holding one second of a 440 Hz sine at half scale.
    func addToneTrack(_ name: String) throws {
        CLIRun.writeSine(to: path("\(name).wav"))
        try ok(["import", session, path("\(name).wav")])
    }

    /// Exports the session (32-bit float) and returns each channel's sample peak in dBFS, nil
    /// for silence, as `info --json` reads the file.
    func exportPeaks(_ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [Double?] {
        let out = path("mix-\(UUID().uuidString).wav")
        try ok(["export", session, "-o", out, "--bits", "32f"] + extra, file: file, line: line)
        let facts = try CLIRun.json(try ok(["info", out, "--json"], file: file, line: line))
        return (facts["peak_dbfs"] as? [Any] ?? []).map { $0 as? Double }
    }
}
