import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Nothing outside the session folder is read or written through it, nothing a region uses
/// is replaced, and names reach the terminal escaped (issue 13).
final class ContainedPathTests: XCTestCase {
    func testExportNeverWritesIntoAudioOrOverARecordingNorThroughAPlantedLink() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let take = folder.audioFolder + "/tone.wav"
        let before = try Data(contentsOf: URL(fileURLWithPath: take))
        Safety.assertRefused(try Tapedeck.run(["export", folder.path, "-o", take]), status: 64, mentions: ["audio/"])
        Safety.assertRefused(try Tapedeck.run(["export", folder.path, "-o", folder.audioFolder + "/new.wav"]), status: 64, mentions: ["audio/"])
        // A link elsewhere that leads to a recording is the recording.
        symlink(take, dir + "/alias.wav")
        Safety.assertRefused(try Tapedeck.run(["export", folder.path, "-o", dir + "/alias.wav"]), status: 64, mentions: ["track 1"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: take)), before, "the recording is untouched")
        // A link planted where the export writes its partial file is removed, not written through.
        let victim = dir + "/victim.txt"
        try "precious".write(toFile: victim, atomically: true, encoding: .utf8)
        symlink(victim, dir + "/mix.wav.partial")
        let r = try Tapedeck.run(["export", folder.path, "-o", dir + "/mix.wav"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious")
        XCTAssertEqual(try Safety.samples(dir + "/mix.wav")[0].count, 48000)
    }

    func testRecordNeverWritesThroughALinkPlantedInAudio() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let input = RecordSupport.signal(frames: 48000, channels: 1, bits: 16)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        // Every name the next take could get in the next few seconds is a dangling link.
        let stamp = DateFormatter()
        stamp.dateFormat = "yyyyMMdd-HHmmss"
        stamp.locale = Locale(identifier: "en_US_POSIX")
        for second in 0..<4 {
            let name = "take-\(stamp.string(from: Date().addingTimeInterval(Double(second)))).wav"
            symlink(dir + "/outside-\(second).wav", folder.audioFolder + "/" + name)
        }
        let r = try Tapedeck.run(["record", folder.path, "--track", "1", "--device", "filetap:IN=\(dir)/in.raw", "--device-format", "s16",
                                  "--bits", "16", "--duration", "0.25"], environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let outside = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("outside-") }
        XCTAssertEqual(outside, [], "nothing was created outside the session")
        let regions = try folder.load().tracks[0].regions
        XCTAssertEqual(regions.count, 2)
        let recorded = try XCTUnwrap(regions.first { $0.file != "audio/tone.wav" })
        var st = stat()
        XCTAssertEqual(lstat(folder.absolutePath(of: recorded.file), &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFREG, "the take is a file of its own")
        XCTAssertEqual(try RecordSupport.readInts(folder.absolutePath(of: recorded.file), bits: 16).frames, 12000)
    }

    func testNamesAndEchoedValuesReachTheTerminalEscaped() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = SessionFolder(path: dir + "/s")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        let evil = dir + "/a\u{1B}[2J\u{202E}b\nc.wav"
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 4800)], to: evil, encoding: .int16)
        let imported = try Tapedeck.run(["import", folder.path, evil])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let info = try Tapedeck.run(["info", folder.path])
        for output in [imported.stdout, info.stdout, imported.stderr] {
            XCTAssertFalse(output.unicodeScalars.contains { $0 != "\n" && SafeText.needsEscape($0) }, output)
        }
        XCTAssertTrue(info.stdout.contains("a\\u001B[2J\\u202Eb\\nc"), info.stdout)
        XCTAssertEqual(imported.stdout.split(separator: "\n").count, 1, "the newline in the name forges no line")
        let chain = try Tapedeck.run(["chain", folder.path, "1", "hpf:80,\u{1B}]0;pwned\u{7}rev"])
        XCTAssertEqual(chain.status, 64)
        XCTAssertFalse(chain.stderr.unicodeScalars.contains { $0 != "\n" && SafeText.needsEscape($0) }, chain.stderr)
        let lines = chain.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The caret still points at the bad node, counted in escaped characters.
        let text = try XCTUnwrap(lines.dropFirst().first), carets = try XCTUnwrap(lines.dropFirst(2).first)
        let column = try XCTUnwrap(carets.firstIndex(of: "^")).utf16Offset(in: carets)
        XCTAssertTrue(text.dropFirst(column).hasPrefix("\\u001B]0;pwned\\u0007rev"), "\(text)\n\(carets)")
        Safety.assertRefused(try Tapedeck.run(["frob\u{1B}[2J"]), status: 64, mentions: ["frob\\u001B[2J"])
    }
}
