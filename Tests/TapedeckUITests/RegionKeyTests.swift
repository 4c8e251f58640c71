import XCTest
import TapedeckCore
@testable import TapedeckUI

/// Editing regions, markers, ranges and take lanes from the keyboard: each edit does what
/// it says to the frame, the engine follows, and undo restores the session exactly.
final class RegionKeyTests: XCTestCase {
    /// Drums has one 4-second region from 1 s; Vocal has a stack of three takes over 0–2 s.
    private func makeModel(link: FakeLink = FakeLink()) -> ScreenModel {
        var s = ScreenModelTests.makeSession()
        s.tracks[0].regions = [Region(file: "audio/d.wav", timelineStartFrame: 48000, lengthFrames: 192_000)]
        for i in 1...3 {
            try? s.addTake(track: 2, region: Region(file: "audio/v\(i).wav", timelineStartFrame: 0, lengthFrames: 96000), group: 1)
        }
        return ScreenModel(document: SessionDocument(session: s), folder: nil, link: link)
    }

    private func at(_ model: ScreenModel, _ link: FakeLink, _ frame: Int64) {
        link.position = frame
        model.tick(nowSeconds: 0)
    }

    func testSplitTrimFadeGainAndMoveToTheFrameThenUndoEverything() {
        let link = FakeLink()
        let model = makeModel(link: link)
        let before = model.session
        at(model, link, 96000)
        model.handle(.char("S"))
        XCTAssertEqual(model.session.tracks[0].regions.map(\.timelineStartFrame), [48000, 96000])
        XCTAssertNil(model.selectedRegion, "with nothing selected, the split selects nothing: keys act at the playhead")
        at(model, link, 120_000)
        model.handle(.char("f"))
        XCTAssertEqual(model.session.tracks[0].regions[1].fadeInFrames, 24000)
        at(model, link, 200_000)
        model.handle(.char("6"))
        XCTAssertEqual(model.session.tracks[0].regions[1].timelineEndFrame, 200_000)
        model.handle(.char("4")); model.handle(.char("4"))
        XCTAssertEqual(model.session.tracks[0].regions[1].gainDecibels, 2)
        model.handle(.named(.shiftRight))
        XCTAssertEqual(model.session.tracks[0].regions[1].timelineStartFrame, 120_000, "to the next beat line (snap beats)")
        model.handle(.char("g"))
        XCTAssertEqual(model.snap, .off)
        model.handle(.char("2"))
        XCTAssertEqual(model.session.tracks[0].regions[1].timelineStartFrame, 120_480, "nudged 10 ms")
        XCTAssertEqual(link.session, model.session, "the engine follows every edit")
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        XCTAssertTrue(canvas.rows.joined().contains { $0.role == .fade }, "the fade curve is drawn")
        XCTAssertTrue(canvas.rows.joined().contains { $0.role == .selected && $0.character != " " }, "the selected region stands out")
        while model.document.undoName != nil { model.handle(.char("u")) }
        XCTAssertEqual(model.session, before, "undo restores the session exactly")
    }

    func testStepSelectCopyPasteDuplicateRaiseAndDelete() {
        let link = FakeLink()
        let model = makeModel(link: link)
        model.handle(.char("."))
        XCTAssertEqual(model.selectedRegion, 0)
        XCTAssertEqual(model.playheadFrame, 48000, "stepping to a region puts the playhead at its start")
        model.handle(.char("y"))
        at(model, link, 300_000)
        model.handle(.char("P"))
        XCTAssertEqual(model.session.tracks[0].regions.map(\.timelineStartFrame), [48000, 300_000])
        model.handle(.char("D"))
        XCTAssertEqual(model.session.tracks[0].regions.last?.timelineStartFrame, 492_000, "a duplicate follows its original")
        at(model, link, 100_000)
        model.handle(.named(.enter))
        XCTAssertEqual(model.selectedRegion, 0)
        model.handle(.char("^"))
        XCTAssertEqual(model.session.tracks[0].regions.last?.timelineStartFrame, 48000, "raised to the top layer")
        model.handle(.char("x"))
        XCTAssertEqual(model.session.tracks[0].regions.count, 2)
        XCTAssertNil(model.selectedRegion)
        at(model, link, 10)
        model.handle(.char("x"))
        XCTAssertTrue(model.message?.text.hasPrefix("no region under the playhead") ?? false, model.message?.text ?? "")
    }

