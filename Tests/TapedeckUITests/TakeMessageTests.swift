import XCTest
import TapedeckCore
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
}
