import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `record --retro`: SIGUSR1 keeps the last seconds of input as a take placed where it was
/// played. The paced `jacktap` device runs in real time, so the keep falls mid-stream.
final class RetroCaptureTests: XCTestCase {
    /// A session with one armed track, 600,000 frames of noise (`seed`) as the paced input,
    /// and `record --retro 1` listening to it on a private JACK server (`environment` added).
    private func listening(seed: UInt64, environment: [String: String] = [:]) throws
        -> (folder: SessionFolder, input: [Int32], child: SpawnedChild) {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/s")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "idea", armed: true)]
        try folder.create(session)
        let input = RecordSupport.signal(frames: 600_000, channels: 1, bits: 16, seed: seed)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let jack = try JackServer.start(self, folder: dir.path)
        let child = try SpawnedChild([Tapedeck.binary, "record", folder.path, "--track", "1", "--retro", "1",
                                      "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16", "--channels", "1",
                                      "--bits", "16"],
                                     environment: jack.environment.merging(environment) { $1 })
        return (folder, input, child)
    }

    func testSIGUSR1KeepsTheLastSecondsAtTheirOriginalPosition() throws {
        let (folder, input, child) = try listening(seed: 21)
        // jacktap runs in real time, so "2 s in" means 2 s in.
        usleep(2_500_000)
        XCTAssertEqual(Glibc.kill(child.pid, SIGUSR1), 0)
        usleep(700_000)
        XCTAssertEqual(child.kill(SIGINT), 0, "SIGINT ends listening with exit 0")

        let region = try XCTUnwrap(try folder.load().tracks[0].regions.first, "the kept take is on the track")
        XCTAssertEqual(region.lengthFrames, 48_000, "one second")
        let kept = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16).values
        XCTAssertEqual(kept.count, 48_000)
        // Without playback the timeline is the input's own count: the take must hold exactly
        // the input frames of the span it was placed over.
        let start = Int(region.timelineStartFrame)
        XCTAssertGreaterThanOrEqual(start, 0)
        XCTAssertLessThanOrEqual(start + 48_000, 600_000)
        XCTAssertEqual(kept, Array(input[start..<(start + 48_000)]), "played at \(start), kept at \(start)")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path + "/audio").filter { $0.hasSuffix(".recording") }
        XCTAssertEqual(left, [], "placed and saved: no take marker is left beside it")
    }

    /// A kept take is marked, as a recorded one is, until a saved session holds it: killed
    /// in its save (as a power cut there would), the take is placed by the next open where
    /// the keep would have placed it. (The keep once reserved its name with an empty marker
    /// and left it: a kill before the save lost the take from the session, and a clean keep
    /// left the empty marker beside it.)
    func testAKeepKilledBeforeItsSaveIsRecoveredOntoItsTrack() throws {
        let (folder, input, child) = try listening(seed: 23, environment: ["TAPEDECK_TEST_KILL_AT": "save-rename"])
        usleep(2_500_000)
        XCTAssertEqual(Glibc.kill(child.pid, SIGUSR1), 0)
        let status = try XCTUnwrap(child.wait(timeoutSeconds: 20), "the keep's save kills it")
        XCTAssertEqual(status & 0x7f, SIGKILL)
        XCTAssertEqual(try String(contentsOfFile: folder.sessionFile, encoding: .utf8).contains("take-"), false, "the save never landed")

        let recovered = try Tapedeck.run(["recover", folder.path])
        XCTAssertEqual(recovered.status, 0, recovered.stderr)
        let region = try XCTUnwrap(try folder.load().tracks[0].regions.first, "recovered onto its track: \(recovered.stdout)")
        XCTAssertEqual(region.lengthFrames, 48_000)
        let kept = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16).values
        let start = Int(region.timelineStartFrame)
        XCTAssertLessThanOrEqual(start + 48_000, 600_000)
        XCTAssertEqual(kept, Array(input[start..<(start + 48_000)]), "recovered where it was played, at \(start)")
    }

    /// With no armed track, `record --retro` listens on a track made for the take, as `record`
    /// records onto one: SIGUSR1 keeps the seconds heard there (before, nothing listened and
    /// the keep said "not listening" after the whole run), and the track is saved with its
    /// first take; a run that keeps nothing leaves the session as it was.
    func testWithNoArmedTrackTheTakeGoesOntoATrackMadeForIt() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/s")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "idea")]
        try folder.create(session)
        let input = RecordSupport.signal(frames: 600_000, channels: 1, bits: 16, seed: 22)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let jack = try JackServer.start(self, folder: dir.path)
        let args = [Tapedeck.binary, "record", folder.path, "--retro", "1", "--device", "jacktap:IN=\(dir.path)/in.raw",
                    "--device-format", "s16", "--channels", "1", "--bits", "16"]

        let idle = try SpawnedChild(args, environment: jack.environment)
        usleep(1_500_000)
        XCTAssertEqual(idle.kill(SIGINT), 0, "SIGINT ends listening with exit 0")
        XCTAssertEqual(try folder.load().tracks.map(\.name), ["idea"], "nothing kept: no track added")

        let child = try SpawnedChild(args, environment: jack.environment)
        usleep(2_500_000)
        XCTAssertEqual(Glibc.kill(child.pid, SIGUSR1), 0)
        usleep(700_000)
        XCTAssertEqual(child.kill(SIGINT), 0)
        let saved = try folder.load()
        XCTAssertEqual(saved.tracks.map(\.name), ["idea", "Track 2"])
        XCTAssertEqual(saved.tracks[0].regions.count, 0)
        let region = try XCTUnwrap(saved.tracks.count > 1 ? saved.tracks[1].regions.first : nil, "the kept take is on the track made for it")
        XCTAssertEqual(region.lengthFrames, 48_000)
        let kept = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16).values
        let start = Int(region.timelineStartFrame)
        XCTAssertLessThanOrEqual(start + 48_000, 600_000)
        XCTAssertEqual(kept, Array(input[start..<(start + 48_000)]), "played at \(start), kept at \(start)")
    }
}
