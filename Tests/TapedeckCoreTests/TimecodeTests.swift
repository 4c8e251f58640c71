import XCTest
import Foundation
@testable import TapedeckCore

/// Issue 45: the one conversion from timeline frames to timecode at a session's rate.
final class TimecodeTests: XCTestCase {
    private let hz = 48000

    private func tc(_ frame: Int64, _ rate: TimecodeRate) -> String {
        Timecode(frame: frame, sampleRate: hz, rate: rate).text
    }

    /// The first sample of timecode frame `count` (its start, rounded up) at a rate whose
    /// frame lasts `numerator / 10` samples at 48 kHz.
    private func start(ofCount count: Int64, tenthsOfSamplesPerFrame: Int64) -> Int64 {
        (count * tenthsOfSamplesPerFrame + 9) / 10
    }

    func testWholeRatesCountWholeFramesOfSamples() {
        // 24: 2000 samples a frame.
        XCTAssertEqual(tc(Int64(hz) * 61 + 2000 * 5, .fps24), "00:01:01:05")
        XCTAssertEqual(tc(Int64(hz) * 61 + 2000 * 5 - 1, .fps24), "00:01:01:04")
        // 25: 1920 samples a frame; frames run 00–24.
        XCTAssertEqual(tc(3600 * Int64(hz) + 1920 * 24, .fps25), "01:00:00:24")
        XCTAssertEqual(tc(3600 * Int64(hz) + 1920 * 25, .fps25), "01:00:01:00")
        XCTAssertEqual(tc(Int64(hz) * 5 / 2, .fps25), "00:00:02:12")
        // 30: 1600 samples a frame.
        XCTAssertEqual(tc(1600 * 1800 - 1, .fps30), "00:00:59:29")
        XCTAssertEqual(tc(1600 * 1800, .fps30), "00:01:00:00")
        XCTAssertEqual(tc(Int64(hz) * 5 / 2, .fps30), "00:00:02:15")
        // 60: 800 samples a frame.
        XCTAssertEqual(tc(800 * 59, .fps60), "00:00:00:59")
        XCTAssertEqual(tc(800 * 60, .fps60), "00:00:01:00")
        // Before the start is the start; hours are not wrapped at 24 (nor are Ardour's).
        XCTAssertEqual(tc(-5, .fps25), "00:00:00:00")
        XCTAssertEqual(tc(25 * 3600 * Int64(hz), .fps25), "25:00:00:00")
    }

    func testDropFrameSkipsTwoNumbersEachMinuteButEveryTenth() {
        // 29.97df: 1601.6 samples a frame.
        func at(_ count: Int64) -> Int64 { start(ofCount: count, tenthsOfSamplesPerFrame: 16016) }
        // The first minute has every number; 00:00:59;29 is followed by 00:01:00;02.
        XCTAssertEqual(tc(at(1800) - 1, .fps29_97Drop), "00:00:59:29")
        XCTAssertEqual(tc(at(1800), .fps29_97Drop), "00:01:00:02")
        XCTAssertEqual(tc(at(3598) - 1, .fps29_97Drop), "00:01:59:29")
        XCTAssertEqual(tc(at(3598), .fps29_97Drop), "00:02:00:02")
        // The tenth minute keeps its 00 and 01: 00:09:59;29 is followed by 00:10:00;00.
        XCTAssertEqual(tc(at(17982) - 1, .fps29_97Drop), "00:09:59:29")
        XCTAssertEqual(tc(at(17982), .fps29_97Drop), "00:10:00:00")
        XCTAssertEqual(tc(at(17983), .fps29_97Drop), "00:10:00:01")
        XCTAssertEqual(tc(at(17982 + 1800), .fps29_97Drop), "00:11:00:02")
        // An hour of drop-frame is 107892 frames, 3.6 ms short of an hour (SMPTE 12M).
        XCTAssertEqual(tc(at(107_892), .fps29_97Drop), "01:00:00:00")
        XCTAssertEqual(at(107_892), 3600 * Int64(hz) - 172)
        // The same frames without drop-frame numbering fall behind the clock.
        XCTAssertEqual(tc(at(1800), .fps29_97), "00:01:00:00")
        XCTAssertEqual(tc(at(107_892), .fps29_97), "00:59:56:12")
        // Ardour's 30 drop: drop-frame numbers on 30 whole frames a second.
        XCTAssertEqual(tc(1600 * 1800 - 1, .fps30Drop), "00:00:59:29")
        XCTAssertEqual(tc(1600 * 1800, .fps30Drop), "00:01:00:02")
    }

