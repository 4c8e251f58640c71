import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Issue 25, item 5, as a user meets it: a 5.1 file imports as six mono tracks named from its
/// layout, and every one of its channels reaches the export; an import that cannot keep every
/// channel is refused with one line and writes nothing; `info` names a region that plays a
/// wide file and the downmix it is heard with.
final class SurroundImportTests: XCTestCase {
    var dir: URL!
    /// A tone per channel (Hz; whole cycles in any half second) and its peak level, L R C LFE Ls Rs.
    static let tones: [Double] = [300, 500, 700, 100, 1100, 1300]
    static let levels: [Double] = [0.10, 0.12, 0.14, 0.16, 0.18, 0.20]
    static let fiveOne: [ChannelPosition] = [.left, .right, .center, .lfe, .rearLeft, .rearRight]

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// A one-second 6-channel 24-bit file, a tone per channel, with the 5.1 layout unless
    /// `layout` is nil (then a classic WAV, which has no place for one: libsndfile gives an
    /// extensible header of 6 channels a 5.1 mask of its own).
    private func writeSurround(_ name: String, layout: [ChannelPosition]? = SurroundImportTests.fiveOne) throws {
        let channels = zip(Self.tones, Self.levels).map { Signals.sine(hertz: $0, amplitude: Float($1), frames: 48000) }
        let writer = try AudioFileWriter(path: path(name), format: AudioFileFormat(container: .wav, encoding: .int24, sampleRate: 48000, channelCount: 6),
                                         expectedFrameCount: 48000, channelLayout: layout)
        try writer.write(arrays: channels)
        try writer.close()
    }

    private func newSession() throws -> SessionFolder {
        let r = try Tapedeck.run(["new", path("s")])
        XCTAssertEqual(r.status, 0, r.stderr)
        return SessionFolder(path: path("s.tapedeck"))
    }

