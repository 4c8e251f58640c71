import Foundation
import XCTest
import TapedeckCore
@testable import TapedeckIO

/// Automation in `session.json`: lanes come back point for point, compactly, and a session
/// with a million points opens in under half a second.
final class AutomationSessionTests: XCTestCase {
    func testLanesRoundTripPointForPoint() throws {
        let dir = NSTemporaryDirectory() + "td-auto-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        var s = Session()
        var t = Track(name: "A")
        t.automation = [
            AutomationLane(parameter: .gain, mode: .touch, points: [AutomationPoint(frame: 0, value: Fader.silentDecibels),
                                                                     AutomationPoint(frame: 48_000, value: -6.25, curve: .exponential)]),
            AutomationLane(parameter: .node("lpf", "cutoff"), points: [AutomationPoint(frame: 12, value: 1234.5678)]),
            AutomationLane(parameter: .send("Verb"), mode: .off),
        ]
        s.tracks = [t]
        try folder.create(s)
        let back = try folder.load()
        XCTAssertEqual(back.tracks[0].automation, t.automation)
        let text = try String(contentsOfFile: dir + "/s.tapedeck/session.json", encoding: .utf8)
        XCTAssertTrue(text.contains("0 -200;48000 -6.25 e"), "one string of points")
    }

    func testADamagedLaneIsRefusedNamingThePoint() throws {
        let json = #"{"parameter": "gain", "mode": "play", "points": "0 -6;10 x"}"#
        XCTAssertThrowsError(try JSONDecoder().decode(AutomationLane.self, from: Data(json.utf8))) { error in
            XCTAssertTrue("\(error)".contains("point 2"), "\(error)")
        }
        let backwards = #"{"parameter": "gain", "points": "10 -6;5 0"}"#
        XCTAssertThrowsError(try JSONDecoder().decode(AutomationLane.self, from: Data(backwards.utf8)))
        let mode = #"{"parameter": "gain", "mode": "read", "points": ""}"#
        XCTAssertThrowsError(try JSONDecoder().decode(AutomationLane.self, from: Data(mode.utf8)))
    }

    /// A million points open whole, in time linear in their number: the goal (≤ 0.5 s, a
    /// release build) is `tapedeck bench budgets`'s; this test allows ten times what a debug
    /// build takes on a quiet machine (0.3–0.4 s), so a quadratic open (minutes) still fails it.
    func testAMillionPointsOpenWholeAndInLinearTime() throws {
        let dir = NSTemporaryDirectory() + "td-auto-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        var s = Session()
        var t = Track(name: "A")
        var points: [AutomationPoint] = []
        points.reserveCapacity(1_000_000)
        for i in 0..<1_000_000 { points.append(AutomationPoint(frame: Int64(i) * 48, value: -60 + Double(i % 1000) * 0.06)) }
        t.automation = [AutomationLane(parameter: .gain, points: points)]
        s.tracks = [t]
        try folder.create(s)
        var times: [Double] = []
        for _ in 0..<5 {
            let start = Date()
            let back = try folder.load()
            times.append(Date().timeIntervalSince(start))
            XCTAssertEqual(back.tracks[0].automation[0].points.count, 1_000_000)
        }
        let median = times.sorted()[2]
        print("a million automation points open in \(String(format: "%.3f", median)) s (median of 5)")
        XCTAssertLessThan(median, 5, "opened in \(times)")
    }
}
