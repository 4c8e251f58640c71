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

    func testMinutesOrSecondsOverFiftyNineUnderALargerUnitAreRefusedAsASlip() {
        for (bad, why) in [("1h99m", "'99m' after 'h' must be below 60"), ("2m60s", "'60s' after 'm' must be below 60"),
                           ("1s1500ms", "'1500ms' after 's' must be below 1000")] {
            XCTAssertThrowsError(try TimeText.frames(from: bad, tempoMap: map), bad) { error in
                XCTAssertTrue("\(error)".contains(why), "\(error)")
            }
        }
        XCTAssertEqual(try TimeText.frames(from: "1h59m", tempoMap: map), (3600 + 59 * 60) * 48000)
        XCTAssertEqual(try TimeText.frames(from: "99m", tempoMap: map), 99 * 60 * 48000, "alone, a unit may run over")
    }

    func testAnExponentIsRefusedSayingSoAndANegativeFrameCountAsNegative() {
        XCTAssertThrowsError(try TimeText.frames(from: "1e308", tempoMap: map)) { error in
            XCTAssertTrue("\(error)".contains("'1e308' has an exponent; write the time in digits"), "\(error)")
        }
        XCTAssertThrowsError(try TimeText.frames(from: "-1f", tempoMap: map)) { error in
            XCTAssertTrue("\(error)".contains("times cannot be negative"), "\(error)")
        }
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

    func testUnitsAndScreenPositionsAreRead() throws {
        XCTAssertEqual(try TimeText.frames(from: "2s", tempoMap: map), 96000)
        XCTAssertEqual(try TimeText.frames(from: "500ms", tempoMap: map), 24000)
        XCTAssertEqual(try TimeText.frames(from: "1m30s", tempoMap: map), 90 * 48000)
        XCTAssertEqual(try TimeText.frames(from: "1h2m3.5s", tempoMap: map), Int64(3723.5 * 48000))
        XCTAssertEqual(try TimeText.frames(from: "1s500ms", tempoMap: map), 72000)
        // What the screen shows is what can be typed: bar 3, beat 2, tick 480 of 960.
        XCTAssertEqual(try TimeText.frames(from: "3|2|480", tempoMap: map), 2 * 96000 + 24000 + 12000)
        XCTAssertEqual(try TimeText.frames(from: "3|2", tempoMap: map), 2 * 96000 + 24000)
        for frame: Int64 in [0, 1, 12345, 96000 + 36000, 48000 * 3600] {
            let shown = map.barsBeatsTicks(ofFrame: frame)
            let read = try TimeText.frames(from: shown, tempoMap: map)
            XCTAssertEqual(Double(read), Double(frame), accuracy: map.framesPerBeat / 960 + 1, "\(shown)")
        }
        XCTAssertEqual(try TimeText.range(from: "1m-1m30s", tempoMap: map, defaultEnd: 0), FrameRange(startFrame: 60 * 48000, endFrame: 90 * 48000))
        XCTAssertEqual(try TimeText.range(from: "2|1|0-3|1|0", tempoMap: map, defaultEnd: 0), FrameRange(startFrame: 96000, endFrame: 192000))
        for bad in ["1x", "ms", "5s1m", "2s2s", "1|0|0", "0|1|0", "1|5|0", "1|1|960", "1|1|1|1", "|", "1.5.s"] {
            XCTAssertThrowsError(try TimeText.frames(from: bad, tempoMap: map), bad) { error in
                XCTAssertTrue("\(error)".contains("malformed time '\(bad)'"), "\(error)")
            }
        }
    }

    /// Every one of these trapped on Int64 overflow (issue 13); now each is one clear line.
    func testTimesPastTheTimelineAreRefusedWithTheLimitNotTrapped() {
        let huge = ["9223372036854775807f", "9000000000000000000f", "99999999999999.1.1", "99999999999999.1.1.1",
                    "99999999999999|1|0", "9999999999999999999999999", "9223372036854775807", "99999999999:00:00",
                    "9999999999999999h", "1e400s", "1099511627777f", "\(String(repeating: "9", count: 400))",
                    "99999999999999.1.1-"]
        for text in huge {
            XCTAssertThrowsError(try TimeText.frames(from: text, tempoMap: map, field: "--at"), text) { error in
                let message = "\(error)"
                XCTAssertTrue(message.hasPrefix("--at: "), message)
                XCTAssertTrue(message.contains("2^40 frames") || message.contains("malformed time"), message)
                XCTAssertFalse(message.contains("\n"))
            }
        }
        XCTAssertThrowsError(try TimeText.range(from: "99999999999999.1.1-", tempoMap: map, defaultEnd: 10, field: "--range"))
        XCTAssertEqual(try TimeText.frames(from: "1099511627776f", tempoMap: map), SessionLimits.maximumTimelineFrames, "the limit itself is a position")
    }

    func testClockTextAndBarsOfAnyFrameNeverTrap() {
        XCTAssertEqual(TimeText.clock(frames: Int64.max, sampleRate: 48000), "53375995583:39:01.162")
        XCTAssertEqual(TimeText.clock(frames: -48000, sampleRate: 48000), "-00:01.000")
        XCTAssertEqual(TimeText.clock(frames: Int64.min, sampleRate: 1), "-2562047788015215:30:08.000")
        _ = map.barsBeatsTicks(ofFrame: Int64.max)
        _ = map.barsBeatsTicks(ofFrame: Int64.min)
        XCTAssertEqual(map.frame(bar: Int.max, beat: 1), SessionLimits.maximumTimelineFrames)
        XCTAssertEqual(Decibels.text(-1e308), "-1e+308")
        XCTAssertEqual(Decibels.text(-.infinity), "-inf")
    }

    /// `marker add 1:2:3` put a marker at 1:02:03 in a 10 s session, where bar 1 beat 2 was
    /// meant: after a colon a clock has two digits, and the refusal names both forms.
    func testAClockTimeWithOneDigitAfterAColonIsRefusedNamingBothForms() throws {
        for bad in ["1:2:3", "0:5", "1:2", "1:02:3", "0:5.5", "1:020"] {
            XCTAssertThrowsError(try TimeText.frames(from: bad, tempoMap: map, field: "marker"), bad) { error in
                let message = "\(error)"
                XCTAssertTrue(message.hasPrefix("marker: malformed time '\(bad)'"), message)
                XCTAssertTrue(message.contains("two digits") && message.contains("1:02:03") && message.contains("bars.beats.sixteenths (1.2.3)"),
                              message)
            }
        }
        XCTAssertEqual(try TimeText.frames(from: "1:02:03", tempoMap: map), 3723 * 48000)
        XCTAssertEqual(try TimeText.frames(from: "0:05.5", tempoMap: map), 264_000)
        XCTAssertEqual(try TimeText.frames(from: "10:00", tempoMap: map), 600 * 48000, "the first part takes any digits")
        XCTAssertEqual(try TimeText.frames(from: "1.2.3", tempoMap: map), 24000 + 6000 * 2, "bar 1, beat 2, third sixteenth")
    }

    /// A place more than ten minutes and more than the material's length past its end is
    /// surely a slip: said, in one line naming where it landed and how far past the end.
    func testAPlaceFarPastTheMaterialIsWarnedAboutAndANearOneIsNot() throws {
        var s = Session()
        XCTAssertNil(s.farPastEndWarning(9 * 60 * 48000, typed: "9:00"), "an empty session: ten minutes of room")
        XCTAssertNotNil(s.farPastEndWarning(11 * 60 * 48000, typed: "11:00"))
        s.tracks = [Track(name: "a", regions: [Region(file: "a.wav", timelineStartFrame: 0, sourceOffsetFrame: 0, lengthFrames: 10 * 48000)])]
        let far = try XCTUnwrap(s.farPastEndWarning(3723 * 48000, typed: "1:02:03"))
        XCTAssertEqual(far, "'1:02:03' is 1:02:03.000, 1:01:53.000 past the end of the session's material (00:10.000); "
                       + "if that is a slip, move it (bar 1 beat 2 is 1.2.1, one minute two seconds 1:02)")
        XCTAssertNil(s.farPastEndWarning(5 * 60 * 48000, typed: "5:00"))
        XCTAssertNil(s.farPastEndWarning(0, typed: "0"))
        XCTAssertNotNil(s.farPastEndWarning(.max, typed: "x"), "any Int64 is answered, never trapped")
        s.tracks[0].regions[0].lengthFrames = 2 * 3600 * 48000
        XCTAssertNil(s.farPastEndWarning(4 * 3600 * 48000, typed: "4:00:00"), "a two-hour session: two hours of room")
        XCTAssertNotNil(s.farPastEndWarning(4 * 3600 * 48000 + 1, typed: "4:00:00"))
    }
}

