import XCTest
final class PlaceholderTapedeckDSPTestsTests: XCTestCase { func testNothingYet() {} }