    func testStretchTakesAFactorOrALength() {
        let link = FakeLink()
        let model = makeModel(link: link)
        at(model, link, 50000)
        model.handle(.char("W"))
        for _ in 0..<12 { model.handle(.named(.backspace)) }
        for c in "2x" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        XCTAssertEqual(model.session.tracks[0].regions[0].lengthFrames, 384_000)
        XCTAssertEqual(model.session.tracks[0].regions[0].rate, 0.5)
        model.handle(.char("W"))
        for _ in 0..<12 { model.handle(.named(.backspace)) }
        for c in "banana" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        guard case .text(let input) = model.overlay else { return XCTFail("a bad length is refused") }
        XCTAssertTrue(input.problem?.contains("2x or 50%") ?? false, input.problem ?? "")
        for _ in 0..<6 { model.handle(.named(.backspace)) }
        for c in "2" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        XCTAssertEqual(model.session.tracks[0].regions[0].lengthFrames, 96000, "2 seconds")
        XCTAssertEqual(model.session.tracks[0].regions[0].rate, 2)
        // A third of its length: the rate said in six digits, not seventeen.
        model.handle(.char("W"))
        for _ in 0..<12 { model.handle(.named(.backspace)) }
        for c in "3x" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        XCTAssertTrue(model.message?.text.hasSuffix("to rate 0.666667 (rendered with R3 when played)") ?? false, model.message?.text ?? "")
        model.handle(.named(.enter))
        XCTAssertTrue(model.message?.text.hasSuffix(", rate 0.666667") ?? false, model.message?.text ?? "")
    }

    func testTakeLanesShowEveryTakeAndSplittingTheStackCompsIt() {
        let link = FakeLink()
        let model = makeModel(link: link)
        model.handle(.named(.down)); model.handle(.named(.down))
        model.handle(.char("L"))
        var text = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode).text
        for take in ["▶ take 1.3 plays", "  take 1.2", "  take 1.1"] { XCTAssertTrue(text.contains(take), "lanes lack \(take):\n\(text)") }
        at(model, link, 48000)
        model.handle(.char("S"))
        XCTAssertEqual(model.session.tracks[2].takeGroups, [1, 2])
        model.handle(.char("T"))
        XCTAssertEqual(model.session.tracks[2].activeRegions.map(\.file).sorted(), ["audio/v1.wav", "audio/v3.wav"],
                       "take 3 before the split, take 1 after it")
        text = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode).text
        XCTAssertTrue(text.contains("▶ take 2.1 plays"), text)
        model.handle(.char("L"))
        text = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode).text
        XCTAssertFalse(text.contains("take 2.1 plays"), "folded")
    }

    func testMarkersAndIndependentLoopAndPunchRanges() {
        let link = FakeLink()
        let model = makeModel(link: link)
        at(model, link, 96000)
        model.handle(.char("k"))
        model.handle(.char("K"))
        for _ in 0..<4 { model.handle(.named(.backspace)) }
        for c in "Chorus" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        XCTAssertEqual(model.session.markers, [Marker(name: "Chorus", frame: 96000)])
        at(model, link, 0)
        model.handle(.named(.pgdn))
        XCTAssertEqual(model.playheadFrame, 96000)
        model.handle(.char("p"))
        XCTAssertTrue(model.message?.text.hasPrefix("no punch range") ?? false, "punch no longer borrows the loop range")
        model.handle(.char(";"))
        at(model, link, 144_000)
        model.handle(.char("'"))
        model.handle(.char("["))
        XCTAssertEqual(model.session.punchRange, FrameRange(startFrame: 96000, endFrame: 144_000))
        XCTAssertEqual(model.session.loopRange?.startFrame, 144_000, "the loop edge moves the loop only")
        model.handle(.char("p"))
        XCTAssertTrue(model.session.punchEnabled)
        model.handle(.ctrl("k"))
        XCTAssertEqual(model.session.markers, [])
        model.handle(.char("u"))
        XCTAssertEqual(model.session.markers.map(\.name), ["Chorus"])
    }
}
