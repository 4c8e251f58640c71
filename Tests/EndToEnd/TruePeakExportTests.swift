import Foundation
import XCTest
import TapedeckDSP
import TapedeckIO

/// `export --normalize podcast`: −16 LUFS by an independent BS.1770 computation, and the
/// true peak at 32× oversampling (an independent windowed sinc, not the one the export uses)
/// at or under −1 dBTP, on a signal whose peaks fall between its samples.
final class TruePeakExportTests: XCTestCase {
    /// 12 s of a stepped 220 Hz tone with, every second, 5 ms of a tone just off a quarter of
    /// the sample rate whose samples straddle its crests: its true peak is up to 3 dB over
    /// its sample peak, where a 4× meter misses some of it.
    func makeSession() throws -> (folder: URL, session: String) {
        let folder = try Tapedeck.temporaryFolder(self)
        let frames = 12 * 48000
        var left = [Float](repeating: 0, count: frames), right = left
        for i in 0..<frames {
            let level = (i / 48000) % 3 == 0 ? 0.03 : 0.1
            var l = level * sin(2 * Double.pi * 220 * Double(i) / 48000), r = 0.7 * l
            if i % 48000 < 240 {
                let burst = 0.5 * sin(2 * Double.pi * 11987 * Double(i) / 48000 + 0.7)
                l += burst; r -= burst
            }
            left[i] = Float(l); right[i] = Float(r)
        }
        let source = folder.appendingPathComponent("source.wav").path
        try Signals.write([left, right], to: source)
        let session = folder.appendingPathComponent("show.tapedeck").path
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", session, source]).status, 0)
        return (folder, session)
    }

    /// The highest magnitude of `channels` at 32 points between each pair of samples, by a
    /// Blackman-windowed sinc of 2 × 256 taps. Only frames with a neighbour over −6 dBFS are
    /// interpolated: no point between two samples both under −6 dBFS reaches −1 dBTP on this
    /// signal (its overshoot is 3 dB at most), and that keeps a debug build quick.
    static func truePeak32(_ channels: [[Float]]) -> Double {
        let half = 256, factor = 32
        var table = [[Double]](repeating: [Double](repeating: 0, count: 2 * half), count: factor)
        for p in 1..<factor {
            for j in 0..<(2 * half) {
                let t = Double(p) / Double(factor) - Double(j - half + 1)
                let w = 0.42 + 0.5 * cos(Double.pi * t / Double(half)) + 0.08 * cos(2 * Double.pi * t / Double(half))
                table[p][j] = sin(Double.pi * t) / (Double.pi * t) * w
            }
        }
        var peak = 0.0
        for x in channels {
            for f in 0..<(x.count - 1) {
                peak = max(peak, Double(abs(x[f])))
                guard max(abs(x[f]), abs(x[f + 1])) > 0.5 else { continue }
                for p in 1..<factor {
                    var y = 0.0
                    for j in 0..<(2 * half) {
                        let k = f - half + 1 + j
                        if k >= 0 && k < x.count { y += Double(x[k]) * table[p][j] }
                    }
                    peak = max(peak, abs(y))
                }
            }
        }
        return 20 * log10(peak)
    }

    func testPodcastReadsMinus16LUFSWithThe32xPeakUnderMinus1dBTP() throws {
        let (folder, session) = try makeSession()
        let plain = folder.appendingPathComponent("plain.wav").path
        XCTAssertEqual(try Tapedeck.run(["export", session, "-o", plain, "--bits", "32f"]).status, 0)
        let before = try Signals.read(plain).channels
        let (sourceLoudness, _) = try LoudnessExportTests.measure(plain)
        // The gain to −16 LUFS alone would put the 32× peak well over the ceiling: the limiter must act.
        XCTAssertGreaterThan(TruePeakExportTests.truePeak32(before) + (-16 - sourceLoudness), -0.5)

        let out = folder.appendingPathComponent("episode.wav").path
        let r = try Tapedeck.run(["export", session, "-o", out, "--normalize", "podcast"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("→ -16.0 LUFS"), r.stdout)
        XCTAssertTrue(r.stdout.contains("true-peak limiter"), r.stdout)
        let (reference, _) = try LoudnessExportTests.measure(out)
        XCTAssertEqual(reference, -16, accuracy: 0.1)
        let peak = TruePeakExportTests.truePeak32(try Signals.read(out).channels)
        XCTAssertLessThanOrEqual(peak, -1.0)
        XCTAssertGreaterThan(peak, -1.5, "the limiter holds the peaks at the ceiling, not far under it")
    }

    func testNamedTargetsAndTheirCeilings() throws {
        let (folder, session) = try makeSession()
        let broadcast = folder.appendingPathComponent("broadcast.wav").path
        var r = try Tapedeck.run(["export", session, "-o", broadcast, "--normalize", "broadcast"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try LoudnessExportTests.measure(broadcast).reference, -23, accuracy: 0.1)
        let mono = folder.appendingPathComponent("mono.wav").path
        r = try Tapedeck.run(["export", session, "-o", mono, "--normalize", "podcast-mono", "--true-peak", "-2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let channels = try Signals.read(mono).channels
        XCTAssertEqual(channels.count, 1, "a mono target writes one channel")
        XCTAssertEqual(try LoudnessExportTests.measure(mono).reference, -19, accuracy: 0.1)
        XCTAssertLessThanOrEqual(TruePeakExportTests.truePeak32(channels), -2.0)
        r = try Tapedeck.run(["export", session, "-o", mono, "--normalize", "radio"])
        XCTAssertEqual(r.status, 64)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
    }
}
