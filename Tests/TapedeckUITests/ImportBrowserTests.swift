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
        let track = try XCTUnwrap(model.session.tracks.last)
        XCTAssertEqual(model.session.tracks.count, 4, "a new track, as the command line does")
        XCTAssertEqual(track.name, "Bassline")
        XCTAssertEqual(track.inputChannels, [1, 2])
        XCTAssertEqual(track.regions.first?.timelineStartFrame, 96000, "at the playhead")
        XCTAssertEqual(model.selectedTrack, 3)
        XCTAssertEqual(model.session.tracks[0].regions, [], "the selected track is left alone")
    }
}
