import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Issue 43, item 4: `export --tail SECONDS|auto` renders past the session's end so a delay's
/// echoes and a reverb's decay are not cut: `auto` until every strip has fallen below
/// −90 dBFS (and stayed there), within a bound; stems get the same length.
final class ExportTailTests: XCTestCase {
    private var dir = ""

    /// A session whose one track is a 0.2 s tone burst at 1 s, through `chain`: it ends at 1.2 s.
    private func session(chain: String) throws -> String {
        dir = try Tapedeck.temporaryFolder(self).path
        var left = [Float](repeating: 0, count: 72_000)
        for i in 48_000..<57_600 { left[i] = 0.5 * Float(sin(2 * Double.pi * 440 * Double(i) / 48000)) }
        try Signals.write([left, left], to: dir + "/burst.wav")
        let path = dir + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", path]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", path, dir + "/burst.wav"]).status, 0)
        let folder = SessionFolder(path: path)
        var s = try folder.load()
        s.tracks[0].playbackChain = chain
        try folder.save(s)
        return path
    }

    private func levels(_ file: String) throws -> (frames: Int, peakAfter: (Int) -> Double) {
        let channels = try Signals.read(file).channels
        return (channels[0].count, { from in
            let m = channels.map { $0[min(from, $0.count)...].map { abs($0) }.max() ?? 0 }.max() ?? 0
            return 20 * log10(Double(max(m, 1e-12)))
        })
    }

    func testAutoRendersADelaysEchoesUntilTheyFallBelowMinus90dBFS() throws {
        let s = try session(chain: "delay:time=200:feedback=0.5:mix=0.5")
        XCTAssertEqual(try Tapedeck.run(["export", s, "-o", dir + "/cut.wav"]).status, 0)
        let cut = try levels(dir + "/cut.wav")
        XCTAssertEqual(cut.frames, 72_000, "without --tail the export ends with the session")
        XCTAssertGreaterThan(cut.peakAfter(71_000), -40, "and cuts the echoes")

        let r = try Tapedeck.run(["export", s, "-o", dir + "/tail.wav", "--tail", "auto", "--stems", dir + "/stems"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let tail = try levels(dir + "/tail.wav")
        // Echoes halve every 0.2 s: from about −9 dBFS to −90 dBFS takes some 3 s.
        XCTAssertGreaterThan(tail.frames, 72_000 + 2 * 48_000, "the echoes rendered past the end")
        XCTAssertLessThan(tail.frames, 72_000 + 15 * 48_000, "and stopped once they died away")
        XCTAssertGreaterThan(tail.peakAfter(tail.frames - 30_000), -96, "it ends where they fall silent, not long after")
        XCTAssertLessThan(tail.peakAfter(tail.frames - 100), -90, "the last frames are under -90 dBFS")
        // The echoes go on after the session's end, loud.
        XCTAssertGreaterThan(tail.peakAfter(72_000), -30)
        let stems = try FileManager.default.contentsOfDirectory(atPath: dir + "/stems")
        XCTAssertEqual(stems.count, 1)
        XCTAssertEqual(try levels(dir + "/stems/" + stems[0]).frames, tail.frames, "the stem is as long as the mix")
    }

    func testAutoRendersAReverbsDecayAndSecondsAreExact() throws {
        let s = try session(chain: "reverb:size=0.9:damping=0.2:mix=0.6")
        let r = try Tapedeck.run(["export", s, "-o", dir + "/room.wav", "--tail", "auto"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let room = try levels(dir + "/room.wav")
        XCTAssertGreaterThan(room.frames, 72_000 + 24_000, "the decay goes on past the end")
        XCTAssertLessThanOrEqual(room.frames, 72_000 + 60 * 48_000, "within the bound")
        XCTAssertLessThan(room.peakAfter(room.frames - 100), -90)
        XCTAssertEqual(try Tapedeck.run(["export", s, "-o", dir + "/two.wav", "--tail", "2"]).status, 0)
        XCTAssertEqual(try levels(dir + "/two.wav").frames, 72_000 + 96_000, "--tail 2 adds two seconds")
        let bad = try Tapedeck.run(["export", s, "-o", dir + "/x.wav", "--tail", "forever"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)
    }
}
