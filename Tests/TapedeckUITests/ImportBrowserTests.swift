import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckUI

/// The screen's import: audio files only, filtered as you type, onto a new track.
final class ImportBrowserTests: XCTestCase {
    func testTheBrowserListsAudioFilesFiltersAsYouTypeAndImportsOntoANewTrack() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("td-import-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["Bassline.wav", "drums.WAV"] {
            let writer = try AudioFileWriter(path: dir + "/" + name, format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 2))
            let zeros = [Float](repeating: 0.1, count: 4800)
            try zeros.withUnsafeBufferPointer { try writer.write([$0.baseAddress!, $0.baseAddress!], frameCount: 4800) }
            try writer.close()
        }
        try "notes".write(toFile: dir + "/notes.txt", atomically: true, encoding: .utf8)
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        try folder.create(ScreenModelTests.makeSession())
        let link = FakeLink()
        let model = ScreenModel(document: SessionDocument(session: try folder.load()), folder: folder, link: link, importFolder: dir)
        link.position = 96000
        model.tick(nowSeconds: 0)
        model.handle(.char("i"))
        guard case .importBrowser(let browser) = model.overlay else { return XCTFail("no browser") }
        XCTAssertEqual(browser.entries, ["../", "s.tapedeck/", "sub/", "Bassline.wav", "drums.WAV"], "audio files and folders only")
        for c in "BASS" { model.handle(.char(c)) }
        guard case .importBrowser(let filtered) = model.overlay else { return XCTFail("the browser stays open") }
        XCTAssertEqual(filtered.entries, ["Bassline.wav"])
        model.handle(.named(.enter))
        XCTAssertNil(model.overlay)
        // Copied on a worker (a progress line meanwhile), placed when done.
        XCTAssertEqual(model.jobLine?.hasPrefix("importing Bassline.wav"), true)
        // Quitting waits for it: the import is ended on purpose (ctrl-x) or lands.
        model.perform(.quit)
        XCTAssertFalse(model.shouldQuit)
        XCTAssertEqual(model.message?.text.contains("ctrl-x cancels it"), true, model.message?.text ?? "")
        model.finishJobs()
        let track = try XCTUnwrap(model.session.tracks.last)
        XCTAssertEqual(model.session.tracks.count, 4, "a new track, as the command line does")
        XCTAssertEqual(track.name, "Bassline")
        XCTAssertEqual(track.inputChannels, [1, 2])
        XCTAssertEqual(track.regions.first?.timelineStartFrame, 96000, "at the playhead")
        XCTAssertEqual(model.selectedTrack, 3)
        XCTAssertEqual(model.session.tracks[0].regions, [], "the selected track is left alone")
    }

    /// A 5.1 file: six mono tracks at the playhead, named and panned from its layout, one undo
    /// step; past the session's track limit, refused with nothing written.
    func testAFiveOneFileImportsAsSixMonoTracksAndTheTrackLimitHolds() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("td-import-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try AudioFileWriter(path: dir + "/Surround.wav",
                                         format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 6),
                                         expectedFrameCount: 4800, channelLayout: [.left, .right, .center, .lfe, .rearLeft, .rearRight])
        try writer.write(arrays: (0..<6).map { k in [Float](repeating: 0.05 * Float(k + 1), count: 4800) })
        try writer.close()
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        try folder.create(ScreenModelTests.makeSession())
        let link = FakeLink()
        let model = ScreenModel(document: SessionDocument(session: try folder.load()), folder: folder, link: link, importFolder: dir)
        link.position = 24000
        model.tick(nowSeconds: 0)
        model.importFile(dir + "/Surround.wav")
        model.finishJobs()
        XCTAssertEqual(model.session.tracks.count, 9, model.message?.text ?? "")
        let added = Array(model.session.tracks[3...])
        XCTAssertEqual(added.map(\.name), ["Surround L", "Surround R", "Surround C", "Surround LFE", "Surround Ls", "Surround Rs"])
        XCTAssertEqual(added.map(\.pan), [-1, 1, 0, 0, -1, 1])
        XCTAssertTrue(added.allSatisfy { $0.regions.first?.timelineStartFrame == 24000 }, "all at the playhead")
        XCTAssertEqual(model.selectedTrack, 3, "the first of them selected")
        XCTAssertEqual(model.message?.text.contains("6 ch → 6 mono tracks: L R C LFE Ls Rs"), true, model.message?.text ?? "")
        XCTAssertEqual(model.message?.isError, false)
        model.handle(.char("u"))
        XCTAssertEqual(model.session.tracks.count, 3, "one undo takes back all six")

        var full = model.session
        full.tracks += (0..<(SessionLimits.maximumTracks - 8)).map { Track(name: "T\($0)") }
        let crowded = ScreenModel(document: SessionDocument(session: full), folder: folder, link: link, importFolder: dir)
        let filesBefore = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).sorted()
        crowded.importFile(dir + "/Surround.wav")
        XCTAssertEqual(crowded.session.tracks.count, SessionLimits.maximumTracks - 5)
        XCTAssertEqual(crowded.message?.isError, true)
        XCTAssertEqual(crowded.message?.text, "cannot import: 6 new tracks would make \(SessionLimits.maximumTracks + 1); a session holds at most \(SessionLimits.maximumTracks); nothing imported")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).sorted(), filesBefore, "nothing written")
    }
}
