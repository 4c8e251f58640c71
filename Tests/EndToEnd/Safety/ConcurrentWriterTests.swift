import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckRemote

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

    /// A socket file left by a process that is gone, at the pid of a holder that takes no
    /// edits (pids are reused: a machine that ran many Tapedecks has such files): the command
    /// waits for the lock as with no screen, and lands. It used to be refused with "not
    /// listening", which is how two imports or a record and a chain edit failed together.
    func testAStaleSocketAtTheHoldersPidDoesNotTurnAnEditAway() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let run = dir + "/run"
        try FileManager.default.createDirectory(atPath: run + "/tapedeck", withIntermediateDirectories: true)
        chmod(run + "/tapedeck", 0o700)
        // This process holds the lock (and takes no edits); a dead socket bears its pid.
        var lock: SessionLock? = try SessionLock.acquire(folder)
        let stale = run + "/tapedeck/\(getpid()).sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertEqual(UnixSocketAddress.with(stale) { bind(fd, $0, $1) }, 0)
        close(fd)
        XCTAssertTrue(FileManager.default.fileExists(atPath: stale), "the bound file stays, and nobody listens on it")

        let edit = try SpawnedChild([Tapedeck.binary, "track", folder.path, "1", "--gain", "-3"],
                                    environment: ["XDG_RUNTIME_DIR": run], stderrPath: dir + "/err.txt")
        usleep(500_000)
        XCTAssertNotNil(lock)
        lock = nil
        let status = ((edit.wait(timeoutSeconds: 30) ?? -1) >> 8) & 0xff
        let err = (try? String(contentsOfFile: dir + "/err.txt", encoding: .utf8)) ?? ""
        XCTAssertEqual(status, 0, err)
        XCTAssertEqual(try folder.load().tracks[0].gainDecibels, -3, accuracy: 1e-9, "the edit waited for the lock and landed")
    }
}
