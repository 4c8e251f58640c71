import Foundation
import TapedeckIO
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `tapedeck bench scale` on a small generated session (4 tracks × 10 min): the session is
/// sparse on disk, the open path reports its numbers, and it never reads audio.
final class ScaleTests: XCTestCase {
    /// Generates the small session with one measured run; returns its folder.
    private func generate(in folder: URL) throws -> SessionFolder {
        let r = try Tapedeck.run(["bench", "scale", "--folder", folder.path, "--tracks", "4", "--minutes", "10", "--runs", "1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let row = r.stdout.split(separator: "\n").first { $0.hasPrefix("scale open") }
        XCTAssertNotNil(row, r.stdout)
        XCTAssertTrue(row?.contains("4 × 10 min") == true, r.stdout)
        XCTAssertTrue(row?.contains("RSS") == true && row?.contains("≤ 0.5 s, ≤ 150 MB") == true, r.stdout)
        return SessionFolder(path: folder.appendingPathComponent("scale-4x10m.tapedeck").path)
    }

    /// The `key=value` fields of the scale-open line.
    private func fields(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for word in text.split(whereSeparator: \.isWhitespace) {
            let kv = word.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { out[String(kv[0])] = String(kv[1]) }
        }
        return out
    }

    func testGeneratedSessionIsSparseAndItsPeaksAreFresh() throws {
        let session = try generate(in: try Tapedeck.temporaryFolder(self))
        let loaded = try session.load()
        XCTAssertEqual(loaded.tracks.count, 4)
        for track in loaded.tracks {
            let region = try XCTUnwrap(track.regions.first)
            XCTAssertEqual(region.lengthFrames, 10 * 60 * 48000)
            let audio = session.absolutePath(of: region.file)
            var st = stat()
            XCTAssertEqual(stat(audio, &st), 0)
            XCTAssertEqual(Int64(st.st_size), 44 + 10 * 60 * 48000 * 2)
            XCTAssertLessThan(Int64(st.st_blocks) * 512, 1 << 20, "\(audio) is not sparse")
            XCTAssertFalse(PeakFile.isStale(peakPath: session.peakPath(forAudio: region.file), sourcePath: audio))
        }
        // The WAV header is real: info reads it.
        let info = try Tapedeck.run(["info", session.absolutePath(of: loaded.tracks[0].regions[0].file)])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("28800000 frames"), info.stdout)
    }

    func testOpeningTheSessionNeverReadsAudio() throws {
        let session = try generate(in: try Tapedeck.temporaryFolder(self))
        let files = try session.load().tracks.map { session.absolutePath(of: $0.regions[0].file) }
        // Garbage where every WAV header was, with each file's size and mtime kept: the peaks
        // stay fresh, and anything that read audio (a header, or a rebuild) would fail.
        for file in files { try scribbleKeepingStamp(file) }

        let r = try Tapedeck.run(["bench", "scale-open", session.path])
        XCTAssertEqual(r.status, 0, "the open path read audio: \(r.stderr)")
        let f = fields(r.stdout)
        XCTAssertEqual(f["tracks"], "4", r.stdout)
        XCTAssertEqual(f["regions"], "4", r.stdout)
        XCTAssertEqual(f["problems"], "0", r.stdout)
        XCTAssertNotNil(f["seconds"].flatMap(Double.init), r.stdout)
        XCTAssertGreaterThan(f["maxrss_kb"].flatMap(Int.init) ?? 0, 0, r.stdout)
        XCTAssertGreaterThan(f["overview"].flatMap(Double.init) ?? 0, 0, "the overview drew nothing: \(r.stdout)")

        // Control: once one file's mtime moves its peaks are stale, the open path rebuilds
        // them from the audio, and the garbage makes that fail, naming the file.
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, files[2], &times, 0), 0)
        let stale = try Tapedeck.run(["bench", "scale-open", session.path])
        XCTAssertNotEqual(stale.status, 0)
        XCTAssertEqual(fields(stale.stdout)["problems"], "1", stale.stdout)
        XCTAssertTrue(stale.stderr.contains("t02.wav"), stale.stderr)
    }

    func testBenchScaleRefusesAMissingSessionToOpen() throws {
        let r = try Tapedeck.run(["bench", "scale-open"])
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.contains("SESSION"), r.stderr)
    }

    /// Overwrites the first bytes of `path` with text that is no audio format and restores its
    /// mtime, so its size and mtime are those the peaks were stamped with.
    private func scribbleKeepingStamp(_ path: String) throws {
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        let fd = open(path, O_WRONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let junk = [UInt8](repeating: UInt8(ascii: "x"), count: 64)
        XCTAssertEqual(junk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, 64)
        close(fd)
        var times = [st.st_atim, st.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
    }
}
