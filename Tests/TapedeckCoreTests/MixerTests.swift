import XCTest
@testable import TapedeckCore

final class MixerTests: XCTestCase {
    func testFaderStepsLandOnTheGridAndReachMinusInfinityBelowTheFloor() {
        XCTAssertEqual(Fader.stepped(0, steps: 1, coarse: false), 0.5)
        XCTAssertEqual(Fader.stepped(-2.7, steps: 1, coarse: false), -2.5)
        XCTAssertEqual(Fader.stepped(-2.7, steps: -1, coarse: false), -3)
        XCTAssertEqual(Fader.stepped(11, steps: 1, coarse: true), 12, "the top is +12 dB")
        XCTAssertEqual(Fader.stepped(-60, steps: -1, coarse: false), Fader.silentDecibels)
        XCTAssertEqual(Fader.stepped(Fader.silentDecibels, steps: 1, coarse: true), -60)
        XCTAssertEqual(Fader.text(Fader.silentDecibels), "-inf")
        XCTAssertEqual(Fader.text(1.5), "+1.5")
        XCTAssertEqual(Fader.text(0), "0.0")
        XCTAssertEqual(Decibels.toLinear(Fader.silentDecibels), 0)
    }

    func testFaderTextIsReadAsUsersTypeIt() {
        XCTAssertEqual(Fader.parse("-3"), -3)
        XCTAssertEqual(Fader.parse("+1.5dB"), 1.5)
        XCTAssertEqual(Fader.parse("-inf"), Fader.silentDecibels)
        XCTAssertNil(Fader.parse("nan"))
        XCTAssertNil(Fader.parse("loud"))
        XCTAssertNil(Fader.parse(""))
        XCTAssertNotNil(Fader.problem(13))
        XCTAssertNil(Fader.problem(12))
    }

    func testPanReadsAndWritesLeftCentreRight() {
        XCTAssertEqual(Pan.parse("L20"), -0.2)
        XCTAssertEqual(Pan.parse("r100"), 1)
        XCTAssertEqual(Pan.parse("C"), 0)
        XCTAssertEqual(Pan.parse("-0.5"), -0.5)
        XCTAssertNil(Pan.parse("L101"))
        XCTAssertNil(Pan.parse("2"))
        XCTAssertNil(Pan.parse("nan"))
        XCTAssertEqual(Pan.text(-0.2), "L20")
        XCTAssertEqual(Pan.stepped(0, steps: -1, coarse: false), -0.05)
        XCTAssertEqual(Pan.stepped(0.9, steps: 1, coarse: true), 1)
    }

    func testInputsAreOneChannelOrAPair() throws {
        XCTAssertEqual(try InputChannels.parse("3"), [3])
        XCTAssertEqual(try InputChannels.parse("3-4"), [3, 4])
        XCTAssertEqual(try InputChannels.parse("1,3"), [1, 3])
        for bad in ["0", "3-3", "1-2-3", "x", "", "300", "-2"] {
            XCTAssertThrowsError(try InputChannels.parse(bad), bad)
        }
        XCTAssertEqual(InputChannels.text([3, 4]), "in 3-4")
    }

    func testTracksAreFoundByNumberOrNameIgnoringCaseWithASuggestion() throws {
        var s = Session()
        s.tracks = [Track(name: "Drums"), Track(name: "Lead Vocal")]
        XCTAssertEqual(try s.trackIndex(named: "lead vocal"), 1)
        XCTAssertEqual(try s.trackIndex(named: "1"), 0)
        XCTAssertThrowsError(try s.trackIndex(named: "3")) { XCTAssertEqual("\($0)", "track 3 does not exist (the session has 2 tracks)") }
        XCTAssertThrowsError(try s.trackIndex(named: "Drms")) { XCTAssertEqual("\($0)", "no track named 'Drms' (did you mean 'Drums'?)") }
        XCTAssertThrowsError(try s.trackIndex(named: "Zither")) { XCTAssertEqual("\($0)", "no track named 'Zither'") }
        XCTAssertEqual(NameMatch.nearest("exprot", in: ["import", "export", "info"]), "export")
    }
}
