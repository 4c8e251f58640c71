import XCTest
final class PlaceholderTapedeckIOTestsTests: XCTestCase { func testNothingYet() {} }