    func testAFiveOneFilesSixChannelsAllReachTheExport() throws {
        try writeSurround("surround.wav")
        let folder = try newSession()
        let r = try Tapedeck.run(["import", folder.path, path("surround.wav"), "--at", "0"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("6 ch → 6 mono tracks: L R C LFE Ls Rs"), r.stdout)
        XCTAssertEqual(r.stdout.split(separator: "\n").filter { $0.hasPrefix("imported") }.count, 1, "one line: \(r.stdout)")
        let session = try folder.load()
        XCTAssertEqual(session.tracks.map(\.name), ["surround L", "surround R", "surround C", "surround LFE", "surround Ls", "surround Rs"])
        XCTAssertEqual(session.tracks.map(\.pan), [-1, 1, 0, 0, -1, 1], "each placed where its channel sits")
        XCTAssertTrue(session.tracks.allSatisfy { $0.regions.count == 1 && $0.regions[0].timelineStartFrame == 0 && $0.regions[0].lengthFrames == 48000 },
                      "all at the same time")
        for t in session.tracks {
            XCTAssertEqual(try AudioFileReader(path: folder.absolutePath(of: t.regions[0].file)).channelCount, 1, "\(t.name) is mono")
            XCTAssertTrue(FileManager.default.fileExists(atPath: folder.peakPath(forAudio: t.regions[0].file)), "\(t.name) has its peaks")
        }

        let e = try Tapedeck.run(["export", folder.path, "-o", path("mix.wav"), "--bits", "32f"])
        XCTAssertEqual(e.status, 0, e.stderr)
        let mix = try Signals.read(path("mix.wav")).channels
        // Mono tracks through the constant-power pan law: hard left/right at unity, centre at −3 dB.
        let centre = 0.5.squareRoot()
        let expected: [(left: Double, right: Double)] = [(1, 0), (0, 1), (centre, centre), (centre, centre), (1, 0), (0, 1)]
        var worst = 0.0
        for (k, hz) in Self.tones.enumerated() {
            for (side, signal, gain) in [("L", mix[0], expected[k].left), ("R", mix[1], expected[k].right)] {
                let level = Signals.toneLevel(hz, in: signal, 12000..<36000)
                if gain == 0 {
                    XCTAssertLessThan(level, 1e-5, "\(session.tracks[k].name) (\(hz) Hz) must not be in \(side)")
                } else {
                    let off = 20 * log10(level / (gain * Self.levels[k]))
                    worst = max(worst, abs(off))
                    XCTAssertEqual(off, 0, accuracy: 0.01, "\(session.tracks[k].name) (\(hz) Hz) in \(side)")
                }
            }
        }
        print("5.1 import: every channel in the export within \(String(format: "%.5f", worst)) dB of its pan")
    }

    func testAFileThatNamesNoLayoutMakesNumberedCentredTracks() throws {
        try writeSurround("six.wav", layout: nil)
        let folder = try newSession()
        let r = try Tapedeck.run(["import", folder.path, path("six.wav")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("6 ch → 6 mono tracks: 1 2 3 4 5 6, centred (the file names no channel positions)"), r.stdout)
        let session = try folder.load()
        XCTAssertEqual(session.tracks.map(\.name), (1...6).map { "six \($0)" })
        XCTAssertEqual(session.tracks.map(\.pan), [0, 0, 0, 0, 0, 0])
        XCTAssertEqual(session.tracks.map { $0.regions[0].file }, (1...6).map { "audio/six-ch\($0).wav" })
    }

    /// Onto one track the file would lose channels; past the track limit it would not fit:
    /// both are one line, a usage exit, and nothing written (issue 24).
    func testAnImportThatCannotKeepEveryChannelIsRefusedAndWritesNothing() throws {
        try writeSurround("surround.wav")
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.1, frames: 4800)], to: path("mono.wav"))
        let folder = try newSession()
        XCTAssertEqual(try Tapedeck.run(["import", folder.path, path("mono.wav")]).status, 0)
        let before = try folder.load()
        let audioBefore = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).sorted()

        let onto = try Tapedeck.run(["import", folder.path, path("mono.wav"), path("surround.wav"), "--track", "mono"])
        XCTAssertEqual(onto.status, 64, onto.stderr)
        XCTAssertEqual(onto.stderr.split(separator: "\n").count, 1, onto.stderr)
        XCTAssertTrue(onto.stderr.contains("has 6 channels (L R C LFE Ls Rs) and a track plays one or two; leave out --track to import it as 6 mono tracks; nothing imported"),
                      onto.stderr)
        XCTAssertEqual(try folder.load(), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).sorted(), audioBefore, "not even the mono file first")

        var full = before
        full.tracks += (0..<(SessionLimits.maximumTracks - 3)).map { Track(name: "T\($0)") }
        try folder.save(full)
        let tooMany = try Tapedeck.run(["import", folder.path, path("surround.wav")])
        XCTAssertNotEqual(tooMany.status, 0)
        XCTAssertEqual(tooMany.stderr.split(separator: "\n").count, 1, tooMany.stderr)
        XCTAssertTrue(tooMany.stderr.contains("6 new tracks would make \(SessionLimits.maximumTracks + 4)"), tooMany.stderr)
        XCTAssertEqual(try folder.load(), full)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).sorted(), audioBefore)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.peaksFolder).filter { $0.hasPrefix("surround") }, [])
    }

    /// A region placed by hand on the 5.1 file (as sessions from before splitting have them):
    /// `info` names it and the downmix, and the export carries every channel at that downmix.
    func testInfoNamesARegionOnAWideFileAndTheDownmixItIsHeardWith() throws {
        let folder = try newSession()
        try writeSurround("s.tapedeck/audio/surround.wav")
        var s = try folder.load()
        s.tracks = [Track(name: "Surround", regions: [Region(file: "audio/surround.wav", timelineStartFrame: 0, lengthFrames: 48000)])]
        try folder.save(s)
        let info = try Tapedeck.run(["info", folder.path])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("audio/surround.wav  (from 0, 48000 frames)  6 ch, downmixed to stereo"), info.stdout)
        XCTAssertTrue(info.stdout.contains("downmix   audio/surround.wav: 6 ch (L R C LFE Ls Rs) → stereo, ITU-R BS.775: L = L + 0.707·C + 0.707·Ls, R = R + 0.707·C + 0.707·Rs; LFE dropped"),
                      info.stdout)
        let file = try Tapedeck.run(["info", path("s.tapedeck/audio/surround.wav")])
        XCTAssertTrue(file.stdout.contains("channels  6 (L R C LFE Ls Rs); on a track: ITU-R BS.775"), file.stdout)

        let e = try Tapedeck.run(["export", folder.path, "-o", path("mix.wav"), "--bits", "32f"])
        XCTAssertEqual(e.status, 0, e.stderr)
        let mix = try Signals.read(path("mix.wav")).channels
        let g = 0.5.squareRoot()
        let expected: [(left: Double, right: Double)] = [(1, 0), (0, 1), (g, g), (0, 0), (g, 0), (0, g)]
        for (k, hz) in Self.tones.enumerated() {
            for (signal, gain) in [(mix[0], expected[k].left), (mix[1], expected[k].right)] {
                let level = Signals.toneLevel(hz, in: signal, 12000..<36000)
                if gain == 0 { XCTAssertLessThan(level, 1e-5, "\(hz) Hz") } else { XCTAssertEqual(level / (gain * Self.levels[k]), 1, accuracy: 1e-3, "\(hz) Hz") }
            }
        }
    }
}
