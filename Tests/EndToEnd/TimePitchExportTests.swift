import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `export --speed/--mode/--pitch` and per-region rates, measured on the rendered files.
final class TimePitchExportTests: XCTestCase {
    var dir: URL!
    let rate = 48000
    /// The block the tolerance on length is stated in.
    let blockFrames = 4096

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 2 * rate)], to: path("a440.wav"))
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", path("s.tapedeck"), path("a440.wav")]).status, 0)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func export(_ args: [String]) throws -> [Float] {
        let r = try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("out.wav"), "--bits", "32f"] + args, timeout: 240)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try Signals.read(path("out.wav")).channels[0]
    }

    /// Frequency over the middle of the signal, away from onset and tail.
    private func middleFrequency(_ x: [Float]) -> Double {
        Frequency.estimate(x, sampleRate: rate, range: (x.count / 4)..<(3 * x.count / 4))
    }

    func testStretchAtHalfSpeedKeepsPitchAndDoublesTheLength() throws {
        let out = try export(["--speed", "0.5"])
        XCTAssertEqual(Double(out.count), Double(4 * rate), accuracy: Double(blockFrames))
        XCTAssertEqual(middleFrequency(out), 440, accuracy: 0.5)
    }

    func testStretchAtDoubleSpeedKeepsPitchAndHalvesTheLength() throws {
        let out = try export(["--speed", "2", "--mode", "stretch"])
        XCTAssertEqual(Double(out.count), Double(rate), accuracy: Double(blockFrames))
        XCTAssertEqual(middleFrequency(out), 440, accuracy: 0.5)
    }

    func testVarispeedAtDoubleSpeedDoublesThePitchAndHalvesTheLength() throws {
        let out = try export(["--speed", "2x", "--mode", "varispeed"])
        XCTAssertEqual(Double(out.count), Double(rate), accuracy: Double(blockFrames))
        XCTAssertEqual(middleFrequency(out), 880, accuracy: 0.5)
    }

    func testTwelveSemitonesUpDoublesThePitchAtTheSameLength() throws {
        let out = try export(["--pitch", "12"])
        XCTAssertEqual(Double(out.count), Double(2 * rate), accuracy: Double(blockFrames))
        XCTAssertEqual(middleFrequency(out), 880, accuracy: 0.5)
    }

    func testARegionScaledToHalfRateLastsTwiceAsLongAtThePitchItHad() throws {
        let folder = SessionFolder(path: path("s.tapedeck"))
        var s = try folder.load()
        s.tracks[0].regions[0].rate = 0.5
        s.tracks[0].regions[0].lengthFrames = Int64(4 * rate)
        try folder.save(s)
        let out = try export([])
        XCTAssertEqual(out.count, 4 * rate, "the region's timeline length sets the export length")
        XCTAssertEqual(middleFrequency(out), 440, accuracy: 0.5)
        let tail = Signals.rms(out, (3 * rate)..<(3 * rate + rate / 2))
        XCTAssertGreaterThan(tail, 0.2, "the stretched region still sounds near its end")
    }

    func testAStretchedRegionIsRenderedOnceAndReusedUntilItChanges() throws {
        let folder = SessionFolder(path: path("s.tapedeck"))
        var s = try folder.load()
        s.tracks[0].regions[0].rate = 2
        s.tracks[0].regions[0].lengthFrames = Int64(rate / 2)
        try folder.save(s)
        _ = try export([])
        let cache = path("s.tapedeck/cache")
        let first = try FileManager.default.contentsOfDirectory(atPath: cache)
        XCTAssertEqual(first.count, 1, "\(first)")
        let stamp = try FileManager.default.attributesOfItem(atPath: cache + "/" + first[0])[.modificationDate] as? Date
        let out = try export([])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cache), first, "no second render")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: cache + "/" + first[0])[.modificationDate] as? Date, stamp)
        XCTAssertEqual(middleFrequency(out), 440, accuracy: 0.5)
        s.tracks[0].regions[0].rate = 1.5
        s.tracks[0].regions[0].lengthFrames = Int64(rate)
        try folder.save(s)
        _ = try export([])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cache).count, 2, "an edited region renders anew")
    }

    func testUnusableSpeedsAreClearErrors() throws {
        let cases = [("0", "never finish"), ("-1", "negative"), ("33", "above the fastest"), ("nan", "NaN"),
                     ("1/64", "below the slowest"), ("fast", "not a speed")]
        for (speed, words) in cases {
            let r = try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("x.wav"), "--speed", speed])
            XCTAssertEqual(r.status, 64, "speed \(speed): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(words), "speed \(speed): \(r.stderr)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1)
        }
        let r = try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("x.wav"), "--mode", "tape"])
        XCTAssertEqual(r.status, 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.wav")))
    }
}
