import XCTest
@testable import TapedeckEngine

/// The audio thread tells the screen when a meter shows something, and stays quiet when all
/// it measures is silence (so an idle screen sleeps).
final class EngineActivityTests: XCTestCase {
    private func measure(_ meter: LevelMeter, level: Float, frames: Int) {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: level, count: frames)
        var channels: [UnsafeMutablePointer<Float>] = [buffer, buffer]
        channels.withUnsafeMutableBufferPointer { meter.measure(UnsafePointer($0.baseAddress!), available: 2, frameCount: frames) }
    }

    func testAMeterSignalsLevelsAndTheirEndButNotSilence() {
        let meter = LevelMeter(channelCount: 2, windowFrames: 4800)
        let activity = EngineActivity.shared
        var before = activity.signalCount
        for _ in 0..<10 { measure(meter, level: 0, frames: 4800) }
        XCTAssertEqual(activity.signalCount, before, "silence wakes nobody")
        before = activity.signalCount
        measure(meter, level: 0.5, frames: 4800)
        XCTAssertEqual(activity.signalCount, before + 1, "a level is shown")
        measure(meter, level: 0, frames: 4800)
        XCTAssertEqual(activity.signalCount, before + 2, "its fall to silence is shown")
        measure(meter, level: 0, frames: 4800)
        measure(meter, level: 0.00001, frames: 4800)  // −100 dBFS: below every meter's floor
        XCTAssertEqual(activity.signalCount, before + 2)
    }
}
