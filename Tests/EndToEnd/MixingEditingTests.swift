import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `track`, `region`, `marker`, `loop`, `punch` and the export they shape, run as a user runs
/// them: edits land to the frame, overlapping audio replaces what it lies over, clipping is
/// reported, and mistakes get one line and exit 64.
final class MixingEditingTests: XCTestCase {
    var dir: URL!
    var session: String { dir.appendingPathComponent("s.tapedeck").path }

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
        XCTAssertEqual(try Tapedeck.run(["new", dir.appendingPathComponent("s").path]).status, 0)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    @discardableResult
    private func ok(_ args: [String], environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let r = try Tapedeck.run(args, environment: environment)
        XCTAssertEqual(r.status, 0, "tapedeck \(args.joined(separator: " ")): \(r.stderr)", file: file, line: line)
        return r.stdout
    }

    private func refused(_ args: [String], _ needle: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try Tapedeck.run(args)
        XCTAssertEqual(r.status, 64, "tapedeck \(args.joined(separator: " ")) should be a usage mistake: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains(needle), "'\(needle)' missing from: \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "one line: \(r.stderr)", file: file, line: line)
    }

    /// Exports the session as 32-bit float and returns the left channel.
    private func exportLeft(_ extra: [String] = []) throws -> [Float] {
        try ok(["export", session, "-o", path("mix.wav"), "--bits", "32f"] + extra)
        return try Signals.read(path("mix.wav")).channels[0]
    }

    func testMovedTrimmedAndSplitRegionsExportToTheFrame() throws {
        let source = Signals.noise16(frames: 96000, seed: 7)
        try Signals.write([source], to: path("noise.wav"))
        try ok(["import", session, path("noise.wav")])
        // Hard left: the left channel carries the track at unity.
        try ok(["track", session, "NOISE", "--pan", "L100"])
        try ok(["region", session, "noise", "1", "move", "12345f"])
        var mix = try exportLeft()
        XCTAssertEqual(mix.firstIndex { $0 != 0 }, 12345)
        XCTAssertEqual(Array(mix[12345..<(12345 + 96000)]), source, "moved, every sample in place")

        try ok(["region", session, "noise", "1", "trim", "--start", "\(12345 + 24000)f", "--end", "\(12345 + 72000)f"])
        mix = try exportLeft(["--range", "0-\(12345 + 96000)f"])
        XCTAssertTrue(mix[0..<(12345 + 24000)].allSatisfy { $0 == 0 }, "nothing before the trimmed start")
        XCTAssertEqual(Array(mix[(12345 + 24000)..<(12345 + 72000)]), Array(source[24000..<72000]), "the trimmed span plays its own audio")
        XCTAssertTrue(mix[(12345 + 72000)...].allSatisfy { $0 == 0 }, "nothing after the trimmed end")

        let out = try ok(["region", session, "noise", "1", "split", "\(12345 + 48000)f"])
        XCTAssertTrue(out.hasPrefix("region 2 #") && out.contains(" of track 1: "), out)
        try ok(["region", session, "noise", "2", "move", "200000f"])
        mix = try exportLeft()
        XCTAssertEqual(Array(mix[(12345 + 24000)..<(12345 + 48000)]), Array(source[24000..<48000]), "the left part stays")
        XCTAssertTrue(mix[(12345 + 48000)..<200000].allSatisfy { $0 == 0 }, "the gap the move left")
        XCTAssertEqual(Array(mix[200000..<224000]), Array(source[48000..<72000]), "the right part moved with its audio")
    }

