import XCTest
@testable import TapedeckCore

final class SessionDocumentTests: XCTestCase {
    func testUndoAndRedoWalkEveryEditBackAndForth() {
        var doc = SessionDocument(session: Session())
        doc.edit("add track") { $0.tracks.append(Track(name: "Gtr")) }
        doc.edit("mute") { $0.tracks[0].mute = true }
        doc.edit("gain") { $0.tracks[0].gainDecibels = -6 }
        XCTAssertTrue(doc.isDirty)
        XCTAssertEqual(doc.undo(), "gain")
        XCTAssertEqual(doc.session.tracks[0].gainDecibels, 0)
        XCTAssertEqual(doc.undo(), "mute")
        XCTAssertFalse(doc.session.tracks[0].mute)
        XCTAssertEqual(doc.redo(), "mute")
        XCTAssertTrue(doc.session.tracks[0].mute)
        XCTAssertEqual(doc.undo(), "mute")
        XCTAssertEqual(doc.undo(), "add track")
        XCTAssertTrue(doc.session.tracks.isEmpty)
        XCTAssertNil(doc.undo())
        XCTAssertFalse(doc.isDirty)
        XCTAssertEqual(doc.redo(), "add track")
        XCTAssertEqual(doc.session.tracks.count, 1)
    }

    func testANewEditClearsRedo() {
        var doc = SessionDocument(session: Session())
        doc.edit("a") { $0.tempoBPM = 100 }
        doc.undo()
        doc.edit("b") { $0.tempoBPM = 90 }
        XCTAssertNil(doc.redo())
        XCTAssertEqual(doc.session.tempoBPM, 90)
    }

    func testAnEditThatChangesNothingIsNotRecorded() {
        var doc = SessionDocument(session: Session())
        doc.edit("nothing") { $0.tempoBPM = 120 }
        XCTAssertNil(doc.undoName)
    }

    func testAFailingEditLeavesTheSessionUntouched() {
        struct Refused: Error {}
        var doc = SessionDocument(session: Session())
        XCTAssertThrowsError(try doc.edit("half") { (s: inout Session) throws(Refused) in
            s.tempoBPM = 60
            throw Refused()
        })
        XCTAssertEqual(doc.session.tempoBPM, 120)
        XCTAssertNil(doc.undoName)
    }

    func testSoloSilencesEveryTrackThatIsNotSoloed() {
        var s = Session()
        s.tracks = [Track(name: "a"), Track(name: "b", solo: true), Track(name: "c", mute: true, solo: true)]
        XCTAssertFalse(s.isAudible(trackIndex: 0))
        XCTAssertTrue(s.isAudible(trackIndex: 1))
        XCTAssertFalse(s.isAudible(trackIndex: 2), "mute wins over solo")
    }

    func testValidatorNamesTheBadField() {
        var s = Session()
        s.tracks = [Track(name: "a"), Track(name: "b", pan: 3)]
        XCTAssertEqual(SessionValidator.problem(in: s), "tracks[1].pan: 3.0 is outside -1...1")
        s.tracks[1].pan = 0
        s.tracks[1].regions = [Region(file: "audio/x.wav", timelineStartFrame: 0, lengthFrames: 0)]
        XCTAssertEqual(SessionValidator.problem(in: s), "tracks[1].regions[0].lengthFrames: 0 must be positive")
        s.tracks[1].regions[0].lengthFrames = 10
        XCTAssertNil(SessionValidator.problem(in: s))
    }
}
