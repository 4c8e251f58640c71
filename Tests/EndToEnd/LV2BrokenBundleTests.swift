import Foundation
import XCTest

/// A broken bundle among the installed LV2 plugins: lilv's own complaints never reach the
/// terminal; the plugin listing says so once, in one line, and other LV2 commands say nothing.
final class LV2BrokenBundleTests: XCTestCase {
    func testABrokenBundleIsReportedOnceInTheListingAndNowhereElse() throws {
        guard FileManager.default.fileExists(atPath: "/usr/lib/lv2") else { throw XCTSkip("no LV2 plugins installed") }
        let dir = try Tapedeck.temporaryFolder(self)
        let bundle = dir.path + "/lv2/broken.lv2"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n<urn:x> a lv2:Plugin ; garbage garbage .\n"
            .write(toFile: bundle + "/manifest.ttl", atomically: true, encoding: .utf8)
        let env = ["LV2_PATH": dir.path + "/lv2:/usr/lib/lv2"]
        let list = try Tapedeck.run(["nodes", "--lv2"], environment: env)
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual(list.stderr, "", "lilv prints nothing of its own")
        let said = list.stdout.split(separator: "\n").filter { $0.contains("could not be read") }
        XCTAssertEqual(said.count, 1, list.stdout)
        XCTAssertTrue(said.first?.contains("broken.lv2") == true, list.stdout)
        let amp = try Tapedeck.run(["nodes", "lv2:amp"], environment: env)
        XCTAssertEqual(amp.status, 0, amp.stderr)
        XCTAssertEqual(amp.stderr, "", amp.stderr)
        XCTAssertFalse(amp.stdout.contains("could not be read"), amp.stdout)
    }
}
