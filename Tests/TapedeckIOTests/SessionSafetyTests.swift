import Foundation
import TapedeckCore
import TapedeckIO
import XCTest

/// Saves, loads, locks and new files that never lose or expose a session (issue 13).
final class SessionSafetyTests: XCTestCase {
    private var root: String!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-safety-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        addTeardownBlock { [root] in try? FileManager.default.removeItem(atPath: root!) }
    }

    private func makeSession(tracks: [String] = ["a"]) throws -> (SessionFolder, Session) {
        let folder = SessionFolder(path: root + "/s")
        var s = Session()
        s.tracks = tracks.map { Track(name: $0) }
        try folder.create(s)
        return (folder, s)
    }

    func testTheBackupIsThePreviousSaveAndAMissingSessionFileFallsBackToItSayingSo() throws {
        var (folder, s) = try makeSession()
        s.tracks.append(Track(name: "b"))
        try folder.save(s)
        XCTAssertEqual(try SessionFolder.decode(Data(contentsOf: URL(fileURLWithPath: folder.backupFile)), path: "bak").tracks.count, 1)
        SessionFolder.collectNotices()
        _ = SessionFolder.takeNotices()
        unlink(folder.sessionFile)
        XCTAssertEqual(try folder.load().tracks.count, 1, "the backup is opened")
        let notices = SessionFolder.takeNotices()
        XCTAssertEqual(notices.count, 1)
        XCTAssertTrue(notices[0].contains("session.json.bak") && notices[0].contains("missing"), notices[0])
    }

    func testAHalfWrittenSessionFileFallsBackButAWrongFieldIsReported() throws {
        var (folder, s) = try makeSession()
        s.tempoBPM = 90
        try folder.save(s)
        let whole = try String(contentsOfFile: folder.sessionFile, encoding: .utf8)
        try String(whole.prefix(40)).write(toFile: folder.sessionFile, atomically: false, encoding: .utf8)
        SessionFolder.collectNotices()
        XCTAssertEqual(try folder.load().tempoBPM, 120, "the backup (before the last save) is opened")
        XCTAssertFalse(SessionFolder.takeNotices().isEmpty)
        // The next save must not push the good backup out with the damaged file.
        try folder.save(s)
        XCTAssertEqual(try SessionFolder.decode(Data(contentsOf: URL(fileURLWithPath: folder.backupFile)), path: "bak").tempoBPM, 120)
        XCTAssertEqual(try folder.load().tempoBPM, 90)

        try whole.replacingOccurrences(of: "\"tempoBPM\" : 90", with: "\"tempoBPM\" : 5000").write(toFile: folder.sessionFile, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try folder.load()) { XCTAssertTrue("\($0)".contains("tempoBPM"), "\($0)") }
    }

    func testASaveNeverLeavesTheFolderWithoutASessionFileAndRefusesAnInvalidSession() throws {
        var (folder, s) = try makeSession()
        s.tracks[0].gainDecibels = -1e308
        XCTAssertThrowsError(try folder.save(s)) { XCTAssertTrue("\($0)".contains("not saved: tracks[0].gainDecibels"), "\($0)") }
        XCTAssertEqual(try folder.load().tracks[0].gainDecibels, 0, "the session on disk is unchanged")
        s.tracks[0].gainDecibels = -3
        for _ in 0..<5 { try folder.save(s) }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [])
    }

    func testANewSessionIsNeverCreatedOverWhatIsLeftOfOne() throws {
        let (folder, _) = try makeSession()
        unlink(folder.sessionFile)
        unlink(folder.backupFile)
        XCTAssertTrue(folder.exists, "an audio/ folder is what is left of a session")
        XCTAssertThrowsError(try folder.create(Session()))
        XCTAssertThrowsError(try folder.load()) { XCTAssertTrue("\($0)".contains("missing"), "\($0)") }
        let other = SessionFolder(path: root + "/o")
        try FileManager.default.createDirectory(atPath: other.path, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: other.path + "/notes.txt", contents: Data("mine".utf8))
        XCTAssertThrowsError(try other.create(Session())) { XCTAssertTrue("\($0)".contains("not empty"), "\($0)") }
    }

    func testARegionFileThatLinksOutOfTheFolderIsRefusedButAnAudioFolderOnAnotherDiskIsFine() throws {
        var (folder, s) = try makeSession()
        FileManager.default.createFile(atPath: root + "/secret.wav", contents: Data("secret".utf8))
        symlink(root + "/secret.wav", folder.audioFolder + "/x.wav")
        s.tracks[0].regions = [Region(file: "audio/x.wav", timelineStartFrame: 0, lengthFrames: 10)]
        try folder.save(s)
        XCTAssertThrowsError(try folder.load()) { error in
            XCTAssertTrue("\(error)".contains("tracks[0].regions[0].file") && "\(error)".contains("outside the session"), "\(error)")
        }
        // audio/ itself elsewhere (a bigger disk) is the user's own arrangement.
        let moved = root + "/big-disk-audio"
        try FileManager.default.moveItem(atPath: folder.audioFolder, toPath: moved)
        unlink(moved + "/x.wav")
        FileManager.default.createFile(atPath: moved + "/x.wav", contents: Data("audio".utf8))
        symlink(moved, folder.audioFolder)
        XCTAssertEqual(try folder.load().tracks[0].regions.count, 1)
    }

    func testTheLockIsHeldOncePerProcessAndTellsWhoHoldsIt() throws {
        let (folder, s) = try makeSession()
        let lock = try SessionLock.acquire(folder, command: "tapedeck test")
        XCTAssertTrue(SessionLock.isHeld(folder))
        try folder.save(s)  // takes the lock again inside: same process, no wait
        XCTAssertEqual(SessionLock.holderText(folder), "pid \(getpid()) (tapedeck test)")
        withExtendedLifetime(lock) {}
    }

    func testNewFilesAreCreatedExclusivelyAndNeverThroughALink() throws {
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1)
        let victim = root + "/victim.txt"
        FileManager.default.createFile(atPath: victim, contents: Data("keep me".utf8))
        symlink(victim, root + "/planted.wav")
        XCTAssertThrowsError(try AudioFileWriter(path: root + "/planted.wav", format: format)) {
            XCTAssertTrue("\($0)".contains("link"), "\($0)")
        }
        symlink(root + "/nowhere", root + "/dangling.wav")
        XCTAssertThrowsError(try AudioFileWriter(path: root + "/dangling.wav", format: format))
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/nowhere"), "nothing was created through the link")
        FileManager.default.createFile(atPath: root + "/taken.wav", contents: Data())
        XCTAssertThrowsError(try AudioFileWriter(path: root + "/taken.wav", format: format)) { XCTAssertTrue("\($0)".contains("already exists")) }
        // A leftover of our own (an interrupted export's .partial) is replaced, link or not.
        let writer = try AudioFileWriter(path: root + "/planted.wav", format: format, creation: .replacingLeftover)
        try writer.close()
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "keep me")
    }

    func testImportRefusesAFileWithoutAudioAndReplacesNaNBySilence() throws {
        let (folder, _) = try makeSession()
        try writeFile(root + "/empty.wav", format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1), channels: [[]])
        XCTAssertThrowsError(try AudioImporter.importFile(source: root + "/empty.wav", destinationFolder: folder.audioFolder, sessionSampleRate: 48000)) {
            XCTAssertTrue("\($0)".contains("0 frames"), "\($0)")
        }
        var samples = sine(hertz: 100, sampleRate: 48000, frameCount: 4800)
        samples[100] = .nan
        samples[2000] = .infinity
        try writeFile(root + "/nan.wav", format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1), channels: [samples])
        for rate in [48000, 44100] {
            let imported = try AudioImporter.importFile(source: root + "/nan.wav", destinationFolder: folder.audioFolder, sessionSampleRate: rate)
            XCTAssertEqual(imported.nonFiniteSampleCount, 2)
            let reader = try AudioFileReader(path: folder.audioFolder + "/" + imported.fileName)
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 8192)
            defer { buffer.deallocate() }
            let n = try reader.read(into: [buffer], frameCount: 8192)
            XCTAssertGreaterThan(n, 4000)
            XCTAssertFalse(UnsafeBufferPointer(start: buffer, count: n).contains { !$0.isFinite }, "no NaN in the copy at \(rate) Hz")
        }
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).contains { $0.hasSuffix(".tmp") })
    }
}
