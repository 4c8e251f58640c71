import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// A disk that fills while `record` runs, on a real small tmpfs (issue 24): the take is
/// closed with what was written, the recording stops at once by itself (long before its
/// --duration), and stderr, the JSON lines and the exit status (74, EX_IOERR) say so with
/// how much was kept. Needs root (to mount); skipped with the reason elsewhere.
final class DiskFullRecordTests: XCTestCase {
    private var mountPoint: String!
    /// Bytes a second the takes here add: 48 kHz mono 16-bit.
    private let bytesPerSecond = 96_000
    /// Seconds of recording left on the small disk when a test starts.
    private let secondsOfRoom = 4

    override func setUpWithError() throws {
        mountPoint = try SmallDisk.mount(self, megabytes: 4)
    }

    /// Fills the small disk so that `secondsOfRoom` of recording fit before a take writer
    /// stops (it keeps ``AudioFileWriter/finishingReserveBytes`` to finish its file).
    private func fillDisk() throws {
        SmallDisk.fill(mountPoint, leavingRecording: Int64(secondsOfRoom * bytesPerSecond))
    }

    private struct Run {
        var result: Tapedeck.Result
        var seconds: Double
        var lines: [[String: Any]]
        func events(_ name: String) -> [[String: Any]] { lines.filter { $0["event"] as? String == name } }
    }

    private func record(_ args: [String], device: String, environment: [String: String]) throws -> Run {
        let started = Date()
        let r = try Tapedeck.run(["record"] + args + ["--device", device, "--device-format", "s16", "--bits", "16",
                                                     "--duration", "60", "--json"], environment: environment, timeout: 90)
        return Run(result: r, seconds: Date().timeIntervalSince(started), lines: RecordSupport.jsonLines(r.stdout))
    }

    /// The checks every full-disk recording must pass; returns the frames kept.
    private func assertStoppedLoudly(_ run: Run, file: String, line: UInt = #line) throws -> Int {
        let r = run.result
        XCTAssertEqual(r.status, 74, "a refused write is EX_IOERR: \(r.stderr)", line: line)
        XCTAssertLessThan(run.seconds, 45, "it ended by itself soon after the disk filled, not at --duration 60", line: line)
        let stopped = try XCTUnwrap(run.events("take_stopped").first, "a take_stopped event: \(r.stdout)", line: line)
        XCTAssertEqual(stopped["disk_full"] as? Bool, true, line: line)
        XCTAssertEqual(stopped["recording_stopped"] as? Bool, true, line: line)
        let kept = try XCTUnwrap(stopped["kept_frames"] as? Int, line: line)
        let done = try XCTUnwrap(run.events("done").last, line: line)
        XCTAssertEqual(done["disk_full"] as? Bool, true, line: line)
        XCTAssertEqual(done["frames"] as? Int, kept, "done reports what was kept", line: line)
        XCTAssertTrue((done["error"] as? String ?? "").contains("disk is full"), "\(done)", line: line)
        let last = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
        let clock = TimeText.clock(frames: Int64(kept), sampleRate: 48_000)
        XCTAssertTrue(last.contains("recording stopped") && last.contains("disk is full") && last.contains("kept \(clock) (\(kept) frames)"), last, line: line)
        // About the room there was: the recording ran until the disk was full, no longer.
        XCTAssertGreaterThan(kept, (secondsOfRoom - 1) * 48_000, line: line)
        XCTAssertLessThanOrEqual(kept, secondsOfRoom * 48_000, line: line)
        // The file is valid and holds exactly what was reported kept.
        XCTAssertEqual(try AudioFileReader(path: file).frameCount, Int64(kept), "the header says what was kept", line: line)
        return kept
    }

