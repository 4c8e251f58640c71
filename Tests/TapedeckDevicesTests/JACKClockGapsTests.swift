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

    /// PipeWire's JACK after a 200 ms stall of the server (a trace, `TAPEDECK_JACK_TRACE`):
    /// the cycles it ran back to back to catch up, each with how far its clock moved on; the
    /// audio of the later ones was a period behind their clock until the burst ended.
    private static let pipewireBurst: [(delta: Int64, backToBack: Bool)] = [
        (1024, false), (1024, true), (768, true), (2816, true), (256, true), (512, true), (256, true),
        (0, true), (0, true), (0, true), (256, true), (0, false), (0, false), (0, false),
    ]

    func testACatchUpBurstIsHeldWholeUntilACycleOnTimeSaysWhatWasLost() {
        var gaps = JACKClockGaps()
        _ = gaps.cycle(deltaFrames: 0, periodFrames: 256)
        var skips: [Int64] = [], told: [Int64] = []
        for c in Self.pipewireBurst {
            let step = gaps.cycle(deltaFrames: c.delta, periodFrames: 256, backToBack: c.backToBack)
            skips.append(step.skipFrames)
            if step.tell { told.append(step.lostFrames) }
        }
        let owed = Self.pipewireBurst.map(\.delta).reduce(0, +)
        // The first reading (not back to back) skips all but two periods as before; nothing
        // more until the second cycle on time after the burst (the first holds it one more).
        XCTAssertEqual(skips[0], 1024 - 512)
        XCTAssertEqual(Array(skips[1...11]), Array(repeating: 0, count: 11), "nothing is taken as lost while the burst runs")
        XCTAssertEqual(skips[12], owed - 512, "what the burst owed, once a cycle on time confirms it")
        XCTAssertEqual(told, [owed], "one xrun, told with all it cost")
        XCTAssertEqual(gaps.heldFrames, 0)
    }

    func testABurstThatGivesBackLosesNothing() {
        // Read ahead in the burst, given back at its end (PipeWire ran a cycle twice at one clock).
        let r: [(Int64, Bool)] = [(0, false), (512, true), (256, true), (0, true), (-256, true), (-512, true), (0, false), (0, false)]
        var gaps = JACKClockGaps()
        let skipped = r.map { gaps.cycle(deltaFrames: $0.0, periodFrames: 256, backToBack: $0.1).skipFrames }.reduce(0, +)
        XCTAssertEqual(skipped, 0)
        XCTAssertEqual(gaps.heldFrames, 0)
    }

    func testAHoldEndsEvenWhenEveryCycleComesBackToBack() {
        // A freewheeling server runs every cycle back to back: a gap there is held no longer
        // than the longest burst, then skipped as any other.
        var gaps = JACKClockGaps()
        var skipped: Int64 = 0
        skipped += gaps.cycle(deltaFrames: 1024, periodFrames: 256, backToBack: true).skipFrames
        for _ in 0..<(JACKClockGaps.burstCycles + 4) { skipped += gaps.cycle(deltaFrames: 0, periodFrames: 256, backToBack: true).skipFrames }
        XCTAssertEqual(skipped, 1024)
        XCTAssertEqual(gaps.heldFrames, 0)
    }
}