    func testAnImportedFileAndARecordedTakeReplaceWhatTheyLieOverNotSumWithIt() throws {
        try Signals.write([Signals.sine(hertz: 300, amplitude: 0.5, frames: 96000)], to: path("bed.wav"))
        try Signals.write([Signals.sine(hertz: 700, amplitude: 0.5, frames: 24000)], to: path("patch.wav"))
        try ok(["import", session, path("bed.wav")])
        try ok(["track", session, "bed", "--pan", "L100"])
        try ok(["import", session, path("patch.wav"), "--track", "BED", "--at", "0.25"])
        var mix = try exportLeft()
        XCTAssertEqual(Frequency.estimate(mix, sampleRate: 48000, range: 14000..<34000), 700, accuracy: 3, "the patch plays")
        XCTAssertEqual(Signals.rms(mix, 14000..<34000), 0.5 / 2.0.squareRoot(), accuracy: 0.005, "alone: replaced, not summed")
        XCTAssertEqual(Frequency.estimate(mix, sampleRate: 48000, range: 40000..<90000), 300, accuracy: 2, "the bed resumes")

        // A take recorded over the bed lies on top the same way.
        let frames = 24000
        let input = (0..<(frames * 2)).map { Int32((0.4 * sin(2 * Double.pi * 1100 * Double($0) / 48000) * 8_388_607).rounded()) }
        RecordSupport.writeRaw(input, bits: 24, to: path("in.raw"))
        try ok(["record", session, "--track", "BED", "--at", "1.25", "--device", "filetap:IN=\(path("in.raw"))",
                "--device-format", "s24", "--bits", "24", "--duration", "\(frames)f"], environment: RecordSupport.environment)
        mix = try exportLeft()
        XCTAssertEqual(Frequency.estimate(mix, sampleRate: 48000, range: 62000..<82000), 1100, accuracy: 3, "the take plays")
        XCTAssertEqual(Signals.rms(mix, 62000..<82000), 0.4 / 2.0.squareRoot(), accuracy: 0.005, "the take replaces the bed")
        let list = try ok(["region", session, "bed"])
        XCTAssertTrue(list.contains("layer 3"), list)
        // Raising the bed brings it back over both.
        try ok(["region", session, "bed", "1", "raise"])
        mix = try exportLeft()
        XCTAssertEqual(Frequency.estimate(mix, sampleRate: 48000, range: 62000..<82000), 300, accuracy: 2)
    }

    func testExportReportsClippingAndThirtyTwoBitFloatKeepsTheOvers() throws {
        try Signals.write([[Float](repeating: 0.8, count: 4800)], to: path("loud.wav"))
        try ok(["import", session, path("loud.wav"), path("loud.wav")])
        for t in ["1", "2"] { try ok(["track", session, t, "--pan", "L100"]) }
        var out = try ok(["export", session, "-o", path("int.wav"), "--bits", "16"])
        XCTAssertTrue(out.contains("peak +4.1 dBFS") || out.contains("peak 4.1 dBFS"), out)
        XCTAssertTrue(out.contains("CLIPPED: 4800 samples over 0 dBFS (peak 4.1 dB over)"), out)
        out = try ok(["export", session, "-o", path("float.wav"), "--bits", "32f"])
        XCTAssertTrue(out.contains("4800 samples over 0 dBFS kept"), out)
        XCTAssertEqual(try Signals.read(path("float.wav")).channels[0][100], 1.6, accuracy: 1e-6)
        try ok(["track", session, "master", "--gain", "-6"])
        out = try ok(["export", session, "-o", path("fixed.wav"), "--bits", "16"])
        XCTAssertFalse(out.contains("over 0 dBFS"), "the master fader brought it under: \(out)")
        XCTAssertEqual(try Signals.read(path("fixed.wav")).channels[0][100], Float(1.6 * pow(10, -6.0 / 20)), accuracy: 1e-4, "1.6 at -6 dB")
    }

