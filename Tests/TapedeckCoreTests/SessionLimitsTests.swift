import Foundation
import XCTest
@testable import TapedeckCore

/// Values a session file can hold that broke Tapedeck later (issue 13) are refused on load,
/// naming the field and the limit.
final class SessionLimitsTests: XCTestCase {
    private func session(_ change: (inout Session) -> Void) -> Session {
        var s = Session()
        s.tracks = [Track(name: "a", regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: 100)])]
        change(&s)
        return s
    }

    private func assertProblem(_ change: (inout Session) -> Void, mentions: [String], file: StaticString = #filePath, line: UInt = #line) {
        let problem = SessionValidator.problem(in: session(change))
        XCTAssertNotNil(problem, file: file, line: line)
        for m in mentions { XCTAssertTrue(problem?.contains(m) ?? false, "'\(m)' in \(problem ?? "nil")", file: file, line: line) }
    }

    func testAValidSessionPasses() {
        XCTAssertNil(SessionValidator.problem(in: session { _ in }))
    }

    func testPositionsPastTheTimelineAreRefusedBeforeAnySumOverflows() {
        assertProblem({ $0.tracks[0].regions[0].timelineStartFrame = 9_000_000_000_000_000_000 },
                      mentions: ["tracks[0].regions[0].timelineStartFrame", "2^40"])
        assertProblem({ $0.tracks[0].regions[0].lengthFrames = Int64.max }, mentions: ["tracks[0].regions[0].lengthFrames", "2^40"])
        assertProblem({ $0.tracks[0].regions[0].timelineStartFrame = SessionLimits.maximumTimelineFrames - 10 },
                      mentions: ["lengthFrames", "ends at frame"])
        assertProblem({ $0.tracks[0].regions[0].sourceOffsetFrame = Int64.max }, mentions: ["sourceOffsetFrame"])
        assertProblem({ $0.markers = [Marker(name: "x", frame: Int64.max)] }, mentions: ["markers[0].frame"])
        assertProblem({ $0.loopRange = FrameRange(startFrame: 0, endFrame: Int64.max) }, mentions: ["loopRange.endFrame"])
    }

    func testGainsCountsAndNamesHaveLimits() {
        assertProblem({ $0.tracks[0].gainDecibels = -1e308 }, mentions: ["tracks[0].gainDecibels", "-200"])
        assertProblem({ $0.tracks[0].regions[0].gainDecibels = 30 }, mentions: ["regions[0].gainDecibels", "+24"])
        assertProblem({ $0.tracks = Array(repeating: Track(name: "t"), count: 1025) }, mentions: ["tracks", "1024"])
        assertProblem({ $0.tracks[0].name = String(repeating: "n", count: 1001) }, mentions: ["tracks[0].name", "1000"])
        assertProblem({ $0.tracks[0].regions[0].takeGroup = Int.max; $0.tracks[0].regions[0].takeNumber = 1 }, mentions: ["takeGroup"])
        assertProblem({ $0.tracks[0].activeTakes = [TakeChoice(group: 0, take: 1)] }, mentions: ["activeTakes[0].group"])
    }

    func testRegionFilesMustStayInsideTheSessionFolder() {
        for (file, words) in [("../secret.wav", [".."]), ("/etc/passwd", ["absolute"]), ("audio/../../x.wav", [".."]),
                              (".", ["session folder"]), ("", ["empty"])] {
            assertProblem({ $0.tracks[0].regions[0].file = file }, mentions: ["tracks[0].regions[0].file"] + words)
        }
        XCTAssertNil(SessionValidator.filePathProblem("audio/take-1.wav"))
        XCTAssertNil(SessionValidator.filePathProblem("audio/sub/x..y.wav"))
    }

    func testEscapedTextShowsControlAndBidiCharactersAndKeepsTheRest() {
        XCTAssertEqual(SafeText.escaped("take\u{1B}[2J\n.wav"), "take\\u001B[2J\\n.wav")
        XCTAssertEqual(SafeText.escaped("evil\u{202E}vaw.exe"), "evil\\u202Evaw.exe")
        XCTAssertEqual(SafeText.escaped("\u{9B}31m\u{7F}\t"), "\\u009B31m\\u007F\\t")
        XCTAssertEqual(SafeText.escaped("Grüße, 日本, 🎸 take"), "Grüße, 日本, 🎸 take")
        // The escapes are JSON escapes: escaped text inside a JSON string stays valid JSON.
        let json = "{\"n\":\"\(SafeText.escaped("a\u{1B}b\u{202E}"))\"}"
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
        XCTAssertEqual(object?["n"], "a\u{1B}b\u{202E}")
    }

    func testNonFiniteSamplesBecomeSilenceAndAreCounted() {
        var samples: [Float] = [0.5, .nan, -0.25, .infinity, -.infinity, 1]
        let replaced = samples.withUnsafeMutableBufferPointer { NonFiniteSamples.replace($0.baseAddress!, count: $0.count) }
        XCTAssertEqual(replaced, 3)
        XCTAssertEqual(samples, [0.5, 0, -0.25, 0, 0, 1])
        var clean: [Float] = [0.1, -1e30, 3e38]
        XCTAssertEqual(clean.withUnsafeMutableBufferPointer { NonFiniteSamples.replace($0.baseAddress!, count: $0.count) }, 0)
    }
}
