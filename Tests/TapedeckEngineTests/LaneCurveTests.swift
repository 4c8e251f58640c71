import XCTest
import TapedeckCore
import TapedeckDSP
@testable import TapedeckEngine

/// The audio thread's reading of a lane (a segment's start and slope per frame, by shape)
/// against the session's own ``AutomationLane/value(at:)``, for every kind of segment.
final class LaneCurveTests: XCTestCase {
    private func point(_ frame: Int64, _ value: Double, _ curve: AutomationCurve = .linear) -> AutomationPoint {
        AutomationPoint(frame: frame, value: value, curve: curve)
    }

    /// Walks the lane forward frame by frame across every point, then jumps back (a locate),
    /// comparing values, and amplitudes for levels.
    private func assertReadsAsTheLane(_ lane: AutomationLane, file: StaticString = #filePath, line: UInt = #line) {
        let curve = LaneCurve(lane)
        let last = lane.points.last!.frame
        var frames = Array(stride(from: lane.points[0].frame - 3, through: last + 3, by: 1))
        frames += [lane.points[0].frame + 5, last / 2, last - 1]   // back: the cursor searches again
        for f in frames {
            let expected = lane.value(at: f)!
            let read = curve.value(at: f)
            XCTAssertEqual(read, expected, accuracy: 1e-9 * max(1, abs(expected)), "\(lane.parameter) at \(f)", file: file, line: line)
            if lane.parameter.isLevel {
                XCTAssertEqual(curve.amplitude(at: f), Decibels.toLinear(expected), accuracy: 1e-9,
                               "\(lane.parameter) amplitude at \(f)", file: file, line: line)
            }
        }
    }

    func testEverySegmentShapeReadsAsTheSessionsLane() {
        // A node parameter: straight, then exponential between positive values, then linear to 0.
        assertReadsAsTheLane(AutomationLane(parameter: .node("lpf", "cutoff"), points: [
            point(10, 200), point(70, 8000, .exponential), point(200, 400), point(260, 0, .exponential), point(300, 50)]))
        // A fader: straight in amplitude, exponential (straight in dB) between audible levels,
        // and exponential from and to silence (straight in amplitude again).
        assertReadsAsTheLane(AutomationLane(parameter: .gain, points: [
            point(0, -30), point(64, -6, .exponential), point(129, 0, .exponential), point(190, -200, .exponential),
            point(250, -12), point(251, 6)]))
        // A send's level, a pan, and a mute's steps.
        assertReadsAsTheLane(AutomationLane(parameter: .send("Verb"), points: [point(5, -200), point(37, 0)]))
        assertReadsAsTheLane(AutomationLane(parameter: .pan, points: [point(0, -1), point(33, 1), point(34, 0.25)]))
        assertReadsAsTheLane(AutomationLane(parameter: .mute, points: [point(3, 1), point(40, 0), point(41, 1)]))
    }

    /// Two points on one frame: the lane jumps there, and reading across it never divides by
    /// the empty segment between them.
    func testTwoPointsOnOneFrameJumpWithoutAnEmptySegmentRead() {
        assertReadsAsTheLane(AutomationLane(parameter: .gain, points: [point(0, -20), point(32, -10), point(32, -3), point(96, 0)]))
        assertReadsAsTheLane(AutomationLane(parameter: .node("comp", "threshold"), points: [point(0, -30), point(50, -20), point(50, -10),
                                                                                           point(51, -40)]))
    }
}
