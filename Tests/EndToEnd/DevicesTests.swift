import XCTest

final class DevicesTests: XCTestCase {
    func testDevicesListsTheConfiguredPCMsWithChannelsAndRates() throws {
        let r = try Tapedeck.run(["devices"], environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("filetap"), r.stdout)
        XCTAssertTrue(r.stdout.contains("capture:"), r.stdout)
        XCTAssertTrue(r.stdout.contains("playback:"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Hz"), r.stdout)
        XCTAssertEqual(r.stderr, "", "plugins' own complaints are kept off the terminal")
    }
}
