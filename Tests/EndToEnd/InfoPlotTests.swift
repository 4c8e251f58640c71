import Foundation
import XCTest

/// `tapedeck info FILE`: loudness beside the sample peak, and the two plots, in Unicode blocks
/// or, outside a UTF-8 locale, in ASCII.
final class InfoPlotTests: XCTestCase {
    /// 4 s of silence, then 4 s of a 1 kHz sine at −12 dBFS, stereo.
    func makeFile() throws -> (path: String, reference: Double) {
        let folder = try Tapedeck.temporaryFolder(self)
        let half = 4 * 48000
        let tone = Signals.sine(hertz: 1000, amplitude: Float(pow(10, -12.0 / 20)), frames: half)
        let channel = [Float](repeating: 0, count: half) + tone
        let path = folder.appendingPathComponent("half.wav").path
        try Signals.write([channel, channel], to: path)
        return (path, BS1770.integratedLoudness([channel, channel]))
    }

    func field(_ name: String, in text: String) -> String {
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.map(String.init) ?? ""
        return String(line.dropFirst(10))
    }

    func testInfoPrintsLoudnessAndTruePeakBesideTheSamplePeak() throws {
        let (path, reference) = try makeFile()
        let r = try Tapedeck.run(["info", path, "--width", "52"], environment: ["LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(field("peak", in: r.stdout), "-12.0 -12.0 dBFS sample peak, -12.0 dBTP true peak")
        let loudness = field("loudness", in: r.stdout)
        let integrated = Double(loudness.split(separator: " ").first ?? "") ?? 0
        XCTAssertEqual(integrated, reference, accuracy: 0.1, loudness)
        // A stereo 1 kHz sine reads its level in LUFS; the gating blocks across the tone's
        // onset pull the integrated figure a little under it.
        XCTAssertEqual(integrated, -12, accuracy: 0.3)
        XCTAssertTrue(loudness.hasSuffix("LU range"), loudness)
    }

    func testTheWaveformAndLevelPlotShowSilenceThenTheTone() throws {
        let (path, _) = try makeFile()
        let r = try Tapedeck.run(["info", path, "--width", "52"], environment: ["LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let wave = Array(field("waveform", in: r.stdout))
        XCTAssertEqual(wave.count, 40, "52 columns less the 12 of the labels")
        XCTAssertTrue(wave[..<20].allSatisfy { $0 == " " }, String(wave))
        // −12 dBFS on a −48…0 dB scale of 8 steps: the sixth glyph.
        XCTAssertTrue(wave[20...].allSatisfy { $0 == "▆" }, String(wave))
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let plot = lines.filter { $0.contains("┤") }
        XCTAssertEqual(plot.count, 5)
        for row in plot {
            let bars = Array(row.split(separator: "┤", maxSplits: 1)[1])
            XCTAssertEqual(bars.count, 40)
            // The 400 ms window reaches one column (0.2 s each) past the start of the tone.
            XCTAssertTrue(bars[..<20].allSatisfy { $0 == " " }, row)
            XCTAssertTrue(bars[21...].allSatisfy { $0 == "█" || row == plot[0] }, row)
        }
        XCTAssertTrue(plot[0].hasPrefix("     -6 ┤") || plot[0].contains("-6 ┤"), "the top row ends at the next 6 LU step: \(plot[0])")
    }

    func testOutsideAUTF8LocaleThePlotsAreASCII() throws {
        let (path, _) = try makeFile()
        let r = try Tapedeck.run(["info", path, "--width", "52"], environment: ["LANG": "C", "LC_ALL": "C"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.unicodeScalars.allSatisfy(\.isASCII), r.stdout)
        let wave = Array(field("waveform", in: r.stdout))
        XCTAssertTrue(wave[..<20].allSatisfy { $0 == " " } && wave[20...].allSatisfy { $0 != " " }, String(wave))
        XCTAssertEqual(r.stdout.split(separator: "\n").filter { $0.contains(" |") }.count, 5)
    }

    func testABadWidthIsAUsageError() throws {
        let (path, _) = try makeFile()
        for width in ["0", "-5", "wide", "100000"] {
            let r = try Tapedeck.run(["info", path, "--width", width])
            XCTAssertEqual(r.status, 64, r.stderr)
        }
    }
}
