import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Issue 29, item 3: exports and stems carry `bext`, iXML and the markers as cue points with
/// labels (WAV) or chapter comments (FLAC), read back here by a chunk walk of the test's own
/// (not Tapedeck's reader) and by sox; a BWF file another program wrote imports
/// `--at original` at its time reference.
final class ExportMetadataTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func run(_ args: [String]) throws -> Tapedeck.Result {
        let r = try Tapedeck.run(args)
        XCTAssertEqual(r.status, 0, "tapedeck \(args.joined(separator: " ")): \(r.stderr)")
        return r
    }

    /// A session with ten seconds of tone on one track and markers at 2 s (Verse), 5 s
    /// (Chorus é) and 9.5 s (Outro).
    private func sessionWithMarkers() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.3, frames: 480_000)], to: path("tone.wav"), encoding: .int16)
        _ = try run(["new", path("s")])
        _ = try run(["import", path("s.tapedeck"), path("tone.wav")])
        _ = try run(["marker", path("s.tapedeck"), "add", "0:02", "Verse"])
        _ = try run(["marker", path("s.tapedeck"), "add", "0:05", "Chorus é"])
        _ = try run(["marker", path("s.tapedeck"), "add", "0:09.5", "Outro"])
    }

    func testTheMarkersOfAWAVExportAndItsStemsReadBackAsCuePointsAtTheirFramesWithTheirNames() throws {
        try sessionWithMarkers()
        _ = try run(["export", path("s.tapedeck"), "-o", path("mix.wav"), "--range", "0:01-0:09", "--stems", path("stems")])
        let stem = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: path("stems")).first)
        for file in [path("mix.wav"), path("stems/" + stem)] {
            let wav = try RIFFWalk(path: file)
            // Outro (9.5 s) lies outside 1…9 s: two points, from the range's start.
            XCTAssertEqual(wav.cues.map(\.position), [48000, 192_000], file)
            XCTAssertEqual(wav.cues.map(\.sampleOffset), [48000, 192_000], file)
            XCTAssertEqual(wav.cues.map(\.id).map { wav.labels[$0] }, ["Verse", "Chorus é"], file)
            XCTAssertEqual(wav.bextTimeReference, 48000, "the export's time reference is the range's start: \(file)")
            XCTAssertEqual(wav.bextOriginator, "Tapedeck")
            XCTAssertEqual(wav.bextOriginationDate.count, 10, "yyyy-mm-dd: \(wav.bextOriginationDate)")
            XCTAssertEqual(wav.bextOriginationTime.count, 8, "hh:mm:ss: \(wav.bextOriginationTime)")
            XCTAssertTrue(wav.chunkIDs.contains("iXML"), "\(wav.chunkIDs)")
            XCTAssertEqual(wav.riffSizeMatchesFile, true, "RIFF size covers every chunk, padded: \(file)")
        }
        XCTAssertTrue(try RIFFWalk(path: path("stems/" + stem)).ixml.contains("<PROJECT>s</PROJECT>"))
        // The audio is untouched by the chunks.
        XCTAssertEqual(try Signals.read(path("mix.wav")).channels[0].count, 384_000)
    }

    func testANormalizedExportKeepsItsMarkersAndMetadata() throws {
        try sessionWithMarkers()
        _ = try run(["export", path("s.tapedeck"), "-o", path("loud.wav"), "--normalize", "-16LUFS"])
        let wav = try RIFFWalk(path: path("loud.wav"))
        XCTAssertEqual(wav.cues.map(\.position), [96000, 240_000, 456_000])
        XCTAssertEqual(wav.cues.map(\.id).map { wav.labels[$0] }, ["Verse", "Chorus é", "Outro"])
        XCTAssertEqual(wav.bextTimeReference, 0)
    }

    func testAFLACExportCarriesItsMarkersAsChapterCommentsThatSoxReads() throws {
        try sessionWithMarkers()
        _ = try run(["export", path("s.tapedeck"), "-o", path("mix.flac"), "--range", "0:01-0:09"])
        XCTAssertEqual(try Signals.read(path("mix.flac")).channels[0].count, 384_000, "the audio survives the rewritten header")
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else { throw XCTSkip("sox is not installed") }
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        sox.arguments = ["--i", "-a", path("mix.flac")]
        let pipe = Pipe()
        sox.standardOutput = pipe
        try sox.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        sox.waitUntilExit()
        for line in ["CHAPTER001=00:00:01.000", "CHAPTER001NAME=Verse", "CHAPTER002=00:00:04.000", "CHAPTER002NAME=Chorus é"] {
            XCTAssertTrue(text.contains(line), "\(line) in:\n\(text)")
        }
        XCTAssertFalse(text.contains("CHAPTER003"), "Outro is outside the range")
        XCTAssertTrue(text.contains("comment=session=s"), "the take-style comment is kept:\n\(text)")
    }

    func testABWFFileFromAnotherProgramWithAnHourTimeReferenceImportsAtOriginalAtOneHour() throws {
        _ = try run(["new", path("s")])
        try BWF.write(path("field.wav"), sampleRate: 48000, timeReference: 3600 * 48000)
        // Another rate: converted to the session's, still at 1:00:00.
        try BWF.write(path("field44.wav"), sampleRate: 44100, timeReference: 3600 * 44100)
        let r = try run(["import", path("s.tapedeck"), path("field.wav"), path("field44.wav"), "--at", "original"])
        XCTAssertTrue(r.stdout.contains("resampled to 48000 Hz"), r.stdout)
        let session = try SessionFolder(path: path("s.tapedeck")).load()
        XCTAssertEqual(session.tracks.map { $0.regions.first?.timelineStartFrame }, [3600 * 48000, 3600 * 48000])
        let listing = try run(["region", path("s.tapedeck"), "1"]).stdout
        XCTAssertTrue(listing.contains("1:00:00.000"), listing)
    }

    func testImportAtOriginalRefusesAFileWithoutOrWithADamagedTimeReferenceInOneLine() throws {
        _ = try run(["new", path("s")])
        try Signals.write([[Float](repeating: 0.1, count: 4800)], to: path("plain.wav"), encoding: .int16)
        try BWF.write(path("huge.wav"), sampleRate: 48000, timeReference: UInt64.max)
        for file in ["plain.wav", "huge.wav"] {
            let r = try Tapedeck.run(["import", path("s.tapedeck"), path(file), "--at", "original"])
            XCTAssertNotEqual(r.status, 0)
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("no BWF time reference"), r.stderr)
        }
        XCTAssertEqual(try SessionFolder(path: path("s.tapedeck")).load().tracks.count, 0, "nothing imported")
    }
}

