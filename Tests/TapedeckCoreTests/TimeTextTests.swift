import XCTest
@testable import TapedeckCore

final class TimeTextTests: XCTestCase {
    let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))

    func testSecondsAreReadAsFramesAtTheSessionRate() throws {
        XCTAssertEqual(try TimeText.frames(from: "12.5", tempoMap: map), 600_000)
        XCTAssertEqual(try TimeText.frames(from: "0", tempoMap: map), 0)
        XCTAssertEqual(try TimeText.frames(from: ".5", tempoMap: map), 24000)
    }

    func testMinutesSecondsAndHoursAreRead() throws {
        XCTAssertEqual(try TimeText.frames(from: "1:02.5", tempoMap: map), 3_000_000)
        XCTAssertEqual(try TimeText.frames(from: "1:00:00", tempoMap: map), 3600 * 48000)
        XCTAssertEqual(try TimeText.frames(from: "0:00.001", tempoMap: map), 48)
    }

    func testFrameCountsAreTakenAsIs() throws {
        XCTAssertEqual(try TimeText.frames(from: "90000f", tempoMap: map), 90000)
    }

    func testBarsBeatsSixteenthsFollowTempoAndSignature() throws {
        // 120 BPM: a beat is 24000 frames, a bar of 4/4 is 96000.
        XCTAssertEqual(try TimeText.frames(from: "1.1.1", tempoMap: map), 0)
        XCTAssertEqual(try TimeText.frames(from: "4.2.1", tempoMap: map), 3 * 96000 + 24000)
        XCTAssertEqual(try TimeText.frames(from: "1.1.3", tempoMap: map), 12000)
        let waltz = TempoMap(sampleRate: 44100, tempoBPM: 90, timeSignature: TimeSignature(beatsPerBar: 3, beatUnit: 4))
        XCTAssertEqual(try TimeText.frames(from: "2.1.1", tempoMap: waltz), 3 * 29400)
    }

    func testMalformedTimesAreClearErrors() {
        for bad in ["", "abc", "-3", "1:75", "12.5.x", "5.5.1", "0.1.1", "1.2.9", "12ff", "f", "1::2", "1.", "1:2:3:4"] {
            XCTAssertThrowsError(try TimeText.frames(from: bad, tempoMap: map), bad) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains("malformed time '\(bad)'"), text)
            }
        }
    }

    func testRangesNeedAnEndAfterTheStart() throws {
        XCTAssertEqual(try TimeText.range(from: "1-2", tempoMap: map, defaultEnd: 0), FrameRange(startFrame: 48000, endFrame: 96000))
        XCTAssertEqual(try TimeText.range(from: "1-", tempoMap: map, defaultEnd: 500_000), FrameRange(startFrame: 48000, endFrame: 500_000))
        XCTAssertThrowsError(try TimeText.range(from: "2-1", tempoMap: map, defaultEnd: 0))
        XCTAssertThrowsError(try TimeText.range(from: "2", tempoMap: map, defaultEnd: 0))
    }

    func testClockTextShowsMinutesSecondsAndMilliseconds() {
        XCTAssertEqual(TimeText.clock(frames: 62_5 * 4800, sampleRate: 48000), "01:02.500")
        XCTAssertEqual(TimeText.clock(frames: 3_723 * 48000 + 48, sampleRate: 48000), "1:02:03.001")
    }

    func testBarsBeatsTicksViewOfAFrame() {
        XCTAssertEqual(map.barsBeatsTicks(ofFrame: 0), "1|1|0")
        XCTAssertEqual(map.barsBeatsTicks(ofFrame: 96000 + 36000), "2|2|480")
    }
}
