import XCTest
import TapedeckCore
@testable import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckDevices

/// On a machine's first run the stretchers measure only the asked speed's start delay before
/// they are ready, the rest in the background (StretchDelayTable). A speed change to a speed
/// not measured yet must not play from an estimate (a click at 0.5× landed 434 frames late):
/// the engine holds it back, says so (`isTimePitchPending`), has that speed measured next and
/// then plays it.
final class TimePitchDelayTests: XCTestCase {
    func testASpeedNotMeasuredYetWaitsForItsDelayAndThenPlays() throws {
        let dir = try Fixture.temporaryFolder()
        let saved = LiveStretcher.delayCache.withLock { $0 }
        defer {
            StretchDelayTable.holdsBackground.store(false, ordering: .relaxed)
            LiveStretcher.delayCache.withLock { $0 = saved }
            try? FileManager.default.removeItem(atPath: dir)
        }
        // A rate nothing else in the suite uses, nothing in memory or on disk: a first run.
        let rate = 32000
        LiveStretcher.delayCache.withLock { $0 = StretchDelayCache(folder: dir + "/cache") }
        for quality in [StretchQuality.fast, .best] {
            StretchDelayTable.forget(StretchDelayTable.Key(sampleRate: rate, channelCount: 2, quality: quality))
        }
        StretchDelayTable.holdsBackground.store(true, ordering: .relaxed)

        let folder = SessionFolder(path: dir + "/s")
        let session = Session(sampleRate: rate)
        try folder.create(session)
        let engine = Engine(device: LoopbackDevice(sampleRate: rate, periodFrames: 256, delayFrames: 0))
        defer { _ = engine.close() }
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try engine.start()
        engine.play()

        // The asked speed is measured while the processors are built: heard at once.
        engine.setTimePitch(TimePitchSettings(speed: 1.5, mode: .stretch, pitchSemitones: 0))
        XCTAssertTrue(engine.waitForTimePitch(timeoutSeconds: 60), "1.5× measured with the build")
        XCTAssertFalse(engine.isTimePitchPending)

        // 0.5× is not measured (the background is held): the change waits, and says so.
        engine.setTimePitch(TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 0))
        XCTAssertTrue(engine.isTimePitchPending, "waits for 0.5×'s delay")
        usleep(100_000)
        engine.completeTimePitch()
        XCTAssertTrue(engine.isTimePitchPending, "still waits while nothing measures")
        // Varispeed uses no stretcher: nothing to wait for.
        engine.setTimePitch(TimePitchSettings(speed: 0.5, mode: .varispeed, pitchSemitones: 0))
        XCTAssertFalse(engine.isTimePitchPending, "varispeed has no start delay")

        engine.setTimePitch(TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 0))
        StretchDelayTable.holdsBackground.store(false, ordering: .relaxed)
        let asked = Date()
        XCTAssertTrue(engine.waitForTimePitch(timeoutSeconds: 60), "heard once measured")
        XCTAssertFalse(engine.isTimePitchPending)
        let waited = Date().timeIntervalSince(asked)
        // Measured first, before the slow end of the table (1/32× alone takes longer than 0.5×).
        let table = StretchDelayTable.table(for: StretchDelayTable.Key(sampleRate: rate, channelCount: 2, quality: .best), cache: nil)
        XCTAssertNotNil(table.measured(step: -2))
        print("0.5× waited \(waited) s for its delay; steps measured by then: \(table.values.compactMap { $0 }.count)")
    }
}
