import Foundation
import TapedeckCore
import TapedeckIO
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The one write guard (issue 40, item 1) in the library: what it sees through and what it
/// refuses, without the program around it (the table of every option is in EndToEnd).
final class WriteGuardTests: XCTestCase {
    override func tearDown() {
        WriteGuard.openSessions = nil
        super.tearDown()
    }

    /// `dir/s.tapedeck` with one region, its history and the usual folders.
    private func session(_ dir: String, name: String = "s") throws -> (SessionFolder, ProtectedSession) {
        let folder = SessionFolder(path: dir + "/" + name)
        var s = Session()
        s.tracks = [Track(name: "A", regions: [Region(file: "audio/take.wav", timelineStartFrame: 0, lengthFrames: 10)])]
        try folder.create(s)
        FileManager.default.createFile(atPath: folder.audioFolder + "/take.wav", contents: Data("take".utf8))
        try folder.save(s)  // a second save: history/ exists
        return (folder, ProtectedSession(folder: folder, session: try folder.load()))
    }

    func testEverythingASessionOwnsIsRefusedThroughLinksAndDotDot() throws {
        let dir = makeTempFolder(self)
        let (folder, protected) = try session(dir)
        symlink(folder.path, dir + "/alias")
        link(folder.audioFolder + "/take.wav", dir + "/hard.wav")
        symlink(folder.sessionFile, dir + "/json-link")
        let refused: [(String, String)] = [
            (folder.sessionFile, "session.json of the session s.tapedeck"),
            (folder.backupFile, "session.json.bak"),
            (folder.lockFile, "session.lock"),
            (folder.path + "/session.json.tmp", "session.json.tmp"),
            (folder.path + "/history/index.json", "inside history/"),
            (folder.path + "/history/new.json", "inside history/"),
            (folder.audioFolder + "/take.wav", "inside audio/"),
            (folder.audioFolder + "/new.wav", "inside audio/"),
            (folder.peaksFolder + "/x.peak", "inside peaks/"),
            (folder.path + "/midi/x.mid", "inside midi/"),
            (folder.path + "/samples/x.wav", "inside samples/"),
            (folder.path + "/plugins/x", "inside plugins/"),
            (folder.path + "/cache/x", "inside cache/"),
            (folder.path, "is the folder of the session"),
            (dir + "/alias/session.json", "session.json of the session s.tapedeck"),
            (folder.path + "/exports/../session.json", "session.json of"),
            (dir + "/alias/exports/../audio/new.wav", "inside audio/"),
            (dir + "/json-link", "session.json of"),
        ]
        // Found with or without the session named: its folder holds the path.
        for (path, why) in refused {
            for sessions in [[protected], []] {
                let reason = WriteGuard.refusal(path, sessions: sessions)
                XCTAssertTrue(reason?.contains(why) == true, "\(path) with \(sessions.count) session(s) named: \(reason ?? "allowed")")
            }
        }
        // A second name of a played file outside the folder: known from the session in question.
        XCTAssertTrue(WriteGuard.refusal(dir + "/hard.wav", sessions: [protected])?.contains("audio/take.wav, the audio of a region on track 1") == true)
        XCTAssertThrowsError(try WriteGuard.check(folder.sessionFile, as: "automation: --output", sessions: [protected])) { error in
            XCTAssertEqual("\(error)", "automation: --output '\(folder.sessionFile)' is session.json of the session s.tapedeck: Tapedeck never writes over a session's own files (write elsewhere, e.g. its exports/)")
        }
        for allowed in [folder.exportsFolder + "/mix.wav", folder.path + "/mix.wav", dir + "/mix.wav", dir + "/new/folder/mix.wav"] {
            XCTAssertNil(WriteGuard.refusal(allowed, sessions: [protected]), allowed)
        }
        // A folder of output files: never a session's own folders, nor one beside a played file.
        XCTAssertNotNil(WriteGuard.refusal(folder.audioFolder, sessions: [protected], kind: .folder))
        XCTAssertNil(WriteGuard.refusal(dir + "/stems", sessions: [protected], kind: .folder))
    }

    func testAWriteIsAtomicAndNeverLeavesItsTemporaryFile() throws {
        let dir = makeTempFolder(self)
        let (folder, protected) = try session(dir)
        let out = dir + "/out.csv"
        try "old".write(toFile: out, atomically: false, encoding: .utf8)
        try WriteGuard.write(Array("new".utf8), to: out, as: "test", sessions: [protected])
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "new")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["out.csv", "s.tapedeck"])
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.sessionFile))
        XCTAssertThrowsError(try WriteGuard.write(Array("x".utf8), to: folder.sessionFile, as: "test")) { error in
            XCTAssertTrue(error is WriteRefusal, "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: folder.sessionFile)), before)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: folder.path).contains { $0.hasSuffix(".tmp") })
    }

    func testANewTakeGoesOnlyIntoItsOwnSessionUnderAFreeName() throws {
        let dir = makeTempFolder(self)
        let (folder, _) = try session(dir)
        let (other, _) = try session(dir, name: "t")
        XCTAssertNil(WriteGuard.refusal(folder.audioFolder + "/take-2.wav", kind: .newInSession(folder)))
        XCTAssertNotNil(WriteGuard.refusal(folder.audioFolder + "/take.wav", kind: .newInSession(folder)), "a name in use")
        XCTAssertNotNil(WriteGuard.refusal(other.audioFolder + "/take-2.wav", kind: .newInSession(folder)), "another session's audio/")
        XCTAssertNotNil(WriteGuard.refusal(folder.path + "/history/take.wav", kind: .newInSession(folder)))
        // audio/ kept on another disk (a link the user made) is still the session's own.
        let elsewhere = dir + "/disk2"
        mkdir(elsewhere, 0o755)
        let (linked, _) = try session(dir, name: "u")
        try FileManager.default.removeItem(atPath: linked.audioFolder)
        symlink(elsewhere, linked.audioFolder)
        XCTAssertNil(WriteGuard.refusal(linked.audioFolder + "/take.wav", kind: .newInSession(linked)))
        XCTAssertNotNil(WriteGuard.refusal(elsewhere + "/x.wav", sessions: [ProtectedSession(folder: linked, session: nil)]),
                        "the folder audio/ leads to is audio/")
    }

    func testTheFilesOfAnOpenSessionAreProtectedWhereverTheyLie() throws {
        let dir = makeTempFolder(self)
        let (other, _) = try session(dir, name: "t")
        let outside = dir + "/kick.wav"
        FileManager.default.createFile(atPath: outside, contents: Data("kick".utf8))
        // Not known to be open: a file outside any session folder is nobody's.
        XCTAssertNil(WriteGuard.refusal(outside))
        WriteGuard.openSessions = { [ProtectedSession(folder: other, session: nil, referenced: [outside])] }
        XCTAssertTrue(WriteGuard.refusal(outside)?.contains("which the session t.tapedeck plays") == true, WriteGuard.refusal(outside) ?? "allowed")
        XCTAssertNil(WriteGuard.refusal(dir + "/snare.wav"), "another name is free")
    }
}
