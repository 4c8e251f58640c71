import Foundation
import XCTest

/// `tapedeck automation` as a script uses it: points added, listed, cleared, a lane's mode,
/// a lane out and back in as CSV; mistakes refused in one line with nothing changed; and the
/// lane heard in an export.
final class AutomationCommandTests: RoutingTestCase {
    private func importTone() throws {
        CLIRun.writeSine(to: path("tone.wav"), hertz: 441, amplitude: 0.5, frames: 96_000)
        try ok(["import", session, path("tone.wav")])
    }

    func testPointsAreAddedListedClearedAndTheModeSet() throws {
        try importTone()
        try ok(["automation", session, "tone", "gain", "add", "0", "-inf"])
        let said = try ok(["automation", session, "tone", "gain", "add", "1", "0", "--curve", "exponential"])
        XCTAssertTrue(said.contains("0.0 at 00:01.000"), said)
        let list = try ok(["automation", session, "tone", "gain"])
        XCTAssertTrue(list.contains("play, 2 points"), list)
        XCTAssertTrue(list.contains("00:00.000  -inf"), list)
        XCTAssertTrue(list.contains("00:01.000  0.0  exponential"), list)
        XCTAssertTrue(try ok(["automation", session, "1"]).contains("gain  play  2 points"))
        try ok(["automation", session, "tone", "gain", "mode", "off"])
        XCTAssertTrue(try ok(["automation", session, "tone", "gain"]).contains("off, 2 points"))
        XCTAssertTrue(try ok(["automation", session, "tone", "gain", "clear", "0.5-2"]).contains("1 point cleared"))
        XCTAssertTrue(try ok(["automation", session, "tone", "gain"]).contains("1 point"))
    }

    func testAMoveWithAutomationCarriesThePointsUnderTheRegionAndOnlyThose() throws {
        try importTone()  // 2 s from 0
        try ok(["automation", session, "tone", "gain", "add", "0.5", "-6"])
        try ok(["automation", session, "tone", "gain", "add", "1.5", "-12"])
        try ok(["automation", session, "tone", "gain", "add", "3", "-20"])  // past the region: stays
        try ok(["region", session, "tone", "1", "move", "1", "--with-automation"])
        let list = try ok(["automation", session, "tone", "gain"])
        XCTAssertTrue(list.contains("00:01.500  -6.0"), list)
        XCTAssertTrue(list.contains("00:02.500  -12.0"), list)
        XCTAssertTrue(list.contains("00:03.000  -20.0"), "a point past the region stays: \(list)")
        XCTAssertFalse(list.contains("00:00.500"), list)
        // Without the flag the lane stays where it is.
        try ok(["region", session, "tone", "1", "move", "0"])
        XCTAssertTrue(try ok(["automation", session, "tone", "gain"]).contains("00:01.500  -6.0"))
        try refused(["region", session, "tone", "1", "split", "0.5", "--with-automation"], "--with-automation is for move")
    }

    func testMistakesAreRefusedInOneLineAndChangeNothing() throws {
        try importTone()
        try ok(["automation", session, "tone", "gain", "add", "0", "-6"])
        let before = try sessionBytes()
        try refused(["automation", session, "tone", "gian", "add", "0", "-6"], "is not a parameter")
        try refused(["automation", session, "tone", "gain", "add", "0", "+40"], "is not a level")
        try refused(["automation", session, "tone", "pan", "add", "0", "L200"], "is not a pan")
        try refused(["automation", session, "tone", "gain", "mode", "raed"], "is not a mode")
        try refused(["automation", session, "tone", "send:Verb", "add", "0", "-6"], "has no send to Verb")
        try refused(["automation", session, "tone", "lpf.cutoff", "add", "0", "100"], "has no node lpf")
        try ok(["chain", session, "tone", "lpf:cutoff=4000"])
        let chained = try sessionBytes()
        try refused(["automation", session, "tone", "lpf.cutof", "add", "0", "100"], "did you mean 'cutoff'")
        try refused(["automation", session, "tone", "gain", "add", "-1", "0"], "negative")
        try refused(["automation", session, "tone", "gain", "add", "0", "0", "--curve", "cubic"], "linear or exponential")
        try refused(["automation", session, "nobody", "gain", "add", "0", "0"], "nobody")
        XCTAssertEqual(try sessionBytes(), chained)
        XCTAssertNotEqual(before, chained)
    }

