import Foundation
import XCTest

/// `tapedeck bench engine`, `load --row` and `capture` at toy sizes: the rows print, with
/// numbers, and the capture loses nothing. (The real sizes are for release builds.)
final class BenchSmokeTests: XCTestCase {
    /// The row starting with `prefix`, failing the test when there is none.
    private func row(_ prefix: String, in output: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let found = output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init)
        XCTAssertNotNil(found, "no '\(prefix)' row in:\n\(output)", file: file, line: line)
        return found ?? ""
    }

    /// The number just before `unit` in `text` (`"p50 12.5 %"`, `"0 dropped"`), if any.
    private func number(before unit: String, after label: String, in text: String) -> Double? {
        guard let l = text.range(of: label) else { return nil }
        let rest = text[l.upperBound...]
        guard let u = rest.range(of: unit) else { return nil }
        return Double(rest[..<u.lowerBound].trimmingCharacters(in: .whitespaces))
    }

    func testEngineHeadroomPrintsLoadPercentiles() throws {
        let folder = try Tapedeck.temporaryFolder(self)
        let r = try Tapedeck.run(["bench", "engine", "--tracks", "4", "--seconds", "1", "--runs", "1", "--record", "2",
                                  "--folder", folder.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let line = row("engine headroom", in: r.stdout)
        XCTAssertTrue(line.contains("4 mono tracks × hpf:80,comp:-18,eq,gain:-3"), line)
        XCTAssertTrue(line.contains("64-frame periods"), line)
        let p50 = try XCTUnwrap(number(before: " %", after: "p50 ", in: line), line)
        let p999 = try XCTUnwrap(number(before: " %", after: "p99.9 ", in: line), line)
        XCTAssertGreaterThan(p50, 0, line)
        XCTAssertGreaterThanOrEqual(p999, p50, line)
        // 1 s at 64 frames is 750 periods: 750 stamps, 749 durations.
        XCTAssertTrue(line.contains("749 periods/run"), line)
        XCTAssertTrue(line.contains("xruns 0"), line)
        XCTAssertTrue(line.contains("p50 ≤ 50 %, p99.9 < 100 %"), line)
        XCTAssertFalse(line.contains("not run"), line)
        // The recording row: 2 tracks record on the paced clock while the 4 play, every frame kept.
        let recording = row("engine recording", in: r.stdout)
        XCTAssertTrue(recording.contains("2 tracks from 2 ch while 4 mono tracks"), recording)
        XCTAssertTrue(recording.contains("0 dropped frames"), recording)
        XCTAssertTrue(recording.contains("takes complete"), recording)
        XCTAssertFalse(recording.contains("not run"), recording)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("recording-takes").path),
                       "the bench deletes its takes")
    }

    /// `bench load --row TEXT` measures the rows whose name holds TEXT and no other; a TEXT no
    /// row holds (a typo) is refused with the rows' names, before anything runs.
    func testLoadRowPicksRowsByNameAndRefusesATypo() throws {
        let folder = try Tapedeck.temporaryFolder(self)
        let r = try Tapedeck.run(["bench", "load", "--row", "strip DSP", "--tracks", "8", "--seconds", "0.2", "--runs", "1",
                                  "--folder", folder.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").filter { $0.hasPrefix("strip DSP") || $0.hasPrefix("paced JACK") }
        XCTAssertEqual(lines.count, 2, r.stdout)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("strip DSP: 8 mono strips") && $0.contains("CPU s per s of audio") }, r.stdout)
        let typo = try Tapedeck.run(["bench", "load", "--row", "routnig", "--folder", folder.path])
        XCTAssertEqual(typo.status, 64, typo.stderr)
        XCTAssertTrue(typo.stderr.contains("no row of load holds 'routnig'") && typo.stderr.contains("'routing: 256 tracks"), typo.stderr)
        XCTAssertEqual(typo.stdout, "", "nothing measured")
    }

    /// JACK round trip: jack_iodelay on private dummy servers measures the loop through
    /// Tapedeck's monitored input as long as JACK's own loop (one period): no buffering added.
    func testJackRoundTripThroughTapedeckIsJacksOwnPeriod() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/jack_iodelay") else {
            throw XCTSkip("jackd2 (jackd, jack_iodelay) is not installed")
        }
        let folder = try Tapedeck.temporaryFolder(self)
        let r = try Tapedeck.run(["bench", "jack", "--seconds", "1.5"], environment: ["XDG_RUNTIME_DIR": folder.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        for period in [64, 256, 1024] {
            let line = row("JACK round trip, \(period)-frame period", in: r.stdout)
            // jack_iodelay reads a fraction of a frame either way on a busy machine.
            let through = number(before: " frames through Tapedeck", after: "\(period)-frame period", in: line)
            let looped = number(before: " frames jack_iodelay looped", after: "Tapedeck", in: line)
            XCTAssertEqual(through ?? 0, Double(period), accuracy: 0.5, line)
            XCTAssertEqual(looped ?? 0, Double(period), accuracy: 0.5, line)
            XCTAssertFalse(line.contains("-0.0"), "no negative zero: \(line)")
            XCTAssertTrue(line.hasSuffix("yes"), line)
        }
        // Under a busy process per core with a 60 ms stall: silence exactly where frames were
        // lost, nothing else off its frame.
        let stalls = row("JACK take under load, a 60 ms stall", in: r.stdout)
        XCTAssertTrue(stalls.contains("; 0 off their frame"), stalls)
        XCTAssertTrue(stalls.contains("0 misplaced"), stalls)
        XCTAssertTrue(stalls.hasSuffix("yes"), stalls)
    }

    func testCaptureRecordsEveryFrameAndDeletesTheTake() throws {
        let folder = try Tapedeck.temporaryFolder(self)
        let r = try Tapedeck.run(["bench", "capture", "--minutes", "0.05", "--channels", "4", "--tracks", "2", "--folder", folder.path],
                                 environment: ["TAPEDECK_ALSA_CONFIG": Tapedeck.alsaTestConfig])
        XCTAssertEqual(r.status, 0, r.stderr)
        let line = row("capture", in: r.stdout)
        XCTAssertTrue(line.contains("4 ch 96 kHz/24-bit × 3.0 s, 2 tracks playing, 128-frame periods"), line)
        XCTAssertTrue(line.contains("0 dropped frames, 0 xruns"), line)
        // 0.05 min at 96 kHz is 288000 frames, a whole number of 128-frame periods.
        XCTAssertTrue(line.contains("4 takes of 288000 frames,"), "one take per input channel, each every frame: \(line)")
        let highWater = try XCTUnwrap(number(before: " of ", after: "ring high water ", in: line), line)
        XCTAssertGreaterThanOrEqual(highWater, 0, line)
        XCTAssertNotNil(number(before: " s (", after: "3.0 s of audio in ", in: line), line)
        XCTAssertTrue(line.hasSuffix("yes"), line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("capture-take-1.wav").path))
    }

    func testCaptureRefusesWhenTheDiskIsTooSmall() throws {
        let folder = try Tapedeck.temporaryFolder(self)
        // 600 min × 256 ch × 96 kHz × 3 B is about 2.7 TB: no test machine has that free.
        let r = try Tapedeck.run(["bench", "capture", "--minutes", "600", "--channels", "256", "--folder", folder.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let line = row("capture", in: r.stdout)
        XCTAssertTrue(line.contains("not run"), line)
        XCTAssertTrue(line.contains("capture needs") && line.contains("GB free in"), line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("capture-take-1.wav").path))
    }
}
