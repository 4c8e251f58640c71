import XCTest
@testable import TapedeckDSP

/// The table automation reads the constant-power law from agrees with the law itself to a
/// Float's resolution, across the whole range and past its ends.
final class PanTableTests: XCTestCase {
    func testTheTableIsTheConstantPowerLawWithinAFloatsResolution() {
        PanTable.prepare()
        var worst = 0.0
        for k in 0...200_000 {
            let pan = -1.2 + 2.4 * Double(k) / 200_000
            let exact = PanLaw.mono(pan: pan), fast = PanTable.mono(pan: pan)
            worst = max(worst, abs(Double(fast.left) - exact.left), abs(Double(fast.right) - exact.right))
        }
        XCTAssertLessThan(worst, 1.5e-7, "worst \(worst)")
        XCTAssertEqual(PanTable.mono(pan: -1).left, 1)
        XCTAssertEqual(PanTable.mono(pan: -1).right, 0)
        XCTAssertEqual(PanTable.mono(pan: 1).left, 0)
        XCTAssertEqual(PanTable.mono(pan: 1).right, 1)
    }
}
