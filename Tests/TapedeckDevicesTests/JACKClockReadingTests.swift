import XCTest
@testable import TapedeckDevices

/// JACK's clock and rolling transport read each cycle, as `JACKCycle` reads them, weighed by
/// `JACKClockGaps`, and followed as the engine follows them (`RenderCore.followHost`: a
/// reading where the engine expects the transport, or ahead of it by exactly what is held, is
/// no move; any other is another program's locate, which ends a take).
final class JACKClockReadingTests: XCTestCase {
    private let period: Int64 = 256
    private let clockBase: Int64 = 1_000_000
    private let transportBase: Int64 = 61_696

    /// What the engine made of each cycle's (clock cycle, transport cycle) reading, counted in
    /// periods from the bases: the readings it took for a locate, and what it skipped.
    private func follow(_ cycles: [(clock: Int64, transport: Int64)]) -> (locates: [Int64], skipped: Int64, told: [Int64]) {
        var reading = JACKClockReading()
        var gaps = JACKClockGaps()
        var expected: Int64 = -1
        var locates: [Int64] = [], told: [Int64] = []
        var skipped: Int64 = 0
        for c in cycles {
            let clock = UInt32(truncatingIfNeeded: clockBase + c.clock * period)
            let transport = transportBase + c.transport * period
            let delta = reading.cycle(clockFrame: clock, frames: period, transportFrame: transport, heldFrames: gaps.heldFrames,
                                      sampleRate: 48000).deltaFrames
            let step = gaps.cycle(deltaFrames: delta, periodFrames: period)
            if step.tell { told.append(step.lostFrames) }
            // The engine: skipped frames move the transport it expects on by as much.
            skipped += step.skipFrames
            if expected >= 0 { expected += step.skipFrames }
            var frame = transport
            if gaps.heldFrames > 0 && frame == expected + gaps.heldFrames { frame = expected }
            if expected >= 0 && frame != expected { locates.append(transport) }
            expected = frame + period
        }
        return (locates, skipped, told)
    }

    func testCyclesOnTimeAreFollowedWithNothingSkipped() {
        let r = follow((0..<6).map { (Int64($0), Int64($0)) })
        XCTAssertEqual(r.locates, [])
        XCTAssertEqual(r.skipped, 0)
    }

    /// Seen in CI (issue 39), a 2-core machine with a busy process per core: a cycle that ran
    /// late read JACK's transport before the server's next cycle moved it on and the clock
    /// after (JACK2 moves its frame clock at the top of a cycle, the transport at its end); the
    /// next cycle read the transport two periods on and the clock one, and a cycle that JACK
    /// woke again read both again. Nothing but Tapedeck moved the transport: no locate, and the
    /// period read again is given back.
    func testATornReadingOfALateCycleIsNoLocate() {
        let r = follow([(0, 0), (1, 1), (3, 2), (4, 4), (4, 4), (5, 5), (6, 6), (7, 7)])
        XCTAssertEqual(r.locates, [], "the transport read a period past the clock once it caught up is not a locate")
        XCTAssertEqual(r.skipped, 0, "the cycle read again gives the period back")
        XCTAssertEqual(r.told, [0], "an xrun that cost nothing")
    }

    /// The same torn reading, and the cycle after it on time: the period the transport moved
    /// through unheard is lost, skipped, and told.
    func testATornReadingThenAPeriodUnheardIsAnXrunOfAPeriod() {
        let r = follow([(0, 0), (1, 1), (3, 2), (4, 4), (5, 5), (6, 6), (7, 7)])
        XCTAssertEqual(r.locates, [])
        XCTAssertEqual(r.skipped, 256)
        XCTAssertEqual(r.told, [256])
    }

    /// Another program's locate is followed at once, torn reading or not: back by a period
    /// with nothing torn, forward by more than the period the clock ran ahead, and back after
    /// a torn reading.
    func testLocatesAreStillFollowedAtOnce() {
        XCTAssertEqual(follow([(0, 0), (1, 1), (2, 1), (3, 2)]).locates, [transportBase + 256])
        XCTAssertEqual(follow([(0, 0), (1, 1), (2, 40), (3, 41)]).locates, [transportBase + 40 * 256])
        XCTAssertEqual(follow([(0, 0), (1, 1), (3, 2), (4, 5), (5, 6)]).locates, [transportBase + 5 * 256],
                       "two periods past the clock after a torn reading is a locate")
        XCTAssertEqual(follow([(0, 0), (1, 1), (3, 2), (4, 2), (5, 3)]).locates, [transportBase + 2 * 256],
                       "back after a torn reading is a locate")
        XCTAssertEqual(follow([(0, 0), (1, 1), (2, 2), (3, 4), (4, 5)]).locates, [transportBase + 4 * 256],
                       "a period forward with the clock on time is a locate")
    }
}