    /// Times people cannot misread (issue 27): `1:2:3` is refused naming the clock and bar
    /// forms (it put a marker at 1:02:03 in a 10 s session); a place typed far past the
    /// material is kept and said in one warning line; a near one is not.
    func testAOneDigitClockTimeIsRefusedAndAFarPlaceIsWarnedAbout() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.1, frames: 480_000)], to: path("ten.wav"))
        try ok(["import", session, path("ten.wav")])
        try refused(["marker", session, "add", "1:2:3"], "a bar position is bars.beats.sixteenths (1.2.3)")
        XCTAssertEqual(try SessionFolder(path: session).load().markers, [], "nothing saved")
        let far = try Tapedeck.run(["marker", session, "add", "1:02:03", "Late"])
        XCTAssertEqual(far.status, 0, far.stderr)
        XCTAssertEqual(far.stderr, "tapedeck: warning: '1:02:03' is 1:02:03.000, 1:01:53.000 past the end of the session's material "
                       + "(00:10.000); if that is a slip, move it (bar 1 beat 2 is 1.2.1, one minute two seconds 1:02)\n")
        let near = try Tapedeck.run(["marker", session, "add", "1.2.1", "Early"])
        XCTAssertEqual(near.status, 0, near.stderr)
        XCTAssertEqual(near.stderr, "", "bar 1 beat 2 is no slip")
        XCTAssertEqual(try SessionFolder(path: session).load().markers.map(\.frame), [24000, 3723 * 48000])
        let moved = try Tapedeck.run(["region", session, "1", "1", "move", "2:00:00"])
        XCTAssertEqual(moved.status, 0, moved.stderr)
        XCTAssertTrue(moved.stderr.contains("'2:00:00' is 2:00:00.000"), moved.stderr)
    }

    func testTrackSettingsMarkersAndRangesAreSavedAndNamesMatchIgnoringCase() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.1, frames: 4800)], to: path("Vocal.wav"))
        try ok(["import", session, path("Vocal.wav")])
        let line = try ok(["track", session, "vocal", "--gain", "-3", "--pan", "L20", "--name", "Lead", "--input", "3-4", "--arm", "--mute", "--solo", "--monitor", "input"])
        XCTAssertTrue(line.contains("track 1 (Lead)  fader -3.0 dB  pan L20  in 3-4  monitor input  [armed muted solo]"), line)
        try ok(["track", session, "add", "Guitar"])
        try ok(["track", session, "remove", "guitar"])
        try ok(["marker", session, "add", "1:00", "Chorus"])
        try ok(["marker", session, "add", "0:30"])
        try ok(["loop", session, "1:00-1:30", "--on"])
        try ok(["punch", session, "1:10-1:20"])
        let s = try SessionFolder(path: session).load()
        XCTAssertEqual(s.tracks.map(\.name), ["Lead"])
        let t = s.tracks[0]
        XCTAssertEqual([t.gainDecibels, t.pan], [-3, -0.2])
        XCTAssertEqual(t.inputChannels, [3, 4])
        XCTAssertEqual([t.armed, t.mute, t.solo], [true, true, true])
        XCTAssertEqual(t.monitoring, .input)
        XCTAssertEqual(s.markers, [Marker(name: "M2", frame: 1_440_000), Marker(name: "Chorus", frame: 2_880_000)])
        XCTAssertEqual(s.loopRange, FrameRange(startFrame: 2_880_000, endFrame: 4_320_000))
        XCTAssertTrue(s.loopEnabled)
        XCTAssertEqual(s.punchRange, FrameRange(startFrame: 3_360_000, endFrame: 3_840_000), "its own range, not the loop's")
        try refused(["track", session, "laed"], "no track named 'laed' (did you mean 'Lead'?)")
        try refused(["import", session, path("Vocal.wav"), "--track", "lede"], "did you mean 'Lead'?")
        try refused(["marker", session, "rename", "chrous", "x"], "did you mean 'Chorus'?")
        try refused(["track", session, "lead", "--gain", "nan"], "--gain 'nan'")
        try refused(["track", session, "lead", "--gain", "99"], "+12 dB")
        try refused(["region", session, "lead", "3", "gain", "-1"], "there is no region 3")
        try refused(["region", session, "lead", "1", "split", "5"], "not inside the region")
    }

    func testTheCommandLineFixes() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.1, frames: 48000)], to: path("a.wav"))
        try ok(["import", session, path("a.wav")])
        try refused(["exprot", session, "-o", path("x.wav")], "did you mean 'export'?")
        try refused(["nodes", "flanger"], "unknown node 'flanger'")
        try refused(["export", session, "-o", path("x.flac"), "--bits", "32f"], "FLAC stores 16 or 24-bit")
        try refused(["export", session, "-o", path("x.wav"), "--range", "1:30-2:00"], "it would be silence")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.wav")))
        let out = try ok(["export", session, "-o", path("v.wav"), "--speed", "2", "--mode", "vari"])
        XCTAssertTrue(out.contains("(24000 frames)"), "vari is varispeed: \(out)")
    }
}
