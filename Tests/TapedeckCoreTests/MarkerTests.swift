import XCTest
@testable import TapedeckCore

final class MarkerTests: XCTestCase {
    func testMarkersStayInTimelineOrderAndAreFoundByNameOrNumber() throws {
        var s = Session()
        try s.addMarker("Chorus", atFrame: 96000)
        try s.addMarker("", atFrame: 48000)
        try s.addMarker("Bridge", atFrame: 200000)
        XCTAssertEqual(s.markers.map(\.name), ["M2", "Chorus", "Bridge"])
        XCTAssertEqual(try s.markerIndex(named: "chorus"), 1)
        XCTAssertEqual(try s.markerIndex(named: "3"), 2)
        XCTAssertThrowsError(try s.markerIndex(named: "Chrous")) { XCTAssertTrue("\($0)".contains("did you mean 'Chorus'"), "\($0)") }
        XCTAssertEqual(s.nextMarker(after: 96000)?.name, "Bridge")
        XCTAssertEqual(s.previousMarker(before: 96000)?.name, "M2")
        XCTAssertNil(s.previousMarker(before: 48000))
        XCTAssertEqual(s.markerIndex(atOrBefore: 100000), 1)
        try s.renameMarker(0, to: "Verse")
        XCTAssertThrowsError(try s.renameMarker(0, to: "  "))
        try s.deleteMarker(1)
        XCTAssertEqual(s.markers.map(\.name), ["Verse", "Bridge"])
        XCTAssertThrowsError(try s.addMarker("x", atFrame: -1))
    }

    func testLoopAndPunchRangesAreSetIndependently() throws {
        var s = Session()
        try s.setLoop(FrameRange(startFrame: 48000, endFrame: 96000), enabled: true)
        try s.setPunch(FrameRange(startFrame: 60000, endFrame: 70000))
        XCTAssertEqual(s.loopRange, FrameRange(startFrame: 48000, endFrame: 96000))
        XCTAssertEqual(s.punchRange, FrameRange(startFrame: 60000, endFrame: 70000))
        XCTAssertTrue(s.loopEnabled)
        XCTAssertFalse(s.punchEnabled)
        XCTAssertThrowsError(try s.setPunch(FrameRange(startFrame: 10, endFrame: 10)))
        try s.setLoop(nil)
        XCTAssertFalse(s.loopEnabled)
        XCTAssertNotNil(s.punchRange, "clearing the loop leaves the punch")
    }

    func testGridStepsGoToTheNextLineInTheirDirection() {
        let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
        XCTAssertEqual(map.gridFrame(from: 0, steps: 1, snap: .beats), 24000)
        XCTAssertEqual(map.gridFrame(from: 30000, steps: 1, snap: .beats), 48000)
        XCTAssertEqual(map.gridFrame(from: 30000, steps: -1, snap: .beats), 24000)
        XCTAssertEqual(map.gridFrame(from: 96000, steps: -1, snap: .bars), 0)
        XCTAssertEqual(map.gridFrame(from: 10, steps: -1, snap: .bars), 0)
        XCTAssertNil(map.gridFrame(from: 10, steps: 1, snap: .off))
    }
}
