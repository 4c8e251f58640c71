import Foundation
import XCTest

/// The fuzzers' fixed corpus, run by every `make test`: each reproduction of issue 13 (times
/// that overflowed, sessions that trapped or hung, hostile names, damaged audio, CRLF and
/// invalid UTF-8 settings) plus a fixed-seed window of generated cases per parser, each run in
/// a watched worker. Any crash, hang (10 s) or unclear message fails the test with the
/// fuzzer's report. `make fuzz` runs 10^5 cases per parser.
final class FuzzCorpusTests: XCTestCase {
    private var fuzzer: String { URL(fileURLWithPath: Tapedeck.binary).deletingLastPathComponent().appendingPathComponent("tapedeck-fuzz").path }

    private func runFuzzer(_ args: [String]) throws {
        let findings = try Tapedeck.temporaryFolder(self).path
        let r = try Tapedeck.run(args + ["--findings", findings], executable: fuzzer, timeout: 600)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        // One line per fuzz target (time, chain, session, keys, theme, audio, midi, cli, socket, paths).
        XCTAssertTrue(r.stdout.contains("10 passed, 0 failed"), r.stdout)
    }

    func testTheReproductionsOfEveryKnownBreakageStayFixed() throws {
        try runFuzzer(["corpus", Tapedeck.packageRoot.appendingPathComponent("Tests/Fixtures/fuzz-corpus").path])
    }

    func testAFixedSeedWindowOfGeneratedCasesFindsNothing() throws {
        try runFuzzer(["all", "--seed", "13", "--cases", "1000"])
    }
}
