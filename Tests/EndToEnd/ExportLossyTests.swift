import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Issue 43, item 1: MP3 and Opus exports, read back by another program (ffprobe and
/// ffmpeg's ebur128 filter): the codec, the length within one codec frame of the WAV export,
/// the loudness within 0.5 LU of it, the tags, and the markers as chapters podcast players
/// read (ID3v2 CHAP/CTOC in the MP3, Vorbis-comment chapters in the Opus file).
final class ExportLossyTests: XCTestCase {
    private var dir = ""
    private var session = ""

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") else { throw XCTSkip("ffmpeg is not installed (make test-deps)") }
        dir = try Tapedeck.temporaryFolder(self).path
        session = dir + "/show.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["demo", session, "--samples", Tapedeck.packageRoot.appendingPathComponent("Samples").path]).status, 0)
        var s = try SessionFolder(path: session).load()
        s.markers = []
        try SessionFolder(path: session).save(s)
        for (time, name) in [("0", "Intro"), ("1.25", "Guest é / news"), ("3", "Outro")] {
            XCTAssertEqual(try Tapedeck.run(["marker", session, "add", time, name]).status, 0)
        }
    }

    /// Runs another program; its standard output and error.
    private func tool(_ path: String, _ args: [String]) throws -> (out: String, err: String) {
        let r = try Tapedeck.run(args, executable: path, timeout: 120)
        XCTAssertEqual(r.status, 0, "\(path) \(args): \(r.stderr)")
        return (r.stdout, r.stderr)
    }

    private func probe(_ file: String) throws -> [String: Any] {
        let out = try tool("/usr/bin/ffprobe", ["-v", "error", "-show_streams", "-show_format", "-show_chapters", "-of", "json", file]).out
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
    }

    /// ffmpeg's own integrated loudness of `file` (its ebur128 filter's summary).
    private func loudness(_ file: String) throws -> Double {
        let err = try tool("/usr/bin/ffmpeg", ["-nostats", "-hide_banner", "-i", file, "-af", "ebur128", "-f", "null", "-"]).err
        let summary = try XCTUnwrap(err.range(of: "Summary:"), err)
        let line = try XCTUnwrap(err[summary.upperBound...].split(separator: "\n").first { $0.contains("I:") }, err)
        return try XCTUnwrap(Double(line.split(separator: " ").dropFirst().first { Double($0) != nil } ?? ""), String(line))
    }

    private func check(_ file: String, codec: String, frameSeconds: Double, wavSeconds: Double, wavLUFS: Double,
                       bitRate: Int?) throws -> [[String: Any]] {
        let p = try probe(file)
        let stream = try XCTUnwrap((p["streams"] as? [[String: Any]])?.first)
        XCTAssertEqual(stream["codec_name"] as? String, codec)
        XCTAssertEqual(stream["channels"] as? Int, 2)
        let format = try XCTUnwrap(p["format"] as? [String: Any])
        // What a player plays: ffmpeg's decoding, the encoder's delay and padding taken off
        // (the LAME tag's gapless fields in the MP3, the pre-skip and end granule in Opus).
        let raw = file + ".raw"
        _ = try tool("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", file, "-f", "f32le", "-ac", "2", "-ar", "48000", raw])
        let bytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int)
        let seconds = Double(bytes / 8) / 48000
        XCTAssertEqual(seconds, wavSeconds, accuracy: frameSeconds, "\(codec): as long as the WAV, within one frame")
        if let bitRate {
            let rate = try XCTUnwrap(Int(stream["bit_rate"] as? String ?? format["bit_rate"] as? String ?? ""))
            XCTAssertEqual(Double(rate), Double(bitRate), accuracy: Double(bitRate) * 0.1, "\(codec) bit rate")
        }
        let tags = ((format["tags"] as? [String: String]) ?? [:]).merging((stream["tags"] as? [String: String]) ?? [:]) { a, _ in a }
        let lower = Dictionary(tags.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(lower["title"], "Episode 12 – Ünïcode", "\(codec) title: \(tags)")
        XCTAssertEqual(lower["artist"], "Ada", "\(codec) artist: \(tags)")
        XCTAssertEqual(lower["album"], "show", "\(codec) album: \(tags)")
        XCTAssertEqual(try loudness(file), wavLUFS, accuracy: 0.5, "\(codec) loudness against the WAV's")
        return try XCTUnwrap(p["chapters"] as? [[String: Any]])
    }

    func testMP3AndOpusExportsReadBackWithTheirCodecLengthLoudnessTagsAndChapters() throws {
        let common = ["--tag", "title=Episode 12 – Ünïcode", "--tag", "artist=Ada", "--tag", "album=show"]
        XCTAssertEqual(try Tapedeck.run(["export", session, "-o", dir + "/ep.wav"] + common, timeout: 120).status, 0)
        let wavProbe = try probe(dir + "/ep.wav")
        let wavSeconds = try XCTUnwrap(Double((wavProbe["format"] as? [String: Any])?["duration"] as? String ?? ""))
        let wavLUFS = try loudness(dir + "/ep.wav")

        let mp3 = try Tapedeck.run(["export", session, "-o", dir + "/ep.mp3"] + common, timeout: 120)
        XCTAssertEqual(mp3.status, 0, mp3.stderr)
        XCTAssertTrue(mp3.stdout.contains("exported \(dir)/ep.mp3"), mp3.stdout)
        let mp3Chapters = try check(dir + "/ep.mp3", codec: "mp3", frameSeconds: 1152.0 / 48000, wavSeconds: wavSeconds,
                                    wavLUFS: wavLUFS, bitRate: 192_000)
        // Opus with another name and --format, at a bit rate asked for.
        let opus = try Tapedeck.run(["export", session, "-o", dir + "/ep.opus", "--bitrate", "96"] + common, timeout: 120)
        XCTAssertEqual(opus.status, 0, opus.stderr)
        let opusChapters = try check(dir + "/ep.opus", codec: "opus", frameSeconds: 960.0 / 48000, wavSeconds: wavSeconds,
                                     wavLUFS: wavLUFS, bitRate: nil)
        for (codec, chapters) in [("mp3", mp3Chapters), ("opus", opusChapters)] {
            XCTAssertEqual(chapters.compactMap { ($0["tags"] as? [String: String])?["title"] }, ["Intro", "Guest é / news", "Outro"], codec)
            let starts = chapters.compactMap { Double($0["start_time"] as? String ?? "") }
            XCTAssertEqual(starts.count, 3, codec)
            for (got, want) in zip(starts, [0.0, 1.25, 3.0]) { XCTAssertEqual(got, want, accuracy: 0.002, codec) }
        }
        // The Opus file's bit rate is its size over its length (Ogg states none).
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: dir + "/ep.opus")[.size] as? Int)
        XCTAssertEqual(Double(size * 8) / wavSeconds, 96_000, accuracy: 20_000, "about 96 kbit/s")
    }

    func testStemsAndAMonoSpeechExportUseTheLossyFormatAtItsStandardRate() throws {
        let r = try Tapedeck.run(["export", session, "-o", dir + "/talk.mp3", "--normalize", "podcast-mono", "--stems", dir + "/stems"], timeout: 180)
        XCTAssertEqual(r.status, 0, r.stderr)
        let p = try probe(dir + "/talk.mp3")
        let stream = try XCTUnwrap((p["streams"] as? [[String: Any]])?.first)
        XCTAssertEqual(stream["channels"] as? Int, 1)
        XCTAssertEqual(Double(stream["bit_rate"] as? String ?? "") ?? 0, 128_000, accuracy: 1000, "128 kbit/s for mono speech")
        XCTAssertEqual(try loudness(dir + "/talk.mp3"), -19, accuracy: 0.5)
        let stems = try FileManager.default.contentsOfDirectory(atPath: dir + "/stems").sorted()
        XCTAssertFalse(stems.isEmpty)
        for stem in stems {
            XCTAssertTrue(stem.hasSuffix(".mp3"), stem)
            let s = try XCTUnwrap((try probe(dir + "/stems/" + stem)["streams"] as? [[String: Any]])?.first)
            XCTAssertEqual(s["codec_name"] as? String, "mp3", stem)
        }
    }

    func testLossyOptionsThatCannotApplyAreRefusedBeforeRendering() throws {
        for (args, words) in [(["-o", dir + "/x.wav", "--bitrate", "128"], "lossless"),
                              (["-o", dir + "/x.mp3", "--bits", "16"], "--bits is for WAV and FLAC"),
                              (["-o", dir + "/x.mp3", "--bitrate", "400"], "8 to 320 kbit/s"),
                              (["-o", dir + "/x.mp3", "--format", "opus"], "does not match"),
                              (["-o", dir + "/x.mp3", "--tag", "mood=sad"], "KEY one of title, artist, album, date"),
                              (["-o", dir + "/x.mp3", "--quality", "11"], "0 (best) to 10")] {
            let r = try Tapedeck.run(["export", session] + args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(words), "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        }
    }
}
