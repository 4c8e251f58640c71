import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Stacked takes through `tapedeck export` and `info`: only the active take is heard.
final class TakeLaneExportTests: XCTestCase {
    func testOnlyTheActiveTakeOfAGroupIsHeardInTheExport() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
        let folder = SessionFolder(path: path("s.tapedeck"))
        // Three passes over the same range, told apart by frequency: 300, 700, 1500 Hz.
        let hertz = [300.0, 700.0, 1500.0]
        for (i, f) in hertz.enumerated() {
            try Signals.write([Signals.sine(hertz: f, amplitude: 0.5, frames: 48000)], to: folder.audioFolder + "/pass\(i + 1).wav")
        }
        var session = try folder.load()
        session.tracks = [Track(name: "Gtr")]
        for i in 1...3 {
            try session.addTake(track: 0, region: Region(file: "audio/pass\(i).wav", timelineStartFrame: 4800, lengthFrames: 48000), group: 1)
        }
        for (choice, expected) in [(2, 700.0), (1, 300.0), (3, 1500.0)] {
            try session.chooseTake(track: 0, group: 1, take: choice)
            try folder.save(session)
            let out = path("mix-\(choice).wav")
            let r = try Tapedeck.run(["export", folder.path, "-o", out, "--bits", "32f"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let left = try Signals.read(out).channels[0]
            XCTAssertEqual(left.count, 4800 + 48000)
            XCTAssertEqual(Signals.rms(left, 0..<4800), 0, accuracy: 1e-9, "nothing before the takes")
            // One take alone: a 0.5 sine panned centre (-3 dB) has RMS 0.5 × 0.7071 / √2 = 0.25.
            XCTAssertEqual(Signals.rms(left, 10_000..<50_000), 0.25, accuracy: 0.005, "take \(choice): exactly one take sums in")
            let f = Frequency.estimate(left, sampleRate: 48000, range: 10_000..<50_000)
            XCTAssertEqual(f, expected, accuracy: 2, "take \(choice) is the one heard")
        }
        let info = try Tapedeck.run(["info", folder.path])
        XCTAssertTrue(info.stdout.contains("take 1.3 (active)"), info.stdout)
        XCTAssertTrue(info.stdout.contains("take 1.1") && !info.stdout.contains("take 1.1 (active)"), info.stdout)
    }
}
