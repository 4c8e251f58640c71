import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Chains on tracks and the master, through `tapedeck chain` and `export --fx`.
final class ChainExportTests: XCTestCase {
    var dir: URL!
    let rate = 48000

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func importFile(_ channels: [[Float]], _ name: String, at: String = "0") throws {
        try Signals.write(channels, to: path(name))
        let r = try Tapedeck.run(["import", path("s.tapedeck"), path(name), "--at", at])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    private func export(_ args: [String] = []) throws -> [[Float]] {
        let r = try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("out.wav"), "--bits", "32f"] + args)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try Signals.read(path("out.wav")).channels
    }

    func testMasterFxGainLowersTheWholeMixByItsDecibels() throws {
        try importFile([Signals.sine(hertz: 1000, amplitude: 0.5, frames: rate)], "t.wav")
        let dry = Signals.rms(try export()[0], 4800..<43200)
        let wet = Signals.rms(try export(["--fx", "gain:-6"])[0], 4800..<43200)
        XCTAssertEqual(20 * log10(wet / dry), -6, accuracy: 0.05)
    }

    func testATrackPlaybackChainFiltersOnlyItsTrack() throws {
        try importFile([Signals.sine(hertz: 100, amplitude: 0.5, frames: rate)], "low.wav")
        try importFile([Signals.sine(hertz: 5000, amplitude: 0.5, frames: rate)], "high.wav")
        let set = try Tapedeck.run(["chain", path("s.tapedeck"), "1", "hpf:cutoff=2000"])
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertTrue(set.stdout.contains("hpf:cutoff=2000"), set.stdout)
        let shown = try Tapedeck.run(["chain", path("s.tapedeck"), "low"])
        XCTAssertTrue(shown.stdout.contains("hpf"), shown.stdout)
        let mix = try export()[0]
        // Only the 5 kHz track is left: the level equals that track alone (mono at -3 dB).
        let alone = 0.5 / 2.0.squareRoot() / 2.0.squareRoot()
        XCTAssertEqual(Signals.rms(mix, 9600..<43200), alone, accuracy: alone * 0.03)
    }

    func testALookAheadLimiterOnTheMasterKeepsAClickOnItsFrame() throws {
        var click = [Float](repeating: 0, count: 4800)
        click[0] = 0.25
        try importFile([click], "click.wav", at: "24000f")
        XCTAssertEqual(try Tapedeck.run(["chain", path("s.tapedeck"), "master", "limiter:ceiling=-1"]).status, 0)
        let mix = try export(["--range", "0-1"])[0]
        let peakFrame = mix.indices.max { abs(mix[$0]) < abs(mix[$1]) }
        XCTAssertEqual(peakFrame, 24000, "latency compensated to the frame")
        XCTAssertEqual(mix.count, rate)
    }

    func testALookAheadLimiterOnATrackKeepsAClickOnItsFrame() throws {
        var click = [Float](repeating: 0, count: 4800)
        click[0] = 0.25
        try importFile([click], "click.wav", at: "30000f")
        XCTAssertEqual(try Tapedeck.run(["chain", path("s.tapedeck"), "1", "limiter"]).status, 0)
        let mix = try export(["--range", "0-1"])[0]
        let peakFrame = mix.indices.max { abs(mix[$0]) < abs(mix[$1]) }
        XCTAssertEqual(peakFrame, 30000)
    }

    func testParallelRenderingGivesTheSameBitsAsOneThread() throws {
        for i in 0..<5 {
            try importFile([Signals.noise16(frames: rate, seed: UInt64(i + 1), amplitude: 0.2)], "n\(i).wav")
        }
        XCTAssertEqual(try Tapedeck.run(["chain", path("s.tapedeck"), "2", "delay:time=10ms:feedback=0.3,lpf:3000"]).status, 0)
        let one = try export(["--threads", "1"])
        let two = try export(["--threads", "2"])
        XCTAssertEqual(one, two)
    }

    func testABadChainPointsAtThePlaceAndChangesNothing() throws {
        try importFile([Signals.sine(hertz: 1000, amplitude: 0.5, frames: 4800)], "t.wav")
        let before = try String(contentsOfFile: path("s.tapedeck/session.json"), encoding: .utf8)
        let r = try Tapedeck.run(["chain", path("s.tapedeck"), "1", "hpf:80,flanger:3"])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.contains("unknown node 'flanger'"), r.stderr)
        XCTAssertTrue(r.stderr.contains("^"), "a caret under the place: \(r.stderr)")
        XCTAssertEqual(try String(contentsOfFile: path("s.tapedeck/session.json"), encoding: .utf8), before)
        let fx = try Tapedeck.run(["export", path("s.tapedeck"), "-o", path("x.wav"), "--fx", "gain:+99"])
        XCTAssertEqual(fx.status, 64, fx.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.wav")))
    }

    /// A plugin URI (or any chain text) carrying terminal escapes is refused before it is
    /// stored, and what is printed about it holds no raw control character.
    func testAChainWithTerminalEscapesIsRefusedAndNothingRawIsPrinted() throws {
        try importFile([Signals.sine(hertz: 1000, amplitude: 0.5, frames: 4800)], "t.wav")
        let before = try String(contentsOfFile: path("s.tapedeck/session.json"), encoding: .utf8)
        for hostile in ["lv2:http://x\u{1B}]0;PWNED\u{07}\u{1B}[2J/y", "sampler:file=<a\u{202E}vaw.wav>", "gain:-3\u{07}"] {
            let r = try Tapedeck.run(["chain", path("s.tapedeck"), "1", hostile])
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertTrue(r.stderr.contains("a chain cannot hold control characters"), r.stderr)
            let raw = (r.stdout + r.stderr).unicodeScalars.filter { $0.properties.generalCategory == .control && $0 != "\n" }
            XCTAssertTrue(raw.isEmpty, "raw control characters printed: \(raw.map { $0.value })")
            XCTAssertFalse((r.stdout + r.stderr).unicodeScalars.contains("\u{202E}"), "a bidi override printed")
            XCTAssertEqual(try String(contentsOfFile: path("s.tapedeck/session.json"), encoding: .utf8), before, "nothing stored")
        }
    }

    func testNodesListsEveryNodeAndShowsOneWithItsParameters() throws {
        let all = try Tapedeck.run(["nodes"])
        XCTAssertEqual(all.status, 0)
        for name in ["gain", "hpf", "lpf", "comp", "limiter", "delay", "reverb", "click", "sampler"] {
            XCTAssertTrue(all.stdout.contains(name), "\(name) in: \(all.stdout)")
        }
        let one = try Tapedeck.run(["nodes", "delay"])
        XCTAssertTrue(one.stdout.contains("feedback"), one.stdout)
        let bad = try Tapedeck.run(["nodes", "nope"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("unknown node 'nope'"), bad.stderr)
    }
}
