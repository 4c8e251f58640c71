import XCTest
final class PlaceholderTapedeckEngineTestsTests: XCTestCase { func testNothingYet() {} }
