import XCTest
@testable import TapedeckDevices

/// What an xrun cost an ALSA device, from the moments its periods moved (CLOCK_MONOTONIC):
/// the device time that passed unheard, whatever the thread's wake-ups and whatever the
/// device's clock did long before.
final class XrunClockTests: XCTestCase {
    private let period = 256
    /// Nanoseconds of `frames` at 48 kHz.
    private func ns(_ frames: Int64) -> Int64 { frames * 1_000_000_000 / 48000 }

    /// A device whose periods move every 256 frames of its clock from `start`, each seen
    /// `late(k)` nanoseconds after it moved; `periods` of them.
    private func run(_ clock: XrunClock, from start: Int64 = 1_000_000_000, periods: Int, late: (Int) -> Int64 = { _ in 0 }) -> Int64 {
        for k in 0..<periods {
            clock.moved(period, atNanoseconds: start + ns(Int64((k + 1) * period)) + late(k))
        }
        return start + ns(Int64(periods * period))
    }

    func testTheDeviceTimeAnXrunSkippedIsWhatItLostAndARefusedPeriodIsNotCountedTwice() {
        let clock = XrunClock(sampleRate: 48000)
        XCTAssertEqual(clock.restarted(movedFrames: period, atNanoseconds: 5_000_000_000), 0, "nothing moved yet: nothing to measure")
        // 100 periods moved, then the thread stalls in the 101st (rendered, refused by the
        // device); the device, restarted, moves its first period 100 ms of device time
        // after the 100th period moved — as it would have moved 18.75 periods later.
        let end = run(clock, periods: 100)
        clock.passed(period)
        let lost = clock.restarted(movedFrames: period, atNanoseconds: end + 100_000_000)
        // 4800 frames went by since the 100th period; of them the refused period went through
        // the engine and the restarted device's first period is about to.
        XCTAssertEqual(lost, 4800 - 256 - 256)
        XCTAssertEqual(clock.accountedFrames, Int64(100 * period) + 256 + lost)
        // The periods after it carry on from there (the first written at once, into the room
        // the device just made): a second xrun costs only its own time.
        var at = end + 100_000_000
        clock.moved(period, atNanoseconds: at)
        for _ in 0..<20 {
            at += ns(Int64(period))
            clock.moved(period, atNanoseconds: at)
        }
        XCTAssertEqual(clock.restarted(movedFrames: period, atNanoseconds: at + ns(1024)), 1024 - 256)
    }

    func testLateWakeUpsDoNotCountAsLostFrames() {
        let clock = XrunClock(sampleRate: 48000)
        // Four periods in five seen up to 3 ms late (a busy machine); the restart on time.
        let end = run(clock, periods: 64) { k in k % 5 == 0 ? 0 : Int64((k * 7919) % 3_000_000) }
        XCTAssertEqual(clock.restarted(movedFrames: period, atNanoseconds: end + ns(2048)), 2048 - 256)
    }

    func testADeviceClockThatStoodStillEarlierIsNotTakenForFramesLostLater() {
        let clock = XrunClock(sampleRate: 48000)
        // The JACK dummy server starved for 100 ms: its clock (and so the device's periods)
        // stood still, nothing was lost. Two seconds later an xrun loses 1024 frames.
        var end = run(clock, periods: 50)
        end = run(clock, from: end + 100_000_000, periods: 375)
        XCTAssertEqual(clock.restarted(movedFrames: period, atNanoseconds: end + ns(1024)), 1024 - 256)
    }

    func testADeviceThatMovesSeveralPeriodsAtOnceIsMeasuredByWhatItMoved() {
        let clock = XrunClock(sampleRate: 48000)
        // Room for four periods at a time (a JACK period of 1024 behind 256-frame periods):
        // the first write of each four returns as the room appears, the next three at once.
        var at: Int64 = 1_000_000_000
        for k in 0..<64 {
            if k % 4 == 0 { at += ns(1024) }
            clock.moved(period, atNanoseconds: at)
        }
        // After the xrun the device says it made room for 1024 frames when it first moved.
        XCTAssertEqual(clock.restarted(movedFrames: 1024, atNanoseconds: at + ns(8192)), 8192 - 1024)
    }
}
