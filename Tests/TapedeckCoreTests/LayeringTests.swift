import XCTest
@testable import TapedeckCore

final class LayeringTests: XCTestCase {
    private func region(_ start: Int64, _ length: Int64, fadeIn: Int64 = 0, fadeOut: Int64 = 0) -> Region {
        Region(file: "a.wav", timelineStartFrame: start, lengthFrames: length, fadeInFrames: fadeIn, fadeOutFrames: fadeOut)
    }

    func testARegionAloneOrBesideOthersKeepsItsOwnFades() {
        let regions = [region(0, 1000, fadeIn: 10), region(1000, 1000), region(5000, 100, fadeOut: 7)]
        XCTAssertEqual(Region.layered(regions, crossfadeFrames: 240), regions, "back to back is not overlapping")
    }

    func testAnUpperRegionCrossfadesAtTheEdgesThatLieOverALowerOne() {
        let lower = region(0, 10000)
        let inside = region(2000, 3000, fadeIn: 500)
        let overEnd = region(9000, 4000)
        let layered = Region.layered([lower, inside, overEnd], crossfadeFrames: 240)
        XCTAssertEqual(layered[0], lower, "the bottom layer is never changed")
        XCTAssertEqual([layered[1].fadeInFrames, layered[1].fadeOutFrames], [500, 240], "a longer fade of its own is the crossfade")
        XCTAssertEqual([layered[2].fadeInFrames, layered[2].fadeOutFrames], [240, 0], "its end lies over nothing")
    }

    func testAShortRegionCrossfadesOverAtMostHalfItsLength() {
        let layered = Region.layered([region(0, 1000), region(100, 100)], crossfadeFrames: 240)
        XCTAssertEqual([layered[1].fadeInFrames, layered[1].fadeOutFrames], [50, 50])
    }

    func testTheEnvelopeIsLinearInAndOut() {
        let r = region(0, 1000, fadeIn: 100, fadeOut: 200)
        XCTAssertEqual(r.envelope(atPosition: 0), 0)
        XCTAssertEqual(r.envelope(atPosition: 50), 0.5)
        XCTAssertEqual(r.envelope(atPosition: 500), 1)
        XCTAssertEqual(r.envelope(atPosition: 900), 0.5)
    }
}
