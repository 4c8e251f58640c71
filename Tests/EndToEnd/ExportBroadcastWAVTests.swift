import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Issue 43, item 5: Broadcast WAV in full, read back by the test's own chunk walk: the
/// `bext` v2 loudness fields of a normalised export, any number of cue points (past
/// libsndfile's 100), an iXML track list naming every channel, and a FLAC export's time
/// reference as the `time_reference` comment ffmpeg reads.
final class ExportBroadcastWAVTests: XCTestCase {
    private var dir = ""
    private var session = ""

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self).path
        let frames = 10 * 48000
        var left = [Float](repeating: 0, count: frames), right = left
        for i in 0..<frames {
            left[i] = ((i / 48000) % 2 == 0 ? 0.05 : 0.2) * Float(sin(2 * Double.pi * 330 * Double(i) / 48000))
            right[i] = 0.5 * left[i]
        }
        try Signals.write([left, right], to: dir + "/source.wav")
        session = dir + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["import", session, dir + "/source.wav"]).status, 0)
    }

    func testAHundredAndFiftyMarkersReadBackAsAHundredAndFiftyCues() throws {
        var s = try SessionFolder(path: session).load()
        s.markers = (0..<150).map { Marker(name: "m\($0 + 1)", frame: Int64($0) * 3000 + 7) }
        try SessionFolder(path: session).save(s)
        let r = try Tapedeck.run(["export", session, "-o", dir + "/many.wav"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains("could not store"), r.stderr)
        let wav = try RIFFWalk(path: dir + "/many.wav")
        XCTAssertEqual(wav.cues.count, 150)
        XCTAssertEqual(wav.cues.map(\.position), (0..<150).map { UInt32($0 * 3000 + 7) })
        XCTAssertEqual(wav.cues.map { wav.labels[$0.id] ?? "" }, (0..<150).map { "m\($0 + 1)" })
        XCTAssertTrue(wav.riffSizeMatchesFile)
        // libsndfile still reads the whole file past the added chunks.
        XCTAssertEqual(try AudioFileReader(path: dir + "/many.wav").frameCount, 480_000)
    }

    func testANormalizedWAVCarriesItsMeasuredLoudnessInBextVersion2() throws {
        let r = try Tapedeck.run(["export", session, "-o", dir + "/loud.wav", "--normalize", "podcast"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let wav = try RIFFWalk(path: dir + "/loud.wav")
        XCTAssertEqual(wav.bextVersion, 2)
        XCTAssertEqual(wav.bextLoudness.count, 5)
        let (reference, report) = try LoudnessExportTests.measure(dir + "/loud.wav")
        XCTAssertEqual(Double(wav.bextLoudness[0]) / 100, reference, accuracy: 0.1, "LoudnessValue")
        XCTAssertEqual(Double(wav.bextLoudness[1]) / 100, report.rangeLU, accuracy: 0.2, "LoudnessRange")
        XCTAssertEqual(Double(wav.bextLoudness[2]) / 100, report.truePeakDecibels, accuracy: 0.3, "MaxTruePeakLevel")
        XCTAssertLessThanOrEqual(Double(wav.bextLoudness[2]) / 100, -1.0)
        XCTAssertEqual(Double(wav.bextLoudness[3]) / 100, report.momentaryLUFS.max() ?? 0, accuracy: 0.2, "MaxMomentaryLoudness")
        XCTAssertGreaterThan(wav.bextLoudness[4], wav.bextLoudness[0], "MaxShortTermLoudness is above the integrated")
        XCTAssertLessThanOrEqual(wav.bextLoudness[4], wav.bextLoudness[3], "and under the momentary maximum")
    }

    func testTheIXMLOfAStereoExportListsBothChannels() throws {
        XCTAssertEqual(try Tapedeck.run(["export", session, "-o", dir + "/mix.wav"]).status, 0)
        let ixml = try RIFFWalk(path: dir + "/mix.wav").ixml
        XCTAssertTrue(ixml.contains("<TRACK_COUNT>2</TRACK_COUNT>"), ixml)
        XCTAssertEqual(ixml.components(separatedBy: "<TRACK>").count - 1, 2, ixml)
        XCTAssertTrue(ixml.contains("<CHANNEL_INDEX>2</CHANNEL_INDEX><INTERLEAVE_INDEX>2</INTERLEAVE_INDEX><NAME>s mix R</NAME>"), ixml)
    }

    func testAFLACExportCarriesItsTimeReferenceAsTheCommentFFmpegReads() throws {
        XCTAssertEqual(try Tapedeck.run(["session", session, "--time-of-day", "09:30:00"]).status, 0)
        let r = try Tapedeck.run(["export", session, "-o", dir + "/mix.flac", "--range", "2-4"])
        XCTAssertEqual(r.status, 0, r.stderr)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") else { throw XCTSkip("ffmpeg is not installed") }
        let p = try Tapedeck.run(["-v", "error", "-show_entries", "format_tags=time_reference", "-of", "default=nw=1:nk=1", dir + "/mix.flac"],
                                 executable: "/usr/bin/ffprobe")
        // 09:30:00 plus the range's start, at 48 kHz.
        let expected: Int64 = Int64(9 * 3600 + 30 * 60) * 48000 + 2 * 48000
        let said = p.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(said, String(expected), p.stderr)
        XCTAssertEqual(try Signals.read(dir + "/mix.flac").channels[0].count, 96_000, "the audio survives the rewrite")
    }
}