/// A BWF file as a field recorder writes it, packed byte by byte here (not by Tapedeck's
/// writer): `fmt `, a version 1 `bext` with `timeReference`, half a second of 16-bit tone.
enum BWF {
    static func write(_ path: String, sampleRate: Int, timeReference: UInt64) throws {
        var out = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        let frames = sampleRate / 2
        var bext = [UInt8](repeating: 0, count: 602)
        for (i, b) in "field take 1".utf8.enumerated() { bext[i] = b }
        for (i, b) in "Recorder".utf8.enumerated() { bext[256 + i] = b }
        for (i, b) in "2024-05-0113:00:00".utf8.enumerated() { bext[320 + i] = b }
        for k in 0..<8 { bext[338 + k] = UInt8(timeReference >> (8 * UInt64(k)) & 0xFF) }
        bext[346] = 1
        let dataBytes = frames * 2
        out.append(contentsOf: Array("RIFF".utf8))
        u32(UInt32(4 + 8 + 16 + 8 + bext.count + 8 + dataBytes))
        out.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(16); u16(1); u16(1); u32(UInt32(sampleRate)); u32(UInt32(sampleRate * 2)); u16(2); u16(16)
        out.append(contentsOf: Array("bext".utf8))
        u32(UInt32(bext.count))
        out.append(contentsOf: bext)
        out.append(contentsOf: Array("data".utf8))
        u32(UInt32(dataBytes))
        for i in 0..<frames { u16(UInt16(bitPattern: Int16(8000 * sin(2 * Double.pi * 440 * Double(i) / Double(sampleRate))))) }
        try out.write(to: URL(fileURLWithPath: path))
    }
}

/// The chunks of a RIFF WAV, walked here byte by byte (independent of libsndfile and of
/// Tapedeck's reader): the `cue ` points, the `LIST`/`adtl` `labl` names, the `bext` fields.
struct RIFFWalk {
    struct Cue { var id: UInt32; var position: UInt32; var sampleOffset: UInt32 }
    var chunkIDs: [String] = []
    var cues: [Cue] = []
    var labels: [UInt32: String] = [:]
    var bextTimeReference: UInt64?
    /// The bext version and its v2 loudness fields (LoudnessValue, LoudnessRange,
    /// MaxTruePeakLevel, MaxMomentaryLoudness, MaxShortTermLoudness: × 100).
    var bextVersion: UInt16 = 0
    var bextLoudness: [Int16] = []
    var bextOriginator = ""
    var bextOriginationDate = ""
    var bextOriginationTime = ""
    var ixml = ""
    var riffSizeMatchesFile = false

    init(path: String) throws {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> UInt32 { UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24 }
        func text(_ r: Range<Int>) -> String { String(decoding: b[r].prefix { $0 != 0 }, as: UTF8.self) }
        guard b.count >= 12, text(0..<4) == "RIFF", text(8..<12) == "WAVE" else { throw CocoaError(.fileReadCorruptFile) }
        riffSizeMatchesFile = Int(u32(4)) + 8 == b.count
        var at = 12
        while at + 8 <= b.count {
            let id = String(decoding: b[at..<(at + 4)], as: UTF8.self)
            let size = Int(u32(at + 4))
            let body = at + 8
            guard body + size <= b.count else { throw CocoaError(.fileReadCorruptFile) }
            chunkIDs.append(id)
            switch id {
            case "cue ":
                for k in 0..<Int(u32(body)) {
                    let p = body + 4 + 24 * k
                    cues.append(Cue(id: u32(p), position: u32(p + 4), sampleOffset: u32(p + 20)))
                }
            case "LIST" where text(body..<(body + 4)) == "adtl":
                var s = body + 4
                while s + 8 <= body + size {
                    let n = Int(u32(s + 4))
                    if text(s..<(s + 4)) == "labl" { labels[u32(s + 8)] = text((s + 12)..<(s + 8 + n)) }
                    s += 8 + n + n % 2
                }
            case "bext":
                bextOriginator = text((body + 256)..<(body + 288))
                bextOriginationDate = text((body + 320)..<(body + 330))
                bextOriginationTime = text((body + 330)..<(body + 338))
                bextTimeReference = UInt64(u32(body + 338)) | UInt64(u32(body + 342)) << 32
                bextVersion = UInt16(b[body + 346]) | UInt16(b[body + 347]) << 8
                bextLoudness = (0..<5).map { Int16(bitPattern: UInt16(b[body + 412 + 2 * $0]) | UInt16(b[body + 413 + 2 * $0]) << 8) }
            case "iXML":
                ixml = text(body..<(body + size))
            default: break
            }
            at = body + size + size % 2
        }
    }
}
