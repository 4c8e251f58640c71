import XCTest
import TapedeckCore
@testable import TapedeckUI
import TapedeckTransport

/// Automation on the screen: lanes shown under their track, one selected with the arrows,
/// points added, stepped, moved and deleted at the playhead on the snap grid, the mode
/// stepped, a new lane named — each one undo step — and drawn where the points are.
final class AutomationKeyTests: XCTestCase {
    private func type(_ text: String, into model: ScreenModel) { for c in text { model.handle(.char(c)) } }

    func testPointsAreAddedSteppedMovedAndDeletedOnTheGridAndEveryEditUndoes() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        let before = model.session
        model.handle(.char("E"))
        type("gain", into: model)
        model.handle(.named(.enter))
        XCTAssertNil(model.overlay)
        XCTAssertEqual(model.session.tracks[0].automation.map(\.parameter), [.gain])
        XCTAssertEqual(model.selectedLane, 0, "the new lane is shown and selected")
        XCTAssertEqual(model.session.tracks[0].automation[0].points, [AutomationPoint(frame: 0, value: 0)], "at the fader's value")

        // Two beats on (24 000 frames a beat at 120 BPM), a point there, 1 dB down.
        model.handle(.named(.right)); model.handle(.named(.right))
        model.handle(.named(.enter))
        model.handle(.char("9")); model.handle(.char("9"))
        XCTAssertEqual(model.session.tracks[0].automation[0].points.last, AutomationPoint(frame: 48_000, value: -1))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 0, "the fader keys moved the point, not the fader")
        XCTAssertEqual(link.session.tracks[0].automation[0].points.count, 2, "the engine plays the edit at once")

        // A beat on, the playhead with it; then deleted.
        model.handle(.named(.shiftRight))
        XCTAssertEqual(model.session.tracks[0].automation[0].points.last?.frame, 72_000)
        XCTAssertEqual(model.playheadFrame, 72_000)
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .ascii)
        let laneRow = (0..<30).first { canvas.text(row: $0).contains("> gain") }
        XCTAssertNotNil(laneRow, canvas.text)
        if let laneRow {
            XCTAssertTrue(canvas.text(row: laneRow).contains("play"), canvas.text(row: laneRow))
            XCTAssertTrue(canvas.text(row: laneRow).contains("-1.0"), "the value at the playhead: \(canvas.text(row: laneRow))")
            XCTAssertEqual(canvas.text(row: laneRow).filter { $0 == "o" }.count, 2, "a point drawn where each is: \(canvas.text(row: laneRow))")
        }
        model.handle(.char("x"))
        XCTAssertEqual(model.session.tracks[0].automation[0].points.count, 1)
        model.handle(.char("x"))
        XCTAssertEqual(model.message?.isError, true, "nothing left at the playhead: said")

        model.handle(.char("Y")); model.handle(.char("Y"))
        XCTAssertEqual(model.session.tracks[0].automation[0].mode, .latch, "play → touch → latch")
        while model.document.undoName != nil { model.handle(.char("u")) }
        XCTAssertEqual(model.session, before, "every automation edit undoes exactly")
    }

    func testWithItsLanesShownAMovedRegionTakesItsAutomationAlong() {
        let model = ScreenModelTests.makeModel()
        var session = model.session
        session.tracks[1].regions = [Region(file: "audio/b.wav", timelineStartFrame: 0, lengthFrames: 48_000)]
        session.tracks[1].automation = [AutomationLane(parameter: .gain, points: [AutomationPoint(frame: 24_000, value: -6)])]
        model.owner.edit("setup") { $0 = session }
        model.handle(.named(.down))
        model.handle(.named(.enter))
        model.handle(.named(.shiftRight))
        XCTAssertEqual(model.session.tracks[1].regions[0].timelineStartFrame, 24_000)
        XCTAssertEqual(model.session.tracks[1].automation[0].points[0].frame, 24_000, "lanes hidden: the automation stays")
        model.handle(.char("V"))
        model.handle(.named(.shiftRight))
        XCTAssertEqual(model.session.tracks[1].regions[0].timelineStartFrame, 48_000)
        XCTAssertEqual(model.session.tracks[1].automation[0].points[0].frame, 48_000, "lanes shown: it goes with the region")
        model.handle(.char("u"))
        XCTAssertEqual(model.session.tracks[1].automation[0].points[0].frame, 24_000, "one undo step for both")
        XCTAssertEqual(model.session.tracks[1].regions[0].timelineStartFrame, 24_000)
    }

    func testRollingOverATouchLaneAFaderKeyTakesTheFaderFromWhereTheLaneHasIt() {
        let model = ScreenModelTests.makeModel()
        var session = model.session
        session.tracks[0].automation = [AutomationLane(parameter: .gain, mode: .touch, points: [AutomationPoint(frame: 0, value: -10)])]
        model.owner.edit("lane") { $0 = session }
        model.handle(.char("0"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 0.5, "standing, the fader's own value steps")
        model.handle(.named(.space))
        model.handle(.char("0"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -9.5, "rolling, from the -10 dB heard")
        model.handle(.char("0"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -9.0, "then the hand holds it")
        model.handle(.named(.space))
        model.handle(.char("0"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -8.5)
    }

    func testRollingOverASendLaneInLatchASendKeyTakesTheLevelFromWhereTheLaneHasIt() {
        let model = ScreenModelTests.makeModel()
        var session = model.session
        session.tracks[0].sends = [Send(bus: "FX", levelDecibels: -12)]
        session.tracks.append(Track.makeBus(name: "FX"))
        session.tracks[0].automation = [AutomationLane(parameter: .send("FX"), mode: .latch, points: [AutomationPoint(frame: 0, value: -20)])]
        model.owner.edit("lane") { $0 = session }
        model.handle(.char("@"))
        XCTAssertEqual(model.session.tracks[0].sends[0].levelDecibels, -11.5, "standing, the send's own level steps")
        model.handle(.named(.space))
        model.handle(.char("@"))
        XCTAssertEqual(model.session.tracks[0].sends[0].levelDecibels, -19.5, "rolling, from the -20 dB heard")
        model.handle(.char("@"))
        XCTAssertEqual(model.session.tracks[0].sends[0].levelDecibels, -19.0, "then the hand holds it")
    }

    func testTheTrackListShowsTheFaderAndPanTheirLanesMoveUntilAHandHoldsThem() {
        let model = ScreenModelTests.makeModel()
        var session = model.session
        session.tracks[0].gainDecibels = 0
        session.tracks[0].automation = [AutomationLane(parameter: .gain, mode: .touch, points: [AutomationPoint(frame: 0, value: -10)]),
                                        AutomationLane(parameter: .pan, mode: .off, points: [AutomationPoint(frame: 0, value: -1)])]
        model.owner.edit("lane") { $0 = session }
        func row() -> (text: String, role: Role?) {
            let canvas = ScreenRenderer.render(model, height: 30, width: 120, glyphs: .unicode)
            for y in 0..<30 where canvas.text(row: y).contains(model.session.tracks[0].name) {
                let text = canvas.text(row: y)
                guard let r = text.range(of: "dB") else { return (text, nil) }
                return (text, canvas.cell(y, text.distance(from: text.startIndex, to: r.lowerBound) - 1).role)
            }
            return ("", nil)
        }
        XCTAssertTrue(row().text.contains("-10.0dB"), "the lane's value, not the fader's 0.0: \(row().text)")
        XCTAssertEqual(row().role, .playing, "in the playing colour")
        XCTAssertTrue(row().text.contains(" C "), "a lane that is off leaves the pan's own value: \(row().text)")
        model.handle(.named(.space))
        model.handle(.char("0"))
        XCTAssertTrue(row().text.contains("-9.5dB"), "held by a key: the hand's value \(row().text)")
        XCTAssertEqual(row().role, .value)
    }

    func testTheArrowsWalkThroughShownLanesAndAWrongLaneNameIsRefusedWithTheForms() {
        let model = ScreenModelTests.makeModel()
        var session = model.session
        session.tracks[0].automation = [AutomationLane(parameter: .gain, points: [AutomationPoint(frame: 0, value: -6)]),
                                        AutomationLane(parameter: .pan, points: [AutomationPoint(frame: 0, value: 0.5)])]
        model.owner.edit("lanes") { $0 = session }
        model.handle(.char("V"))
        XCTAssertTrue(model.automationShown.contains(0))
        model.handle(.named(.down))
        XCTAssertEqual(model.selectedLane, 0)
        model.handle(.named(.down))
        XCTAssertEqual(model.selectedLane, 1)
        model.handle(.named(.down))
        XCTAssertEqual(model.selectedTrack, 1, "past the last lane: the next track")
        XCTAssertNil(model.selectedLane)
        model.handle(.named(.up))
        XCTAssertEqual(model.selectedTrack, 0)
        XCTAssertEqual(model.selectedLane, 1, "up into the track's last lane")
        model.handle(.char("9"))
        XCTAssertEqual(model.session.tracks[0].automation[1].points[0].value, 0.45, accuracy: 1e-12, "a pan point steps as the pan keys do")
        model.handle(.named(.right))
        model.handle(.char("9"))
        XCTAssertEqual(model.session.tracks[0].automation[1].points[0].value, 0.45, accuracy: 1e-12, "no point at the playhead: nothing moved")
        XCTAssertEqual(model.message?.isError, true)
        model.handle(.char("E"))
        type("volumee", into: model)
        model.handle(.named(.enter))
        guard case .text(let input)? = model.overlay else { return XCTFail("the dialog stays open on a refusal") }
        XCTAssertTrue(input.problem?.contains("gain (dB), pan, mute, send:BUS or NODE.PARAM") == true, input.problem ?? "")
        model.handle(.named(.esc))
        model.handle(.char("V"))
        XCTAssertNil(model.selectedLane, "hidden lanes cannot stay selected")
        model.handle(.char("9"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -0.5, "with no lane selected the fader keys move the fader")
    }
}