    func testPulledDownRatesCountNominalFramesSlowerThanTheClock() {
        // 23.976: 2002 samples a frame, 24 to a timecode second.
        XCTAssertEqual(tc(2002 * 24 - 1, .fps23_976), "00:00:00:23")
        XCTAssertEqual(tc(2002 * 24, .fps23_976), "00:00:01:00")
        // An hour of the clock is 86313 frames: 00:59:56:09.
        XCTAssertEqual(tc(3600 * Int64(hz), .fps23_976), "00:59:56:09")
        // 24.975: 1921.92 samples a frame, 25 to a timecode second.
        XCTAssertEqual(tc(48048 - 1, .fps24_975), "00:00:00:24")
        XCTAssertEqual(tc(48048, .fps24_975), "00:00:01:00")
        // 59.94: 800.8 samples a frame, 60 to a timecode second.
        XCTAssertEqual(tc(48048 - 1, .fps59_94), "00:00:00:59")
        XCTAssertEqual(tc(48048, .fps59_94), "00:00:01:00")
        XCTAssertEqual(tc(start(ofCount: 61, tenthsOfSamplesPerFrame: 8008), .fps59_94), "00:00:01:01")
    }

    func testOtherSampleRatesAndHugePositionsDoNotTrap() {
        XCTAssertEqual(Timecode(frame: 44100 * 90 + 1764 * 3, sampleRate: 44100, rate: .fps25).text, "00:01:30:03")
        XCTAssertEqual(Timecode(frame: 0, sampleRate: 0, rate: .fps30).text, "00:00:00:00")
        for rate in TimecodeRate.allCases {
            let t = Timecode(frame: .max, sampleRate: 192_000, rate: rate)
            XCTAssertLessThan(t.frames, rate.nominalFramesPerSecond, rate.rawValue)
            XCTAssertLessThan(t.minutes, 60, rate.rawValue)
        }
    }

    func testRatesAreReadByTheirNamesAndArdoursAndNothingElse() {
        XCTAssertEqual(TimecodeRate.allCases.map(\.rawValue), ["23.976", "24", "24.975", "25", "29.97", "29.97df", "30", "30df", "59.94", "60"])
        for rate in TimecodeRate.allCases { XCTAssertEqual(TimecodeRate(text: rate.rawValue), rate) }
        XCTAssertEqual(TimecodeRate(text: "29.97 drop"), .fps29_97Drop)
        XCTAssertEqual(TimecodeRate(text: "29.97DF"), .fps29_97Drop)
        XCTAssertEqual(TimecodeRate(text: "30 drop"), .fps30Drop)
        XCTAssertEqual(TimecodeRate(text: "23.98"), .fps23_976)
        XCTAssertEqual(TimecodeRate(text: "24.98"), .fps24_975)
        for bad in ["", "31", "29", "25df", "59.94df", "drop", "30.0"] { XCTAssertNil(TimecodeRate(text: bad), bad) }
    }

    func testTheSessionKeepsItsRateAndOldSessionsCountAtThirty() throws {
        var session = Session()
        XCTAssertEqual(session.timecodeRate, .fps30)
        // The default is not written: a session that never chose a rate is as it was.
        let plain = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(session)) as? [String: Any]
        XCTAssertNil(plain?["timecodeRate"])
        XCTAssertEqual(try JSONDecoder().decode(Session.self, from: try JSONEncoder().encode(session)).timecodeRate, .fps30)
        session.timecodeRate = .fps29_97Drop
        let data = try JSONEncoder().encode(session)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["timecodeRate"] as? String, "29.97df")
        XCTAssertEqual(try JSONDecoder().decode(Session.self, from: data), session)
        // Ardour's spelling is read; anything else is refused, naming the rates.
        var object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["timecodeRate"] = "29.97 drop"
        XCTAssertEqual(try JSONDecoder().decode(Session.self, from: try JSONSerialization.data(withJSONObject: object)).timecodeRate, .fps29_97Drop)
        object["timecodeRate"] = "31"
        XCTAssertThrowsError(try JSONDecoder().decode(Session.self, from: try JSONSerialization.data(withJSONObject: object))) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(context.debugDescription, "'31' is not a timecode rate (23.976, 24, 24.975, 25, 29.97, 29.97df, 30, 30df, 59.94, 60)")
        }
    }
}
