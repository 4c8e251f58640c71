import XCTest
@testable import TapedeckRemote
import TapedeckDSP

/// The numbers Ardour's OSC surface sends, checked against Ardour's own lines: the LED strip
/// of feedback bit 256 (`osc_route_observer.cc`, `osc_global_observer.cc`; the values are
/// what that C++ gives, compiled with g++ -O2 on x86-64) and a plugin control's 0…1
/// (`ParameterDescriptor::to_interface`, `from_interface`).
final class OSCArdourLawTests: XCTestCase {
    func testTheLEDStripIsArdoursLine() {
        // dB: (16-bit strip and select page, 32-bit master)
        let ardour: [(Double, UInt32, UInt32)] = [
            (-50.25, 61440, 4_294_963_200), (-50, 61440, 4_294_963_200), (-45, 57345, 4_294_959_105), (-40, 49155, 4_294_950_915),
            (-20, 255, 4_293_918_975), (-6, 2047, 4_286_580_735), (0, 8191, 4_261_421_055), (3, 16383, 4_227_874_815),
            (6, 32767, 4_160_782_335), (10, 65535, 4_026_597_375), (20, 65535, 3_221_487_615),
        ]
        for (db, strip, master) in ardour {
            XCTAssertEqual(OSCFeedbackState.ledBits(db, width: 16), strip, "\(db) dB")
            XCTAssertEqual(OSCFeedbackState.ledBits(db, width: 32), master, "\(db) dB, the master")
        }
        // Where Ardour's cast is undefined (-54 dB and below), nothing lit; never a trap.
        for db in [-54.0, -57, -94, -120, -193, -.infinity, .nan, 1e300] where !(db > 0) {
            XCTAssertEqual(OSCFeedbackState.ledBits(db, width: 16), 0, "\(db) dB")
        }
        XCTAssertEqual(OSCFeedbackState.ledBits(1e300, width: 16), 65535)
    }

    private func port(_ travel: ParameterTravel, _ lower: Double, _ upper: Double, steps: Int = 0) -> ParameterDefinition {
        var d = ParameterDefinition(id: "p", name: "P", unit: .plain, minimum: lower, maximum: upper, defaultValue: lower, decimals: 2)
        d.travel = travel
        d.rangeSteps = steps
        return d
    }

    func testAPluginControlsPositionIsArdoursInterfaceValue() {
        let log = port(.logarithmic, 4.8, 21600)
        XCTAssertEqual(OSCParameterLaw.position(log, value: 1000), Foundation.log(1000 / 4.8) / Foundation.log(4500), accuracy: 1e-9)
        XCTAssertEqual(OSCParameterLaw.value(log, position: 0.5, current: 0), 4.8 * 4500.0.squareRoot(), accuracy: 1e-9)
        // Logarithmic in 5 steps: positions and values on the steps.
        let stepped = port(.logarithmic, 10, 10000, steps: 4)
        XCTAssertEqual(OSCParameterLaw.value(stepped, position: 0.4, current: 0), 100, accuracy: 1e-9)
        XCTAssertEqual(OSCParameterLaw.position(stepped, value: 150), 1.0 / 3, accuracy: 1e-9)
        // Whole steps 1…10: (v + 0.5 - lower) / (1 + upper - lower); floor(lower + p × 10).
        let integer = port(.integer, 1, 10)
        XCTAssertEqual(OSCParameterLaw.position(integer, value: 3), 0.25, accuracy: 1e-12)
        XCTAssertEqual(OSCParameterLaw.value(integer, position: 0.25, current: 1), 3)
        XCTAssertEqual(OSCParameterLaw.value(integer, position: 0.95, current: 1), 10)
        XCTAssertEqual(OSCParameterLaw.value(integer, position: 1, current: 1), 10, "clamped to upper")
        // A toggle: half-way is on.
        let toggle = port(.toggle, 0, 1)
        XCTAssertEqual(OSCParameterLaw.value(toggle, position: 0.5, current: 0), 1)
        XCTAssertEqual(OSCParameterLaw.value(toggle, position: 0.49, current: 1), 0)
        // Linear in range steps: round(p × (steps − 1)) / (steps − 1).
        let linear = port(.linear, -10, 10, steps: 5)
        XCTAssertEqual(OSCParameterLaw.value(linear, position: 0.3, current: 0), -5, accuracy: 1e-12)
        XCTAssertEqual(OSCParameterLaw.position(linear, value: 2.5), 0.625, accuracy: 1e-12)
        // An integer 0…1 is Ardour's switch: fed back 0 or 1; on from any value when off, off
        // from any below 1 when on.
        let sw = port(.integer, 0, 1)
        XCTAssertEqual(OSCParameterLaw.position(sw, value: 1), 1)
        XCTAssertEqual(OSCParameterLaw.position(sw, value: 0), 0)
        XCTAssertEqual(OSCParameterLaw.value(sw, position: 0.2, current: 0), 1)
        XCTAssertEqual(OSCParameterLaw.value(sw, position: 0.9, current: 1), 0)
        XCTAssertEqual(OSCParameterLaw.value(sw, position: 1, current: 1), 1)
    }
}
