import Foundation
import XCTest
import TapedeckIO

/// The screen's export dialog offers what `export` offers (issue 28): the file, then
/// export's own options (format, bits, range, loudness), read by export's own parser; a
/// refusal keeps the dialog open with export's reason.
final class ScreenExportTests: XCTestCase {
    func testTheExportDialogTakesExportsOptions() throws {
        let (folder, session) = try ScreenTmux.demoFolder(self)
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline"], width: 100, height: 30)
        screen.waitFor("Vocal")
        screen.send("e")
        screen.waitFor("--normalize -16LUFS")
        // A depth export refuses: said in the dialog, which stays open.
        screen.send("C-u")
        screen.send("-l", "exports/short.flac --bits 12")
        screen.send("Enter")
        screen.waitFor("'12'")
        screen.send("C-u")
        screen.send("-l", "exports/short.flac --bits 16 --range 0:01-0:03 --normalize -20LUFS")
        screen.send("Enter")
        screen.waitFor("done", timeout: 60)
        let text = screen.capture()
        XCTAssertTrue(text.contains("-20.0 LUFS"), text)
        let out = session + "/exports/short.flac"
        let reader = try AudioFileReader(path: out)
        XCTAssertEqual(reader.frameCount, 96_000, "the range: two seconds")
        XCTAssertEqual(reader.losslessEncoding, .int16)
        let (reference, _) = try LoudnessExportTests.measure(out)
        XCTAssertEqual(reference, -20, accuracy: 0.2, "normalised as export does")
        // The dialog offers the last export again.
        screen.send("Escape")
        screen.send("e")
        screen.waitFor("exports/short.flac --bits 16")
    }

    /// Issue 43, item 7: paths typed in the dialog (the file, --chapters) are read from the
    /// session folder, whatever folder the screen was started in, and the dialog says so;
    /// --tail is offered and taken.
    func testTheDialogReadsItsPathsFromTheSessionFolderAndSaysSo() throws {
        let (folder, session) = try ScreenTmux.demoFolder(self)
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline"], width: 100, height: 30)
        screen.waitFor("Vocal")
        screen.send("e")
        screen.waitFor("paths from the session folder")
        screen.waitFor("--tail SECONDS|auto")
        screen.send("C-u")
        screen.send("-l", "exports/ep.mp3 --chapters exports/ep.txt --tail 1")
        screen.send("Enter")
        screen.waitFor("done", timeout: 60)
        XCTAssertTrue(FileManager.default.fileExists(atPath: session + "/exports/ep.mp3"), screen.capture())
        let chapters = try String(contentsOfFile: session + "/exports/ep.txt", encoding: .utf8)
        XCTAssertFalse(chapters.isEmpty, "the demo's markers, beside the export in the session folder")
        let plain = try AudioFileReader(path: session + "/exports/ep.mp3")
        XCTAssertGreaterThan(plain.frameCount, 0)
    }
}
