import XCTest
@testable import TapedeckEngine

/// Where a message stamped before the window of the period that takes it was played: through
/// the window it belongs to, or spread over the frames an xrun lost between two windows, or
/// (the device's clock standing still between them) at the period's first frame.
final class MIDIWindowTests: XCTestCase {
    /// A window of 256 frames at 48 kHz from `frame` (nanoseconds = frames · 1e9 / 48000).
    private func window(from frame: Int64) -> MIDIWindow {
        MIDIWindow(startNanoseconds: ns(frame), endNanoseconds: ns(frame + 256))
    }
    private func ns(_ frame: Int64) -> Int64 { frame * 1_000_000_000 / 48000 }

    func testAStampInTheWindowIsAtItsFrame() {
        let w = window(from: 48_000)
        XCTAssertEqual(w.frame(atNanoseconds: ns(48_000), frameCount: 256), 0)
        XCTAssertEqual(w.frame(atNanoseconds: ns(48_100), frameCount: 256), 100)
        XCTAssertEqual(w.frame(atNanoseconds: ns(47_900), frameCount: 256), -100, "before the window, run back")
        XCTAssertEqual(w.frame(atNanoseconds: ns(48_000) - 1, frameCount: 256), 0, "to the nearest frame")
    }

    func testALateStampIsPlacedThroughThePeriodBeforeIt() {
        // Contiguous windows: the period before began 256 frames earlier.
        let played = MIDIWindow.playedFrame(atNanoseconds: ns(47_800), window: window(from: 48_000), frameCount: 256,
                                            previous: window(from: 47_744), previousFrameCount: 256, framesBefore: 256)
        XCTAssertEqual(played, -200)
    }

    func testAStampInFramesAnXrunLostIsPlacedAmongThem() {
        // The window before ended at 48_000; the device lost 9_600 frames; this window begins
        // 9_600 frames of time after: the frame 2_000 into the lost ones is 7_600 before it.
        let played = MIDIWindow.playedFrame(atNanoseconds: ns(50_000), window: window(from: 57_600), frameCount: 256,
                                            previous: window(from: 47_744), previousFrameCount: 256, framesBefore: 256 + 9_600)
        XCTAssertEqual(played, -7_600)
    }

    func testAStampWhileTheDeviceClockStoodStillIsAtThePeriodsFirstFrame() {
        // 100 ms between the windows but no frame: the device (a JACK server starved of CPU)
        // stood still; whatever was played then is heard, and kept, at the first frame after.
        let played = MIDIWindow.playedFrame(atNanoseconds: ns(50_000), window: window(from: 52_800), frameCount: 256,
                                            previous: window(from: 47_744), previousFrameCount: 256, framesBefore: 256)
        XCTAssertEqual(played, 0)
        // One within a period of the window before was played in this period's frames, which
        // the device played before it stood still (a JACK server stopped after its cycle).
        XCTAssertEqual(MIDIWindow.playedFrame(atNanoseconds: ns(48_100), window: window(from: 52_800), frameCount: 256,
                                              previous: window(from: 47_744), previousFrameCount: 256, framesBefore: 256), 100)
        // And a stamp in the window before the stand-still keeps its frame there.
        XCTAssertEqual(MIDIWindow.playedFrame(atNanoseconds: ns(47_900), window: window(from: 52_800), frameCount: 256,
                                              previous: window(from: 47_744), previousFrameCount: 256, framesBefore: 256), -100)
    }
}
