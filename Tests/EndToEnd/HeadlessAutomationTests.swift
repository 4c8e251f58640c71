import Foundation
import XCTest

/// Automation written without the screen: a MIDI-learned controller turned (over JACK MIDI,
/// from a client of the test's own) while `tapedeck play` rolls over a lane in touch mode;
/// what it wrote is in the session when `play` ends, and the lane plays back the sweep.
final class HeadlessAutomationTests: XCTestCase {
    /// The sweep: controller 7 from 40 to 89, a step every 20 ms.
    private let sweep = Array(40...89)

    func testAControllerTurnedWhilePlayWasRollingIsWrittenIntoItsTouchLane() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        let jack = try JackServer.start(self, folder: dir.path)
        // Six seconds of a steady 0.5 on track dc (the file's name), its fader lane in touch at −12 dB.
        let session = path("s.tapedeck")
        try Signals.write([[Float](repeating: 0.5, count: 6 * 48000)], to: path("dc.wav"))
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        let imported = try Tapedeck.run(["import", session, path("dc.wav")])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        for args in [["automation", session, "1", "gain", "add", "0", "-12"], ["automation", session, "1", "gain", "mode", "touch"],
                     ["learn", session, "--cc", "7", "--fader", "1"]] {
            let r = try Tapedeck.run(args)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
        }
        // The controller: turned a second after it is connected, then left alone.
        let messages = sweep.flatMap { ["176", "7", "\($0)"] }
        try JackMIDISender.start(self, client: "tdcc", start: "1000", gapMilliseconds: 20, messages: messages,
                                 environment: jack.environment, folder: dir.path)
        let play = try Tapedeck.run(["play", session, "--device", "jack", "--connect", "none", "--midi-in", "jack:tdcc:midi_out"],
                                    environment: jack.environment, timeout: 60)
        XCTAssertEqual(play.status, 0, play.stderr)
        XCTAssertTrue(((try? String(contentsOfFile: path("send.txt"), encoding: .utf8)) ?? "").contains("sent"), "the sweep went out while it played")
        XCTAssertTrue(play.stderr.contains("automation written: dc gain"), "the lane written is said: \(play.stderr)")

        // The lane: −12 dB, the sweep's values rising through the stretch it was turned in, −12 dB again.
        let csv = try Tapedeck.run(["automation", session, "1", "gain", "csv"])
        XCTAssertEqual(csv.status, 0, csv.stderr)
        let points = csv.stdout.split(separator: "\n").compactMap { line -> (seconds: Double, decibels: Double)? in
            let f = line.split(separator: ",")
            guard f.count >= 2, let t = Double(f[0]), let v = Double(f[1]) else { return nil }
            return (t, v)
        }
        let written = points.filter { $0.decibels > -11.9 || $0.decibels < -12.1 }
        XCTAssertGreaterThanOrEqual(written.count, sweep.count / 2, "the sweep's moves are in the lane: \(csv.stdout)")
        let want = sweep.map { Self.faderDecibels($0) }
        let rising = zip(written, written.dropFirst()).allSatisfy { $1.decibels >= $0.decibels - 1e-9 }
        XCTAssertTrue(rising, "the lane rises as the sweep did: \(written)")
        if let top = written.map(\.decibels).max(), let bottom = written.map(\.decibels).min() {
            XCTAssertEqual(top, want.last!, accuracy: 0.01, "it reaches the sweep's last value")
            XCTAssertGreaterThanOrEqual(bottom, min(want.first!, -12) - 0.01)
        }
        // Turned about a second into the play (its start waits for the connection): within 0.3…4 s.
        if let first = written.first, let last = written.last {
            XCTAssertGreaterThan(first.seconds, 0.3, "\(written)")
            XCTAssertLessThan(last.seconds, 4, "let go half a second after the last move: \(written)")
        }
        XCTAssertEqual(points.last?.decibels ?? 0, -12, accuracy: 0.01, "touch: the lane returns when let go")
    }

    /// What controller value `v` sets a fader to (as `tapedeck learn --help` says: 0 is −∞,
    /// 100 is 0 dB, 127 is +4.2 dB): 40 dB a decade of the value.
    private static func faderDecibels(_ v: Int) -> Double { 40 * log10(Double(v) / 100) }
}
