import XCTest
final class PlaceholderUITests: XCTestCase { func testNothingYet() {} }
