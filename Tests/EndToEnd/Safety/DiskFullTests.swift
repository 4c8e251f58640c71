import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// A full disk, made real with a small tmpfs: every writer stops cleanly, its data valid and
/// placed, with one line naming what and why (issue 13). Needs root (to mount); skipped with
/// the reason elsewhere.
final class DiskFullTests: XCTestCase {
    private var mountPoint: String!

    override func setUpWithError() throws {
        mountPoint = try SmallDisk.mount(self, megabytes: 6)
    }

    private func record(_ folder: SessionFolder, format: String, dir: String) throws -> Tapedeck.Result {
        let input = RecordSupport.signal(frames: 48000 * 120, channels: 1, bits: 16, seed: 9)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        return try Tapedeck.run(["record", folder.path, "--device", "filetap:IN=\(dir)/in.raw", "--device-format", "s16",
                                 "--bits", "16", "--format", format, "--duration", "100"], environment: RecordSupport.environment)
    }

    func testATakeOnAFullDiskIsFinishedPlacedAndNamedInOneLine() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        for format in ["wav", "flac"] {
            let folder = SessionFolder(path: mountPoint + "/\(format)")
            XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
            let r = try record(folder, format: format, dir: dir)
            XCTAssertEqual(r.status, 74, r.stderr)  // EX_IOERR: the disk refused a write
            let last = try XCTUnwrap(r.stderr.split(separator: "\n").last.map(String.init))
            XCTAssertTrue(last.contains("disk is full") && last.contains("kept") && last.contains("take-") && last.contains("on track 1"), last)
            let region = try XCTUnwrap(try folder.load().tracks.first?.regions.first, "the take is on its track")
            let path = folder.absolutePath(of: region.file)
            let got = try RecordSupport.readInts(path, bits: 16)
            XCTAssertGreaterThan(got.frames, 48000, "seconds of audio were kept")
            XCTAssertEqual(Int64(got.frames), region.lengthFrames, "the region is exactly what the file holds")
            XCTAssertEqual(try AudioFileReader(path: path).frameCount, region.lengthFrames, "the header is right")
            if format == "wav" {
                // The header accounts for every byte of audio: nothing after it is unaccounted.
                let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
                XCTAssertTrue((44...8192).contains(size - got.frames * 2), "header and data add up: \(size) bytes for \(got.frames) frames")
            }
            let input = RecordSupport.signal(frames: got.frames, channels: 1, bits: 16, seed: 9)
            XCTAssertTrue(got.values == input, "\(format): every kept frame is the input")
            XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).contains { $0.hasSuffix(".recording") })
            try FileManager.default.removeItem(atPath: folder.path)
        }
    }

    func testExportImportAndSaveOnAFullDiskFailCleanlyAndChangeNothing() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let source = try Safety.session(in: dir)
        let folder = SessionFolder(path: mountPoint + "/s")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", folder.path, dir + "/tone.wav"]).status, 0)
        let before = Safety.sessionBytes(folder)
        // Fill what is left.
        _ = try Tapedeck.run(["-c", "dd if=/dev/zero of='\(mountPoint!)/fill' bs=64k 2>/dev/null; true"], executable: "/bin/sh")
        try Signals.write([Signals.sine(hertz: 220, amplitude: 0.5, frames: 48000 * 10)], to: dir + "/long.wav", encoding: .int24)
        Safety.assertRefused(try Tapedeck.run(["import", folder.path, dir + "/long.wav"]), status: 65, mentions: ["long.wav", "disk is full", "nothing was imported"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder), ["tone.wav"], "no half copy")
        let export = try Tapedeck.run(["export", source.path, "-o", mountPoint + "/mix.flac"])
        Safety.assertRefused(export, status: 65, mentions: ["mix.flac", "disk is full"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: mountPoint + "/mix.flac"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: mountPoint + "/mix.flac.partial"))
        Safety.assertRefused(try Tapedeck.run(["export", source.path, "-o", mountPoint + "/mix.wav"]), status: 65, mentions: ["disk has"])
        Safety.assertRefused(try Tapedeck.run(["chain", folder.path, "1", String(repeating: "gain:-1,", count: 2000) + "gain:-1"]),
                             status: 65, mentions: ["session.json", "disk is full", "unchanged"])
        XCTAssertEqual(Safety.sessionBytes(folder), before, "the session on disk is whole and unchanged")
        XCTAssertEqual(try Tapedeck.run(["info", folder.path]).status, 0)
    }
}
