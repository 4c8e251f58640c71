import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// What a user sees when a session or an audio file is broken: one line, non-zero exit.
final class SessionErrorTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func assertOneLineError(_ r: Tapedeck.Result, mentions: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotEqual(r.status, 0, file: file, line: line)
        let lines = r.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "exactly one line: \(r.stderr)", file: file, line: line)
        for m in mentions { XCTAssertTrue(r.stderr.contains(m), "'\(m)' in: \(r.stderr)", file: file, line: line) }
        XCTAssertFalse(r.stderr.contains("Fatal error"), file: file, line: line)
    }

    func testACorruptSessionFileNamesTheFileAndTheField() throws {
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
        let json = path("s.tapedeck/session.json")
        var text = try String(contentsOfFile: json, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"tempoBPM\" : 120", with: "\"tempoBPM\" : \"fast\"")
        try text.write(toFile: json, atomically: true, encoding: .utf8)
        assertOneLineError(try Tapedeck.run(["info", path("s.tapedeck")]), mentions: ["session.json", "tempoBPM", "expected a number"])

        try "{ \"schemaVersion\": 1, \"tracks\": [".write(toFile: json, atomically: true, encoding: .utf8)
        assertOneLineError(try Tapedeck.run(["info", path("s.tapedeck")]), mentions: ["session.json", "not valid JSON"])

        try "{ \"schemaVersion\": 99 }".write(toFile: json, atomically: true, encoding: .utf8)
        assertOneLineError(try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("x.wav")]), mentions: ["schemaVersion", "newer"])
    }

    func testABadValueDeepInsideIsNamedByItsPath() throws {
        let folder = SessionFolder(path: path("s"))
        var s = Session()
        s.tracks = [Track(name: "a", regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: 10)])]
        try folder.create(s)
        let json = folder.sessionFile
        var text = try String(contentsOfFile: json, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"lengthFrames\" : 10", with: "\"lengthFrames\" : -10")
        try text.write(toFile: json, atomically: true, encoding: .utf8)
        assertOneLineError(try Tapedeck.run(["info", folder.path]), mentions: ["tracks[0].regions[0].lengthFrames"])
    }

    func testSaveKeepsOneBackupAndLoadsWhatWasSaved() throws {
        let folder = SessionFolder(path: path("s"))
        var s = Session(sampleRate: 44100, tempoBPM: 90)
        try folder.create(s)
        s.tracks.append(Track(name: "Bass", inputChannels: [3], gainDecibels: -4.5, pan: 0.25, inputChain: "gain:-6"))
        s.loopRange = FrameRange(startFrame: 100, endFrame: 900)
        s.markers = [Marker(name: "chorus", frame: 44100)]
        try folder.save(s)
        XCTAssertEqual(try folder.load(), s)
        let backup = try SessionFolder.decode(Data(contentsOf: URL(fileURLWithPath: folder.backupFile)), path: folder.backupFile)
        XCTAssertEqual(backup.tracks.count, 0, "the backup is the previous save")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.sessionFile + ".tmp"))
    }

    func testACorruptAudioFileInASessionIsNamedOnExport() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 4800)], to: path("t.wav"))
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", path("s.tapedeck"), path("t.wav")]).status, 0)
        let audio = try FileManager.default.contentsOfDirectory(atPath: path("s.tapedeck/audio")).first { $0.hasSuffix(".wav") }!
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: path("s.tapedeck/audio/" + audio)))
        assertOneLineError(try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("x.wav")]), mentions: [audio])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.wav")))
    }

    func testMissingAndGarbageFilesAreOneLineErrors() throws {
        assertOneLineError(try Tapedeck.run(["info", path("nope.wav")]), mentions: ["nope.wav", "no such file"])
        try Data("hello, not audio".utf8).write(to: URL(fileURLWithPath: path("text.wav")))
        assertOneLineError(try Tapedeck.run(["info", path("text.wav")]), mentions: ["text.wav"])
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
        assertOneLineError(try Tapedeck.run(["import", path("s.tapedeck"), path("text.wav")]), mentions: ["text.wav"])
    }

    func testMalformedTimesAndUnknownFlagsAreUsageErrors() throws {
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
        let r = try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("x.wav"), "--range", "1:99-2"])
        assertOneLineError(r, mentions: ["malformed time"])
        XCTAssertEqual(r.status, 64)
        assertOneLineError(try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("x.wav"), "--bogus"]), mentions: ["--bogus"])
    }

    func testInfoDescribesAFileAndASession() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 96000)], to: path("t.wav"), encoding: .int24)
        let file = try Tapedeck.run(["info", path("t.wav")])
        XCTAssertEqual(file.status, 0, file.stderr)
        XCTAssertTrue(file.stdout.contains("00:02.000 (96000 frames)"), file.stdout)
        XCTAssertTrue(file.stdout.contains("-6.0 dBFS"), file.stdout)
        XCTAssertTrue(file.stdout.contains("24"), file.stdout)
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", path("s.tapedeck"), path("t.wav"), "--at", "2.1.1"]).status, 0)
        let session = try Tapedeck.run(["info", path("s.tapedeck")])
        XCTAssertTrue(session.stdout.contains("1. t"), session.stdout)
        XCTAssertTrue(session.stdout.contains("00:02.000-00:04.000"), session.stdout)
    }
}
