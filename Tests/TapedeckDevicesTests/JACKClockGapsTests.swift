import XCTest
@testable import TapedeckDevices

/// The readings of JACK's clock seen on a real JACK2 server (dummy driver, 256-frame periods)
/// give the lost frames the source's own samples said were lost.
final class JACKClockGapsTests: XCTestCase {
    /// Each cycle's reading (clock moved on beyond the last cycle's frames): what is skipped
    /// before each cycle renders, and the xruns told with what they cost.
    private func run(_ deltas: [Int64], period: Int64 = 256) -> (skips: [Int64], told: [Int64]) {
        var gaps = JACKClockGaps()
        var skips: [Int64] = [], told: [Int64] = []
        for d in deltas {
            let step = gaps.cycle(deltaFrames: d, periodFrames: period)
            skips.append(step.skipFrames)
            if step.tell { told.append(step.lostFrames) }
        }
        return (skips, told)
    }

    func testAReadingOfTheNextCycleThatIsGivenBackLosesNothing() {
        // Under load: +256 then -256, the source's samples unbroken.
        let r = run([0, 256, -256, 0])
        XCTAssertEqual(r.skips, [0, 0, 0, 0])
        XCTAssertEqual(r.told, [0], "an xrun, told once, that cost nothing")
    }

    func testAGapThatStaysIsSkippedTwoCyclesLate() {
        // JACK's clock moved on one period that no client ran: the device lost it.
        let r = run([0, 256, 0, 0, 0])
        XCTAssertEqual(r.skips, [0, 0, 0, 256, 0])
        XCTAssertEqual(r.told, [256])
    }

    func testALongStallIsSkippedAtOnceButForTwoPeriods() {
        // The client stalled 60 ms: 2560 frames the source played and it never heard.
        let r = run([0, 2560, 0, 0])
        XCTAssertEqual(r.skips, [0, 2048, 0, 512])
        XCTAssertEqual(r.told, [2560])
        XCTAssertEqual(r.skips.reduce(0, +), 2560, "every frame lost is skipped")
    }

    func testAfterItsOwnOverrunOnlyOnePeriodIsHeld() {
        var gaps = JACKClockGaps()
        _ = gaps.cycle(deltaFrames: 0, periodFrames: 256)
        XCTAssertEqual(gaps.cycle(deltaFrames: 2560, periodFrames: 256, afterOverrun: true).skipFrames, 2304)
        XCTAssertEqual(gaps.cycle(deltaFrames: 0, periodFrames: 256).skipFrames, 0)
        let last = gaps.cycle(deltaFrames: 0, periodFrames: 256)
        XCTAssertEqual(last.skipFrames, 256)
        XCTAssertEqual(last.lostFrames, 2560)
        // A 16 ms stall read a period ahead: +512, then -256 given back.
        var again = JACKClockGaps()
        let first = again.cycle(deltaFrames: 512, periodFrames: 256, afterOverrun: true).skipFrames
        XCTAssertEqual(first + again.cycle(deltaFrames: -256, periodFrames: 256).skipFrames, 256)
    }

    func testAStallReadAheadGivesBackWhatItReadTooFar() {
        // A 16 ms stall: +512 then -256; the source said 256 were lost.
        let r = run([0, 512, -256, 0, 0])
        XCTAssertEqual(r.skips, [0, 0, 0, 256, 0])
        XCTAssertEqual(r.told, [256])
        // Read two periods ahead and given both back: nothing lost.
        XCTAssertEqual(run([512, -512, 0]).skips, [0, 0, 0])
    }

    func testACycleLateTwiceInARowReadsAheadTwiceAndLosesNothing() {
        // Seen in CI: +256, 0, -256, the MIDI source's notes spaced exactly as sent.
        let r = run([0, 256, 0, -256, 0])
        XCTAssertEqual(r.skips, [0, 0, 0, 0, 0])
        XCTAssertEqual(r.told, [0])
    }

    func testGapsBackToBackAreOneXrunAndNothingIsSkippedTwice() {
        let r = run([256, 256, 256, 0, 0])
        XCTAssertEqual(r.skips.reduce(0, +), 768)
        XCTAssertEqual(r.told, [768])
        XCTAssertEqual(run([-256, -1024, 0]).skips, [0, 0, 0], "a clock read behind owes nothing")
    }

    func testAShorterPeriodHoldsNoMoreThanItself() {
        // After a buffer-size change to 128 a gap of 1024 holds two periods of 128.
        let r = run([1024, 0, 0], period: 128)
        XCTAssertEqual(r.skips, [768, 0, 256])
        XCTAssertEqual(r.told, [1024])
    }
}