    func testRecordOutOnThePacedJackDeviceStopsAtOnceWhenTheDiskFillsAndSaysWhatWasKept() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let input = RecordSupport.signal(frames: 48_000 * 12, channels: 1, bits: 16, seed: 11)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        let jack = try JackServer.start(self, folder: dir)
        try fillDisk()
        let take = mountPoint + "/solo.wav"
        let run = try record(["--out", take], device: "jacktap:IN=\(dir)/in.raw,OUT=/dev/null", environment: jack.environment)
        let kept = try assertStoppedLoudly(run, file: take)
        // Paced: the room's seconds, and ten times the second or so a start and stop take.
        XCTAssertLessThan(run.seconds, Double(secondsOfRoom) + 15, "paced: it stopped about when the room ran out")
        let got = try RecordSupport.readInts(take, bits: 16)
        XCTAssertEqual(got.frames, kept)
        let offset = try XCTUnwrap((0...768).first { Array(input[$0..<($0 + 64)]) == Array(got.values[0..<64]) }, "the take is the input")
        XCTAssertTrue(got.values == Array(input[offset..<(offset + kept)]), "every kept frame is the input, in order")
        // Time left moved while it recorded (from the bytes a second written), and was warned of.
        let left = run.events("status").filter { $0["state"] as? String == "recording" }.compactMap { $0["disk_seconds_left"] as? Double }
        XCTAssertGreaterThanOrEqual(left.count, 2, "\(left)")
        XCTAssertGreaterThan(left.first ?? 0, left.last ?? 0, "time left falls as the take grows: \(left)")
        XCTAssertEqual(left.first ?? 0, Double(secondsOfRoom), accuracy: 1.5, "it counts the writer's reserve and the real data rate")
        XCTAssertTrue(run.events("notice").contains { ($0["text"] as? String ?? "").contains("the disk fills in about") },
                      "a warning before it ran out: \(run.result.stdout)")
    }

    func testRecordOutOnTheUnpacedFileDeviceStopsAtOnceWhenTheDiskFillsAndKeepsExactlyWhatItSays() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let input = RecordSupport.signal(frames: 48_000 * 30, channels: 1, bits: 16, seed: 12)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        try fillDisk()
        let take = mountPoint + "/solo.wav"
        let run = try record(["--out", take], device: "filetap:IN=\(dir)/in.raw,OUT=/dev/null", environment: RecordSupport.environment)
        let kept = try assertStoppedLoudly(run, file: take)
        let got = try RecordSupport.readInts(take, bits: 16)
        XCTAssertTrue(got.values == Array(input[0..<kept]), "every kept frame is the input")
        // The timeline stopped with the take (it ran on to hours before).
        let lastStatus = try XCTUnwrap(run.events("status").last)
        XCTAssertLessThan(lastStatus["position_frame"] as? Int ?? .max, 48_000 * 30, "the transport stopped soon after the disk filled")
    }

    func testARecordingIntoASessionOnAFullDiskStopsAndPlacesTheTakeWithWhatWasKept() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let input = RecordSupport.signal(frames: 48_000 * 30, channels: 1, bits: 16, seed: 13)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        let folder = SessionFolder(path: mountPoint + "/song")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        try fillDisk()
        let run = try record([folder.path], device: "filetap:IN=\(dir)/in.raw,OUT=/dev/null", environment: RecordSupport.environment)
        let region = try XCTUnwrap(try folder.load().tracks.first?.regions.first, "the take is on its track: \(run.result.stderr)")
        let path = folder.absolutePath(of: region.file)
        let kept = try assertStoppedLoudly(run, file: path)
        XCTAssertEqual(region.lengthFrames, Int64(kept), "the region is exactly what was kept")
        let lastStatus = try XCTUnwrap(run.events("status").last)
        XCTAssertLessThan(lastStatus["position_frame"] as? Int ?? .max, 48_000 * 30, "the transport stopped soon after the disk filled")
        XCTAssertEqual(run.events("take_stopped").first?["track"] as? Int, 1)
        XCTAssertTrue(run.result.stderr.contains("on track 1"), run.result.stderr)
        let got = try RecordSupport.readInts(path, bits: 16)
        XCTAssertTrue(got.values == Array(input[0..<kept]), "every kept frame is the input")
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).contains { $0.hasSuffix(".recording") },
                       "placed: no crash marker left")
    }
}

/// The screen recording onto a disk that fills: the take stops by itself, the message line
/// says the disk is full and what was kept, the transport stops, the take is on its track.
final class DiskFullScreenTests: XCTestCase {
    func testTheScreenSaysRecordingStoppedBecauseTheDiskIsFull() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let disk = try SmallDisk.mount(self, megabytes: 12)
        let session = disk + "/demo.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["demo", session, "--samples", Tapedeck.packageRoot.appendingPathComponent("Samples").path]).status, 0)
        try FileManager.default.createDirectory(atPath: dir + "/config/tapedeck", withIntermediateDirectories: true)
        let jack = try JackServer.start(self, folder: dir)
        let screen = try ScreenTmux(self, folder: dir, args: [session, "--device", "jacktap"], environment: jack.environment, width: 120)
        screen.waitFor("STOPPED")
        usleep(500_000)  // peaks built on opening settle first
        // Three seconds of the Vocal's 24-bit mono take (144,000 bytes a second) left.
        var fs = statvfs()
        XCTAssertEqual(statvfs(disk, &fs), 0)
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        FileManager.default.createFile(atPath: disk + "/filler", contents: Data(count: Int(free - AudioFileWriter.finishingReserveBytes - 3 * 144_000)))
        let before = try XCTUnwrap(try SessionFolder(path: session).load().tracks.first { $0.name == "Vocal" }).regions.map(\.file)
        screen.send("r")
        screen.waitFor("● REC")
        let text = screen.waitFor("recording stopped: the disk is full", timeout: 15)
        XCTAssertTrue(text.contains("kept 00:0"), text)
        screen.waitFor("STOPPED")
        let vocal = try XCTUnwrap(try SessionFolder(path: session).load().tracks.first { $0.name == "Vocal" })
        let region = try XCTUnwrap(vocal.regions.first { !before.contains($0.file) }, "the take is on the Vocal track")
        let path = SessionFolder(path: session).absolutePath(of: region.file)
        XCTAssertEqual(try AudioFileReader(path: path).frameCount, region.lengthFrames, "the region is what the file holds")
        XCTAssertEqual(Double(region.lengthFrames) / 48_000, 3, accuracy: 1, "about the room there was")
    }
}
