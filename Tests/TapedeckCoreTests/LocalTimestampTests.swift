import Foundation
import XCTest
@testable import TapedeckCore

/// Takes and exports stamp their start with ``LocalTimestamp``: the fields DateFormatter gave
/// (en_US_POSIX, the local zone), for the same instant.
final class LocalTimestampTests: XCTestCase {
    func testTheFieldsAreDateFormattersInTheLocalZone() {
        let instants = [Date(timeIntervalSince1970: 1_796_672_645), Date(timeIntervalSince1970: 0),
                        Date(timeIntervalSince1970: 951_782_400.75), Date()]
        for (format, pattern) in [("%Y-%m-%d %H:%M:%S", "yyyy-MM-dd HH:mm:ss"), ("%Y%m%d-%H%M%S", "yyyyMMdd-HHmmss")] {
            let f = DateFormatter()
            f.dateFormat = pattern
            f.locale = Locale(identifier: "en_US_POSIX")
            for date in instants {
                XCTAssertEqual(LocalTimestamp.string(format, at: date), f.string(from: date), "\(date) as \(pattern)")
            }
        }
    }

    func testAnInstantNoCalendarHoldsIsNoTime() {
        XCTAssertEqual(LocalTimestamp.string("%Y", at: Date(timeIntervalSince1970: .infinity)), "")
        XCTAssertEqual(LocalTimestamp.string("%Y", at: Date(timeIntervalSince1970: 1e300)), "")
    }
}