    func testAControllerLearntToASendFollowsTheBusAndGoesWithIt() throws {
        try importTone()
        try ok(["bus", session, "add", "FX"])
        try ok(["send", session, "tone", "FX", "--level", "-12"])
        XCTAssertTrue(try ok(["learn", session, "--cc", "12", "--send", "tone:fx"]).contains("CC 12 → tone send to FX"))
        try refused(["learn", session, "--cc", "13", "--send", "tone:Verb"], "learn: tone has no send to 'Verb'")
        try refused(["learn", session, "--cc", "13", "--send", "tone"], "must be TRACK:BUS")
        XCTAssertTrue(try ok(["learn", session]).contains("1  CC 12 → tone send to FX"))
        try ok(["bus", session, "remove", "FX"])
        XCTAssertFalse(try ok(["learn", session]).contains("send to FX"), "a bus removed takes its sends' controllers with it")
    }

    func testALaneGoesOutAndBackInAsCSVToTheFrame() throws {
        try importTone()
        try ok(["automation", session, "tone", "pan", "add", "0", "L100"])
        try ok(["automation", session, "tone", "pan", "add", "90001f", "R50", "--curve", "exponential"])
        try ok(["automation", session, "tone", "pan", "add", "1.5", "C"])
        let csv = try ok(["automation", session, "tone", "pan", "csv"])
        XCTAssertEqual(csv.split(separator: "\n").first, "time,value,curve")
        try ok(["automation", session, "tone", "pan", "csv", "--output", path("pan.csv")])
        try ok(["automation", session, "tone", "pan", "clear"])
        XCTAssertTrue(try ok(["automation", session, "tone", "pan", "import", path("pan.csv")]).contains("3 points"))
        XCTAssertEqual(try ok(["automation", session, "tone", "pan", "csv"]), csv, "the same points, frame for frame")
        XCTAssertTrue(try ok(["info", session]).contains("automation: pan (play, 3 points)"), "info lists the strip's lanes")
        // A script's own CSV: frames, bars, a comment; a bad line named.
        try "time,value\n# from a script\n96000f,-1\n2.1.1,0.25\n".write(toFile: path("mine.csv"), atomically: true, encoding: .utf8)
        XCTAssertTrue(try ok(["automation", session, "tone", "pan", "import", path("mine.csv"), "--replace"]).contains("2 points"))
        try "0,L20\n1,sideways\n".write(toFile: path("bad.csv"), atomically: true, encoding: .utf8)
        try refused(["automation", session, "tone", "pan", "import", path("bad.csv")], "line 2")
    }

    /// The lane is heard: a fader lane from −∞ at 0 s to 0 dB at 1 s, exported.
    func testAFaderLaneIsHeardInTheExport() throws {
        try importTone()
        try ok(["automation", session, "tone", "gain", "add", "0", "-inf"])
        try ok(["automation", session, "tone", "gain", "add", "1", "0"])
        try ok(["export", session, "-o", path("out.wav"), "--bits", "32f"])
        let info = try ok(["info", path("out.wav")])
        XCTAssertFalse(info.isEmpty)
        // Early quiet, later full: the RMS of the first 10 ms is far below that of the last 10 ms.
        let samples = try CLIRun.readFloatWAV(path("out.wav"))
        func rms(_ r: Range<Int>) -> Double { (r.map { Double(samples[$0] * samples[$0]) }.reduce(0, +) / Double(r.count)).squareRoot() }
        XCTAssertLessThan(rms(0..<480), 0.01)
        XCTAssertGreaterThan(rms(60_000..<60_480), 0.2)
        XCTAssertEqual(rms(24_000..<24_480) / rms(60_000..<60_480), 0.5, accuracy: 0.02, "half way in amplitude at 0.5 s")
    }
}

extension CLIRun {
    /// The left channel of a 32-bit float stereo WAV, read by walking its chunks (the tests
    /// here link none of the program's libraries).
    static func readFloatWAV(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var at = 12
        while at + 8 <= data.count {
            let id = String(decoding: data[at..<at + 4], as: UTF8.self)
            let size = Int(data[at + 4]) | Int(data[at + 5]) << 8 | Int(data[at + 6]) << 16 | Int(data[at + 7]) << 24
            if id == "data" {
                let body = data[(at + 8)..<min(data.count, at + 8 + size)]
                let floats: [Float] = body.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                return stride(from: 0, to: floats.count - 1, by: 2).map { floats[$0] }
            }
            at += 8 + size + (size & 1)
        }
        throw CocoaError(.fileReadCorruptFile)
    }
}
