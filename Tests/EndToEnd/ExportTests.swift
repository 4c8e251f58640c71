import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `tapedeck new`, `import` and `export` run as a user runs them, checked on real files.
final class ExportTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func makeSession(_ files: [String], extra: [String] = []) throws -> SessionFolder {
        let result = try Tapedeck.run(["new", path("s")])
        XCTAssertEqual(result.status, 0, result.stderr)
        if !files.isEmpty {
            let r = try Tapedeck.run(["import", path("s.tapedeck")] + files + extra)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        return SessionFolder(path: path("s.tapedeck"))
    }

    private func export(_ args: [String] = [], to name: String = "mix.wav") throws -> [[Float]] {
        let r = try Tapedeck.run(["export", path("s.tapedeck"), "-o", path(name)] + args)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("peak"), "summary line: \(r.stdout)")
        return try Signals.read(path(name)).channels
    }

    func testASixteenBitStereoTrackAtUnityExportsBitIdenticalToItsSource() throws {
        let left = Signals.noise16(frames: 48000, seed: 1), right = Signals.noise16(frames: 48000, seed: 2)
        try Signals.write([left, right], to: path("src.wav"), encoding: .int16)
        _ = try makeSession([path("src.wav")])
        let mix = try export(["--bits", "16"])
        XCTAssertEqual(mix.count, 2)
        XCTAssertEqual(mix[0].count, 48000)
        XCTAssertEqual(mix[0], left, "left channel differs")
        XCTAssertEqual(mix[1], right, "right channel differs")
    }

    func testARegionPlacedAtFrameNStartsAtExactlyFrameNOfTheMix() throws {
        var click = [Float](repeating: 0, count: 1000)
        click[0] = 0.5
        try Signals.write([click], to: path("click.wav"))
        _ = try makeSession([path("click.wav")], extra: ["--at", "12345f"])
        let mix = try export(["--bits", "32f", "--range", "0-1"])
        let first = mix[0].firstIndex { $0 != 0 }
        XCTAssertEqual(first, 12345)
        XCTAssertEqual(mix[0][12345], 0.5 * Float(0.5.squareRoot()), accuracy: 1e-6, "mono at centre is -3 dB")
    }

    func testMonoPanFollowsTheConstantPowerLawAndTrackGainIsInDecibels() throws {
        try Signals.write([Signals.sine(hertz: 1000, amplitude: 0.5, frames: 48000)], to: path("tone.wav"))
        let folder = try makeSession([path("tone.wav")])
        let cases: [(pan: Double, gain: Double, left: Double, right: Double)] = [
            (0, 0, -3.01, -3.01),
            (-1, 0, 0, -.infinity),
            (1, -6, -.infinity, -6),
            (0.5, 0, 20 * log10(cos(0.75 * .pi / 2)), 20 * log10(sin(0.75 * .pi / 2))),
        ]
        for c in cases {
            var s = try folder.load()
            s.tracks[0].pan = c.pan
            s.tracks[0].gainDecibels = c.gain
            try folder.save(s)
            let mix = try export(["--bits", "32f"])
            let reference = Signals.rms(Signals.sine(hertz: 1000, amplitude: 0.5, frames: 48000), 0..<48000)
            for (channel, expected) in [(0, c.left), (1, c.right)] {
                let level = Signals.rms(mix[channel], 0..<48000)
                if expected.isInfinite {
                    XCTAssertLessThan(level, 1e-6, "pan \(c.pan) channel \(channel) should be silent")
                } else {
                    XCTAssertEqual(20 * log10(level / reference), expected, accuracy: 0.05, "pan \(c.pan) gain \(c.gain) channel \(channel)")
                }
            }
        }
    }

    func testMuteAndSoloDecideWhichTracksAreHeard() throws {
        try Signals.write([Signals.sine(hertz: 500, amplitude: 0.25, frames: 24000)], to: path("a.wav"))
        try Signals.write([Signals.sine(hertz: 500, amplitude: 0.5, frames: 24000)], to: path("b.wav"))
        let folder = try makeSession([path("a.wav"), path("b.wav")])
        func level() throws -> Double { Signals.rms(try export(["--bits", "32f"])[0], 0..<24000) }
        let a = Signals.rms(Signals.sine(hertz: 500, amplitude: 0.25 * Float(0.5.squareRoot()), frames: 24000), 0..<24000)
        XCTAssertEqual(try level(), 3 * a, accuracy: 1e-4, "both tracks sum in phase")
        var s = try folder.load()
        s.tracks[1].mute = true
        try folder.save(s)
        XCTAssertEqual(try level(), a, accuracy: 1e-4, "muted b leaves a")
        s.tracks[1].mute = false
        s.tracks[1].solo = true
        try folder.save(s)
        XCTAssertEqual(try level(), 2 * a, accuracy: 1e-4, "solo b silences a")
    }

    func testRegionFadesAndGainShapeTheRegion() throws {
        try Signals.write([[Float](repeating: 0.5, count: 10000)], to: path("dc.wav"))
        let folder = try makeSession([path("dc.wav")])
        var s = try folder.load()
        s.tracks[0].pan = -1
        s.tracks[0].regions[0].fadeInFrames = 1000
        s.tracks[0].regions[0].fadeOutFrames = 2000
        s.tracks[0].regions[0].gainDecibels = -6.0206
        try folder.save(s)
        let mix = try export(["--bits", "32f"])[0]
        XCTAssertEqual(mix[0], 0, accuracy: 1e-6)
        XCTAssertEqual(mix[500], 0.125, accuracy: 1e-4, "halfway through the fade-in")
        XCTAssertEqual(mix[5000], 0.25, accuracy: 1e-4, "-6 dB of 0.5")
        XCTAssertEqual(mix[9000], 0.125, accuracy: 1e-4, "halfway through the fade-out")
    }

    func testStemsAreWrittenPerTrackAndSumToTheMix() throws {
        try Signals.write([Signals.sine(hertz: 300, amplitude: 0.3, frames: 9600)], to: path("x.wav"))
        try Signals.write([Signals.sine(hertz: 700, amplitude: 0.3, frames: 9600)], to: path("y.wav"))
        _ = try makeSession([path("x.wav"), path("y.wav")])
        let mix = try export(["--bits", "32f", "--stems", path("stems")])
        let names = try FileManager.default.contentsOfDirectory(atPath: path("stems")).sorted()
        XCTAssertEqual(names, ["01-x.wav", "02-y.wav"])
        let a = try Signals.read(path("stems/01-x.wav")).channels[0]
        let b = try Signals.read(path("stems/02-y.wav")).channels[0]
        for i in stride(from: 0, to: 9600, by: 97) { XCTAssertEqual(a[i] + b[i], mix[0][i], accuracy: 1e-6) }
    }

    func testFlacExportAtTwentyFourBitsIsReadable() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 48000)], to: path("t.wav"))
        _ = try makeSession([path("t.wav")])
        let mix = try export(["--bits", "24"], to: "mix.flac")
        XCTAssertEqual(mix[0].count, 48000)
        let info = try Tapedeck.run(["info", path("mix.flac")])
        XCTAssertTrue(info.stdout.contains("FLAC"), info.stdout)
        XCTAssertTrue(info.stdout.contains("24"), info.stdout)
    }

    func testExportRefusesFlacAtThirtyTwoBitFloatAndLeavesNoFile() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 4800)], to: path("t.wav"))
        _ = try makeSession([path("t.wav")])
        let r = try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("m.flac"), "--bits", "32f"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("FLAC"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("m.flac")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("m.flac.partial")))
    }
}
