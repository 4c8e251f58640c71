import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Two writers on one session at once: nothing lost, or a clear refusal (issue 13).
final class ConcurrentWriterTests: XCTestCase {
    private var trials: Int { Int(ProcessInfo.processInfo.environment["TAPEDECK_CONCURRENCY_TRIALS"] ?? "") ?? 20 }

    /// Starts both commands together; returns each one's exit status and stderr.
    private func together(_ a: [String], _ b: [String], dir: String) throws -> [(status: Int32, stderr: String)] {
        let children = try [a, b].enumerated().map { i, args in
            try SpawnedChild([Tapedeck.binary] + args, environment: RecordSupport.environment, stderrPath: "\(dir)/err\(i).txt")
        }
        return children.enumerated().map { i, child in
            let status = child.wait(timeoutSeconds: 60) ?? -1
            let err = (try? String(contentsOfFile: "\(dir)/err\(i).txt", encoding: .utf8)) ?? ""
            return ((status >> 8) & 0xff, err)
        }
    }

    private func assertDoneOrRefused(_ r: (status: Int32, stderr: String), file: StaticString = #filePath, line: UInt = #line) -> Bool {
        if r.status == 0 { return true }
        XCTAssertEqual(r.status, 65, r.stderr, file: file, line: line)
        XCTAssertTrue(r.stderr.contains("in use by pid"), r.stderr, file: file, line: line)
        return false
    }

    func testTwoRecordersNeverShareATakeAndKeepEveryTake() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        RecordSupport.writeRaw(RecordSupport.signal(frames: 48000, channels: 1, bits: 16), bits: 16, to: dir + "/in.raw")
        let folder = try Safety.session(in: dir)
        let record = ["record", folder.path, "--track", "1", "--device", "filetap:IN=\(dir)/in.raw", "--device-format", "s16",
                      "--bits", "16", "--duration", "0.2"]
        var expected = 1
        for _ in 0..<trials {
            expected += try together(record, record, dir: dir).filter { assertDoneOrRefused($0) }.count
            let regions = try folder.load().tracks[0].regions
            XCTAssertEqual(regions.count, expected, "every finished take is on the track")
            XCTAssertEqual(Set(regions.map(\.file)).count, regions.count, "no file is used twice")
            for r in regions where r.file != "audio/tone.wav" {
                XCTAssertEqual(try AudioFileReader(path: folder.absolutePath(of: r.file)).frameCount, 9600)
            }
        }
    }

    func testTwoImportsBothLand() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        var expected = 1
        for trial in 0..<trials {
            let results = try together(["import", folder.path, dir + "/tone.wav"], ["import", folder.path, dir + "/tone.wav"], dir: dir)
            expected += results.filter { assertDoneOrRefused($0) }.count
            let session = try folder.load()
            XCTAssertEqual(session.tracks.count, expected, "trial \(trial): no import lost")
            XCTAssertEqual(Set(session.tracks.flatMap(\.regions).map(\.file)).count, expected)
        }
    }

    func testARecordAndAChainEditBothHold() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        RecordSupport.writeRaw(RecordSupport.signal(frames: 48000, channels: 1, bits: 16), bits: 16, to: dir + "/in.raw")
        let folder = try Safety.session(in: dir)
        var takes = 0
        for trial in 0..<trials {
            let chain = "gain:gain=-\(trial + 1)"
            let results = try together(["record", folder.path, "--track", "1", "--device", "filetap:IN=\(dir)/in.raw", "--device-format", "s16",
                                        "--bits", "16", "--duration", "0.2"], ["chain", folder.path, "1", chain], dir: dir)
            if assertDoneOrRefused(results[0]) { takes += 1 }
            let chained = assertDoneOrRefused(results[1])
            let session = try folder.load()
            XCTAssertEqual(session.tracks[0].regions.count, 1 + takes, "trial \(trial): the take is kept")
            if chained { XCTAssertEqual(session.tracks[0].playbackChain, chain, "trial \(trial): the edit is kept") }
        }
    }
}
