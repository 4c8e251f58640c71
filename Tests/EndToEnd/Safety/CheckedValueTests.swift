import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Values that were accepted and then broke the session, or trapped outright (issue 13).
final class CheckedValueTests: XCTestCase {
    func testTimesPastTheTimelineAreRefusedByEveryCommandAndChangeNothing() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let before = Safety.sessionBytes(folder)
        let s = folder.path
        let cases: [[String]] = [
            ["import", s, dir + "/tone.wav", "--at", "9000000000000000000f"],
            ["import", s, dir + "/tone.wav", "--at", "9223372036854775807f"],
            ["import", s, dir + "/tone.wav", "--track", "1", "--at", "99999999999999.1.1"],
            ["export", s, "-o", dir + "/x.wav", "--range", "99999999999999.1.1-"],
            ["export", s, "-o", dir + "/x.wav", "--range", "0-9223372036854775807f"],
            ["play", s, "--from", "9000000000000000000f", "--device", "no-such"],
            ["play", s, "--to", "99999999999999|1|0", "--device", "no-such"],
            ["record", s, "--track", "1", "--duration", "99999999999999.1.1", "--device", "no-such"],
            ["record", s, "--track", "1", "--play", "--at", "9000000000000000000f", "--device", "no-such"],
            ["record", s, "--track", "1", "--play", "--punch", "1-99999999999999.1.1", "--device", "no-such"],
        ]
        for args in cases {
            let r = try Tapedeck.run(args)
            Safety.assertRefused(r, status: 64, mentions: ["2^40 frames"])
        }
        XCTAssertEqual(Safety.sessionBytes(folder), before, "nothing was saved")
        // A file that would end past the timeline is refused before anything is copied.
        let r = try Tapedeck.run(["import", s, dir + "/tone.wav", "--at", "1099511627776f"])
        Safety.assertRefused(r, status: 64, mentions: ["tone.wav", "past the end of the timeline"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).count, 1)
        for args in [["info", s], ["export", s, "-o", dir + "/ok.wav"]] {
            XCTAssertEqual(try Tapedeck.run(args).status, 0, "the session still works: \(args[0])")
        }
    }

    func testUnitsAndScreenPositionsWorkOnTheCommandLine() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        for (at, frame) in [("1m30s", Int64(90 * 48000)), ("3|2|480", 2 * 96000 + 36000), ("500ms", 24000)] {
            XCTAssertEqual(try Tapedeck.run(["import", folder.path, dir + "/tone.wav", "--at", at]).status, 0)
            XCTAssertEqual(try folder.load().tracks.last?.regions.first?.timelineStartFrame, frame, at)
        }
        let r = try Tapedeck.run(["export", folder.path, "-o", dir + "/part.wav", "--range", "1m30s-1m30s500ms"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("(24000 frames)"), r.stdout)
    }

    func testAFileWithoutAudioIsRefusedAndTheSessionStaysUsable() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        try Signals.write([[]], to: dir + "/empty.wav", encoding: .int16)
        Safety.assertRefused(try Tapedeck.run(["import", folder.path, dir + "/empty.wav"]), status: 65, mentions: ["empty.wav", "0 frames"])
        XCTAssertEqual(try Tapedeck.run(["info", folder.path]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["export", folder.path, "-o", dir + "/x.wav"]).status, 0)
    }

    func testSessionValuesThatTrappedNameTheirFieldInOneLine() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        let good = try String(contentsOfFile: folder.sessionFile, encoding: .utf8)
        let edits: [(String, String, [String])] = [
            ("\"gainDecibels\" : 0,\n      \"inputChain\"", "\"gainDecibels\" : -1e308,\n      \"inputChain\"", ["tracks[0].gainDecibels", "-200"]),
            ("\"lengthFrames\" : 48000", "\"lengthFrames\" : 10.5", ["tracks[0].regions[0].lengthFrames", "10.5", "whole number"]),
            ("\"lengthFrames\" : 48000", "\"lengthFrames\" : 9223372036854775807", ["tracks[0].regions[0].lengthFrames"]),
            ("\"timelineStartFrame\" : 0", "\"timelineStartFrame\" : 9000000000000000000", ["tracks[0].regions[0].timelineStartFrame"]),
            ("\"file\" : \"audio\\/tone.wav\"", "\"file\" : \"..\\/secret.wav\"", ["tracks[0].regions[0].file", ".."]),
            ("\"file\" : \"audio\\/tone.wav\"", "\"file\" : \"\\/etc\\/passwd\"", ["tracks[0].regions[0].file", "absolute"]),
        ]
        for (from, to, mentions) in edits {
            XCTAssertTrue(good.contains(from), from)
            try good.replacingOccurrences(of: from, with: to).write(toFile: folder.sessionFile, atomically: true, encoding: .utf8)
            for args in [["info", folder.path], ["export", folder.path, "-o", dir + "/x.wav"]] {
                Safety.assertRefused(try Tapedeck.run(args), status: 65, mentions: mentions)
            }
        }
    }

    func testOneNaNSampleNeverPoisonsTheMixAndTheExportReportsTheRealPeak() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = SessionFolder(path: dir + "/s")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        var tone = Signals.sine(hertz: 440, amplitude: 0.5, frames: 96000)
        tone[1000] = .nan
        try Signals.write([tone], to: dir + "/nan.wav", encoding: .float32)
        let imported = try Tapedeck.run(["import", folder.path, dir + "/nan.wav"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.stdout.contains("1 NaN/infinite sample replaced by silence"), imported.stdout)
        // A NaN that never went through import (a file put into audio/ by hand) is caught in the mix.
        try FileManager.default.copyItem(atPath: dir + "/nan.wav", toPath: folder.audioFolder + "/raw.wav")
        var session = try folder.load()
        session.tracks.append(Track(name: "raw", playbackChain: "reverb", regions: [Region(file: "audio/raw.wav", timelineStartFrame: 0, lengthFrames: 96000)]))
        session.tracks[0].playbackChain = "hpf:cutoff=100"
        try folder.save(session)
        let out = dir + "/mix.wav"
        let r = try Tapedeck.run(["export", folder.path, "-o", out, "--bits", "32f", "--fx", "hpf:100,reverb"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("NaN/infinite sample") && r.stdout.contains("replaced by silence"), r.stdout)
        let mix = try Safety.samples(out)
        XCTAssertFalse(mix.joined().contains { !$0.isFinite }, "no NaN reaches the file")
        let peak = mix.joined().map { abs($0) }.max() ?? 0
        let reported = try XCTUnwrap(Safety.reportedPeak(r.stdout), r.stdout)
        XCTAssertEqual(reported, 20 * log10(Double(peak)), accuracy: 0.06, "the final line's peak is the file's")
        let tail = Array(mix[0][72000..<96000])
        XCTAssertGreaterThan(Signals.rms(tail, 0..<tail.count), 0.05, "the mix after the bad sample is still music")
    }
}
