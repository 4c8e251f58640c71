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

    func testAPluginsNameWithTerminalEscapesIsPrintedEscaped() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let bundle = dir.path + "/lv2/evil.lv2"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        <urn:evil:plug> a lv2:Plugin ; lv2:binary <evil.so> ; doap:name "Evil\\u001B]0;pwned\\u0007\\u001B[2J" .

        """.write(toFile: bundle + "/manifest.ttl", atomically: true, encoding: .utf8)
        let env = ["LV2_PATH": dir.path + "/lv2"]
        for args in [["nodes", "--lv2"], ["nodes", "lv2:urn:evil:plug"]] {
            let r = try Tapedeck.run(args, environment: env)
            XCTAssertTrue(r.stdout.contains("Evil"), r.stdout)
            XCTAssertFalse((r.stdout + r.stderr).unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" }, "no raw escape from \(args)")
        }
    }
}
