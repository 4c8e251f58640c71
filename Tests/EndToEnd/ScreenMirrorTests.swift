import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// The screen records with `split =` and `mirror =` from its config (issue 29): every take
/// from the screen is split and mirrored as `record --split --mirror` does, and the message
/// line says the take once, with its pieces.
final class ScreenMirrorTests: XCTestCase {
    func testTakesFromTheScreenAreSplitAndMirroredAsTheConfigSays() throws {
        let (folder, session) = try ScreenTmux.demoFolder(self)
        let mirror = folder + "/mirror"
        try FileManager.default.createDirectory(atPath: mirror, withIntermediateDirectories: true)
        try "theme = default\nsplit = 2s   # pieces\nmirror = \(mirror)\n".write(toFile: folder + "/config/tapedeck/config", atomically: true, encoding: .utf8)
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline"],
                                    environment: ["TAPEDECK_FAKE_RECORD": "1"], width: 100, height: 30)
        screen.waitFor("STOPPED")
        screen.send("r")
        screen.waitFor("● REC")
        // Past two pieces' boundary on the screen's clock.
        screen.waitFor("the clock past 4.5 s", timeout: 15) { text in
            guard let r = text.range(of: #"0:00:0(\d)\.\d{3}"#, options: .regularExpression) else { return false }
            return Int(text[r].dropFirst(6).prefix(1)) ?? 0 >= 5
        }
        screen.send("r")
        let done = screen.waitFor("the take's message", timeout: 10) { $0.contains("recorded") && $0.contains("in 3 files") }
        XCTAssertTrue(done.contains("(u removes it)"), done)
        let audio = SessionFolder(path: session).audioFolder
        let pieces = try FileManager.default.contentsOfDirectory(atPath: audio).filter { $0.hasPrefix("take-") && $0.hasSuffix(".wav") }.sorted()
        XCTAssertEqual(pieces.count, 3, "\(pieces)")
        XCTAssertTrue(pieces.first?.hasSuffix("-001.wav") ?? false, "\(pieces)")
        for name in pieces {
            let main = try Data(contentsOf: URL(fileURLWithPath: audio + "/" + name))
            let copy = try Data(contentsOf: URL(fileURLWithPath: mirror + "/" + name))
            XCTAssertEqual(main, copy, "\(name): mirrored byte for byte")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mirror).filter { $0.hasSuffix(".recording") }, [])
    }

    /// `timestamp = clock` in the config: a take from the screen carries the time of day of
    /// its first frame, as `record --timestamp clock` writes it.
    func testTheScreensTakesAreStampedWithTheTimeOfDayWhenTheConfigSaysSo() throws {
        let (folder, session) = try ScreenTmux.demoFolder(self)
        try "timestamp = clock\n".write(toFile: folder + "/config/tapedeck/config", atomically: true, encoding: .utf8)
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline"],
                                    environment: ["TAPEDECK_FAKE_RECORD": "1"], width: 100, height: 30)
        screen.waitFor("STOPPED")
        let before = Date()
        screen.send("r")
        screen.waitFor("● REC")
        Thread.sleep(forTimeInterval: 1)
        screen.send("r")
        screen.waitFor("the take's message", timeout: 10) { $0.contains("recorded") }
        let after = Date()
        let audio = SessionFolder(path: session).audioFolder
        let take = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: audio).first { $0.hasPrefix("take-") && $0.hasSuffix(".wav") })
        let reference = try XCTUnwrap(try RIFFWalk(path: audio + "/" + take).bextTimeReference)
        let stamped = Double(reference) / 48000
        func sinceMidnight(_ d: Date) -> Double { d.timeIntervalSince(Calendar.current.startOfDay(for: d)) }
        XCTAssertGreaterThanOrEqual(stamped, sinceMidnight(before) - 0.05, "the first frame came after r was pressed")
        XCTAssertLessThanOrEqual(stamped, sinceMidnight(after), "and before the take ended")
    }

    /// A bad `split =`, `mirror =` or `timestamp =` line stops the screen before it opens,
    /// in one line naming the config file (not an option nobody typed).
    func testABadRecordingLineInTheConfigIsRefusedNamingTheConfig() throws {
        let folder = try Tapedeck.temporaryFolder(self).path
        try FileManager.default.createDirectory(atPath: folder + "/config/tapedeck", withIntermediateDirectories: true)
        for (line, words) in [("split = 7", "give a length"), ("mirror = \(folder)/gone", "No such file"), ("timestamp = noon", "clock or timeline")] {
            try (line + "\n").write(toFile: folder + "/config/tapedeck/config", atomically: true, encoding: .utf8)
            let r = try Tapedeck.run([folder + "/x.tapedeck", "--device", "offline"], environment: ["XDG_CONFIG_HOME": folder + "/config"])
            XCTAssertEqual(r.status, 64, "\(line): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(folder + "/config/tapedeck/config") && r.stderr.contains(words), "\(line): \(r.stderr)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        }
    }

    func testAMirrorFolderThatIsNotThereIsRefusedInOneLine() throws {
        let folder = try Tapedeck.temporaryFolder(self).path
        let r = try Tapedeck.run([folder + "/x.tapedeck", "--device", "offline", "--mirror", folder + "/nowhere"])
        XCTAssertEqual(r.status, 64, "a usage error: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("--mirror") && r.stderr.contains("No such file or directory"), r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
    }
}
