import XCTest
final class PlaceholderTapedeckCoreTestsTests: XCTestCase { func testNothingYet() {} }
