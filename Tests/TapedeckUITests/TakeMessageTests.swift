import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckUI
import TapedeckTransport

/// What the message line says when a take is placed: its own line, and what the transport said
/// in the same read joined to it, not put over it (a take's "recorded …" was lost to a notice
/// that came with it, then timed out, so nobody saw what was recorded).
final class TakeMessageTests: XCTestCase {
    private var take: FinishedTake {
        FinishedTake(trackIndex: 2, trackName: "Vocal", region: Region(file: "audio/take.wav", timelineStartFrame: 96000, lengthFrames: 89_088),
                     markerPath: nil)
    }

    func testATakeAndANoticeInOneReadAreBothOnTheMessageLine() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        link.finished = [take]
        link.notice = "round trip now 512 frames (10.7 ms) (was 256 frames)"
        model.tick(nowSeconds: 1)
        XCTAssertEqual(model.session.tracks[2].regions.count, 1, "the take is placed")
        let text = model.message?.text ?? ""
        XCTAssertTrue(text.hasPrefix("recorded 0:00:01.856 on Vocal"), text)
        XCTAssertTrue(text.hasSuffix("; round trip now 512 frames (10.7 ms) (was 256 frames)"), text)
        XCTAssertEqual(model.message?.isError, false)
    }

    func testANoticeAloneReplacesAnOlderLine() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        link.finished = [take]
        model.tick(nowSeconds: 1)
        XCTAssertTrue(model.message?.text.hasPrefix("recorded ") ?? false, "\(String(describing: model.message))")
        link.notice = "MIDI learn: fader Drums"
        model.tick(nowSeconds: 2)
        XCTAssertEqual(model.message?.text, "MIDI learn: fader Drums", "a later read's notice is its own line")
    }

    /// The screen's takes go through its session's owner: placed and saved, their markers let
    /// go; a take whose track was deleted while it recorded is named on the message line, kept
    /// in its file, placed on no other track, and its marker goes (there is nothing to recover
    /// it onto).
    func testATakeIsSavedWithItsTrackAndATakeWhoseTrackWasDeletedIsNamed() throws {
        let path = NSTemporaryDirectory() + "takes-\(UUID().uuidString).tapedeck"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let folder = SessionFolder(path: path)
        let lock = try folder.create(ScreenModelTests.makeSession())
        defer { withExtendedLifetime(lock) {} }
        let link = FakeLink()
        let model = ScreenModel(document: SessionDocument(session: try folder.load()), folder: folder, link: link)
        func marked(_ name: String) throws -> String {
            let marker = folder.path + "/audio/\(name).wav.recording"
            try FileManager.default.createDirectory(atPath: folder.path + "/audio", withIntermediateDirectories: true)
            XCTAssertTrue(FileManager.default.createFile(atPath: marker, contents: Data()))
            return marker
        }
        let kept = try marked("kept"), orphan = try marked("orphan")
        link.finished = [
            FinishedTake(trackIndex: 2, trackName: "Vocal", region: Region(file: "audio/kept.wav", timelineStartFrame: 0, lengthFrames: 4800), markerPath: kept),
            FinishedTake(trackIndex: 1, trackName: "Keys", region: Region(file: "audio/orphan.wav", timelineStartFrame: 0, lengthFrames: 4800), markerPath: orphan),
        ]
        model.tick(nowSeconds: 1)
        XCTAssertEqual(try folder.load().tracks[2].regions.map(\.file), ["audio/kept.wav"], "saved with its track")
        XCTAssertFalse(model.document.isDirty)
        XCTAssertFalse(FileManager.default.fileExists(atPath: kept), "saved: its marker goes")
        XCTAssertEqual(model.session.tracks.flatMap(\.regions).map(\.file), ["audio/kept.wav"], "the orphan is on no track")
        XCTAssertFalse(FileManager.default.fileExists(atPath: orphan))
        XCTAssertEqual(model.message?.isError, true)
        XCTAssertEqual(model.message?.text, "track Keys was deleted while recording; the take is kept in audio/orphan.wav")
        XCTAssertEqual(model.document.undoNames, ["record on Vocal"])
        XCTAssertEqual(link.session, model.session, "the engine plays the take")
    }
}
