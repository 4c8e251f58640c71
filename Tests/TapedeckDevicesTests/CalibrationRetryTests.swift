import XCTest
import TapedeckEngine
@testable import TapedeckDevices

/// Calibration through xruns: runs start over while the budget lasts, xruns that cost nothing
/// spoil nothing, and a machine that never lets a run through is refused in one line.
final class CalibrationRetryTests: XCTestCase {
    // MARK: the rule

    func testAnXrunThatCostNothingNeverStartsARunOver() {
        var rule = CalibrationRetry(budgetFrames: 1000)
        for _ in 0..<50 {
            rule.heard(frames: 256)
            XCTAssertEqual(rule.xrun(lostFrames: 0, skippedNow: 0, runUnderWay: true), .carryOn)
        }
        XCTAssertEqual(rule.harmlessXruns, 50)
        XCTAssertEqual(rule.spoilingXruns, 0)
        XCTAssertEqual(rule.runs, 1)
    }

    func testRunsStartOverUntilTheBudgetIsSpentNotAFixedNumberOfTimes() {
        var rule = CalibrationRetry(budgetFrames: 48000)
        var decisions: [CalibrationRetry.Decision] = []
        // An xrun that costs one period every 4096 frames: ten before the budget is spent.
        for _ in 0..<12 {
            rule.heard(frames: 4096 - 256)
            decisions.append(rule.xrun(lostFrames: 256, skippedNow: 256, runUnderWay: true))
        }
        XCTAssertEqual(Array(decisions.prefix(11)), Array(repeating: .startOver, count: 11), "47,104 frames: still within 48,000")
        XCTAssertEqual(decisions[11], .giveUp, "49,152 frames of device time: spent")
        XCTAssertEqual(rule.spoilingXruns, 12)
        XCTAssertEqual(rule.runs, 12)
        XCTAssertEqual(rule.elapsedFrames, 12 * 4096, "lost frames count as device time: a stalled server spends the budget too")
    }

    func testTheRestOfAnXrunAlreadyCountedAndXrunsWhileSettlingSpoilNothing() {
        var rule = CalibrationRetry(budgetFrames: 1_000_000)
        // A stall told in parts (JACK holds two periods until its clock can say): the first
        // part spoils the run; the rest finds no run under way.
        XCTAssertEqual(rule.xrun(lostFrames: 2048, skippedNow: 2048, runUnderWay: true), .startOver)
        XCTAssertEqual(rule.xrun(lostFrames: 512, skippedNow: 512, runUnderWay: false), .carryOn)
        XCTAssertEqual(rule.xrun(lostFrames: 2560, skippedNow: 0, runUnderWay: false), .carryOn)
        XCTAssertEqual(rule.spoilingXruns, 1, "one stall, one spoiled run")
        XCTAssertEqual(rule.runs, 2)
        XCTAssertEqual(rule.elapsedFrames, 2560, "each frame skipped counted once")
    }

    // MARK: through a device

    /// A loopback (exact delay) whose reads xrun at chosen periods: an xrun costs the period
    /// (or nothing, as a JACK server's report of another client's xrun does).
    private final class XrunningLoop: PeriodDevice, @unchecked Sendable {
        let inner: TapedeckDevices.LoopbackDevice
        let driver = PeriodDriver()
        /// Whether read number `n` (from 0) xruns.
        let xrunsAt: @Sendable (Int) -> Bool
        let costs: Bool
        private var reads = 0

        init(delayFrames: Int, costs: Bool = true, xrunsAt: @escaping @Sendable (Int) -> Bool) {
            inner = .init(periodFrames: 256, periodCount: 2, delayFrames: delayFrames, reportedLatencyFrames: 512)
            self.costs = costs
            self.xrunsAt = xrunsAt
        }

        var configuration: DeviceConfiguration { inner.configuration }
        var latency: DeviceLatency { inner.latency }
        func startStreams() throws(DeviceError) {}
        func stopStreams() {}

        func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
            defer { reads += 1 }
            if xrunsAt(reads) {
                if costs { return .xrun(lostFrames: Int64(frameCount)) }
                // A JACK server's report of someone else's xrun: the period still moves,
                // and the xrun is told after it is written.
                tellAfterWrite = true
            }
            return inner.read(into: channels, frameCount: frameCount)
        }

        func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
            let result = inner.write(from: channels, frameCount: frameCount)
            guard tellAfterWrite else { return result }
            tellAfterWrite = false
            return .xrun(lostFrames: 0)
        }

        private var tellAfterWrite = false
    }

    func testAMeasurementSpoiledFiveTimesOverIsMeasuredAgainToTheFrame() throws {
        // An xrun every 100 periods (0.53 s), five in all: each falls in a run (a run is
        // ~430 periods, its settling ~96), which three attempts could not get through.
        let device = XrunningLoop(delayFrames: 1111) { n in n > 0 && n % 100 == 0 && n <= 500 }
        let r = try LatencyCalibrator.measure(device: device)
        XCTAssertEqual(r.measuredFrames, 1111)
        XCTAssertEqual(r.extraFrames, 1111 - 512)
        XCTAssertEqual(r.spoiledRuns, 5)
        XCTAssertEqual(r.spreadFrames, 0)
    }

    func testXrunsThatCostNothingLeaveTheRunStanding() throws {
        let device = XrunningLoop(delayFrames: 700, costs: false) { n in n % 7 == 3 }
        let r = try LatencyCalibrator.measure(device: device)
        XCTAssertEqual(r.measuredFrames, 700)
        XCTAssertEqual(r.spoiledRuns, 0, "an xrun told every 7 periods, none of which cost a frame")
    }

    func testAMachineThatNeverLetsARunThroughIsRefusedAfterTheBudgetSayingHowMany() {
        var settings = LatencyCalibrator.Settings()
        settings.retrySeconds = 5
        let device = XrunningLoop(delayFrames: 600) { n in n % 150 == 149 }
        XCTAssertThrowsError(try LatencyCalibrator.measure(device: device, settings: settings)) { error in
            guard case .xruns(let count, let seconds, let backend)? = error as? LatencyCalibrator.Failure else { return XCTFail("\(error)") }
            // An xrun every 150 periods (38,400 frames, 0.8 s of device time) spoils every run
            // (432 periods): the sixth at 4.8 s still starts one over, the seventh at 5.6 s ends it.
            XCTAssertEqual(count, 7)
            XCTAssertEqual(seconds, 6)
            XCTAssertEqual(backend, "loopback")
            XCTAssertEqual("\(error)", "7 xruns in 6 s each cost audio and spoiled the measurement under way; nothing stored: "
                           + "run it again when the machine is less busy, or with a larger --period or --periods")
        }
    }

    func testOnJACKTheRefusalNamesJACKsBufferSizeNotAnOptionJACKIgnores() {
        let failure = LatencyCalibrator.Failure.xruns(count: 9, seconds: 15, backend: "PipeWire (JACK)")
        XCTAssertTrue("\(failure)".hasSuffix("or with a larger JACK buffer size (jack_bufsize 512, or PipeWire's quantum)"), "\(failure)")
        XCTAssertFalse("\(failure)".contains("--period"))
    }
}
