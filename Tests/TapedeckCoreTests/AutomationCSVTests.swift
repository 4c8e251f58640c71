import XCTest
@testable import TapedeckCore

/// A lane out as CSV and back in is the lane it was: levels to a millionth of a dB (a fader a
/// controller wrote at −2.0244 dB is not rounded to the screen's −2.0), −∞ as `-inf`, a pan as
/// −1…1, the frames and curves as they were.
final class AutomationCSVTests: XCTestCase {
    private let tempo = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))

    private func roundTrip(_ lane: AutomationLane) throws -> [AutomationPoint] {
        try AutomationCSV.points(AutomationCSV.text(lane, sampleRate: 48000), parameter: lane.parameter, tempoMap: tempo)
    }

    func testAFaderLaneComesBackToAMillionthOfADecibel() throws {
        let lane = AutomationLane(parameter: .gain, points: [
            AutomationPoint(frame: 0, value: Fader.silentDecibels),
            AutomationPoint(frame: 1, value: -2.024399734203488, curve: .exponential),
            AutomationPoint(frame: 48_001, value: 4.1999),
            AutomationPoint(frame: 96_000, value: -0.0000004),
        ])
        let back = try roundTrip(lane)
        XCTAssertEqual(back.map(\.frame), lane.points.map(\.frame))
        XCTAssertEqual(back.map(\.curve), lane.points.map(\.curve))
        XCTAssertTrue(Fader.isSilent(back[0].value), "-inf stays silent")
        for (b, p) in zip(back.dropFirst(), lane.points.dropFirst()) { XCTAssertEqual(b.value, p.value, accuracy: 1e-6) }
        XCTAssertTrue(AutomationCSV.text(lane, sampleRate: 48000).contains(",-2.0244,"), "no exponent, no trailing zeros")
    }

    func testAPanLaneComesBackAsItsNumbers() throws {
        let lane = AutomationLane(parameter: .pan, points: [AutomationPoint(frame: 0, value: -1), AutomationPoint(frame: 10, value: 1.0 / 3),
                                                            AutomationPoint(frame: 20, value: 0.0000001)])
        let back = try roundTrip(lane)
        for (b, p) in zip(back, lane.points) { XCTAssertEqual(b.value, p.value, accuracy: 1e-6) }
        XCTAssertEqual(AutomationCSV.decimalText(-0.5), "-0.5")
        XCTAssertEqual(AutomationCSV.decimalText(0.0000001), "0")
        XCTAssertEqual(AutomationCSV.decimalText(-12), "-12")
    }

    /// A node parameter comes back with every digit, while a listing or the screen's column
    /// shows it short (a value along a segment was printed whole, and the screen cut
    /// 3333.3333333333335 to "3333334").
    func testANodeLaneComesBackWholeAndIsShownShort() throws {
        let lane = AutomationLane(parameter: .node("lpf", "cutoff"), points: [
            AutomationPoint(frame: 0, value: 3333.3333333333335), AutomationPoint(frame: 9, value: 0.123456789),
            AutomationPoint(frame: 10, value: 8000), AutomationPoint(frame: 11, value: -1234.56)])
        XCTAssertEqual(try roundTrip(lane).map(\.value), lane.points.map(\.value))
        let p = lane.parameter
        XCTAssertEqual(p.valueText(3333.3333333333335), "3333.3")
        XCTAssertEqual(p.valueText(0.123456789), "0.1235")
        XCTAssertEqual(p.valueText(8000), "8000")
        XCTAssertEqual(p.valueText(-1234.56), "-1234.6")
        XCTAssertEqual(p.valueText(-0.00001), "0")
        XCTAssertEqual(p.valueText(19999.96), "20000")
        XCTAssertEqual(p.valueText(1.5e20), "1.5e+20")
        for v in [3333.3333333333335, -1234.56, 0.5, 99.999, 12345.678] {
            XCTAssertLessThanOrEqual(p.valueText(v).count, 7, "\(v) fits the screen's column")
        }
    }
}
