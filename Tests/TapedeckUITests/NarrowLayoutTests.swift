import XCTest
import TapedeckCore
@testable import TapedeckUI

/// The screen at 80×24, the smallest terminal people use (issue 28): nothing cut mid-word,
/// the mixer's scale keeps its 0 dB mark, take names beside the track, not over its waveform.
final class NarrowLayoutTests: XCTestCase {
    private func model() -> ScreenModel {
        var s = ScreenModelTests.makeSession()
        for i in 1...3 {
            try? s.addTake(track: 2, region: Region(file: "audio/v\(i).wav", timelineStartFrame: 0, lengthFrames: 96000), group: 1)
        }
        return ScreenModel(document: SessionDocument(session: s), folder: nil, link: FakeLink())
    }

    func testTheTransportBarShowsWholeFieldsAndSaysWhatIsOn() {
        let m = model()
        var text = ScreenRenderer.render(m, height: 24, width: 80, glyphs: .unicode).text(row: 0)
        // Every field whole: a word at the right edge is one of the bar's words, never a piece.
        let last = text.split(separator: " ").last.map(String.init) ?? ""
        XCTAssertFalse(["o", "PUNC", "CLI", "COU"].contains(last), text)
        XCTAssertTrue(text.contains("1.00x stretch"), text)
        m.handle(.char("["))
        m.handle(.named(.right)); m.handle(.named(.right))
        m.handle(.char("]"))
        m.handle(.char("l"))
        text = ScreenRenderer.render(m, height: 24, width: 80, glyphs: .unicode).text(row: 0)
        XCTAssertTrue(text.contains("LOOP on"), "a switch that is on is shown at 80 columns: \(text)")
        let wide = ScreenRenderer.render(m, height: 30, width: 140, glyphs: .unicode).text(row: 0)
        XCTAssertTrue(wide.contains("PUNCH off") && wide.contains("CLICK off"), "all of it when there is room: \(wide)")
    }

    func testTheDeviceIsCutAtAWord() {
        XCTAssertEqual(TransportBarView.wordsFitting("offline (no audio device)", width: 20), "offline (no audio…")
        XCTAssertEqual(TransportBarView.wordsFitting("hw:CARD=PCH,DEV=0", width: 8), "hw:CARD…")
        XCTAssertEqual(TransportBarView.wordsFitting("short", width: 20), "short")
    }

    func testTheMixerScaleKeepsItsZeroMark() {
        let m = model()
        m.handle(.char("v"))
        let canvas = ScreenRenderer.render(m, height: 24, width: 80, glyphs: .unicode)
        let marks = (0..<canvas.height).map { String(canvas.text(row: $0).prefix(5)).trimmingCharacters(in: .whitespaces) }
        XCTAssertTrue(marks.contains("0"), "0 dB marked: \(marks)")
        XCTAssertTrue(marks.contains("+12") && marks.contains("-60"), "\(marks)")
    }

    func testTheTakeHeardIsNamedBesideTheTrackNotOverItsWaveform() {
        let m = model()
        let canvas = ScreenRenderer.render(m, height: 24, width: 80, glyphs: .unicode)
        XCTAssertTrue(canvas.text.contains(" t3/3"), canvas.text)
        XCTAssertFalse(canvas.text.contains("take 3/3"), canvas.text)
    }

    func testASplitKeepsARegionSelectedWhenOneWas() {
        let m = model()
        var s = m.session
        s.tracks[0].regions = [Region(file: "audio/d.wav", timelineStartFrame: 0, lengthFrames: 192_000)]
        m.edit("setup") { $0 = s }
        m.handle(.named(.right)); m.handle(.named(.right))
        m.handle(.named(.enter))
        XCTAssertEqual(m.selectedRegion, 0)
        m.handle(.char("S"))
        XCTAssertEqual(m.session.tracks[0].regions.count, 2)
        XCTAssertEqual(m.selectedRegion, 1, "the part under the playhead")
    }
}
