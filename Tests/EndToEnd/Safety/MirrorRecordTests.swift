import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `record --mirror DIR` (issue 29, item 2): every take (and every split piece) written twice,
/// the second copy by a writer of its own; a mirror that fills stops alone and the take goes
/// on, and the other way round; `recover --mirror` brings the mirror's copy in. The full
/// disks are real small tmpfs mounts (root needed; skipped with the reason elsewhere).
final class MirrorRecordTests: XCTestCase {
    private let rate = 48_000
    /// 48 kHz mono 16-bit.
    private let bytesPerSecond = 96_000

    private func run(_ args: [String], seconds: Int, input: String) throws -> (result: Tapedeck.Result, lines: [[String: Any]]) {
        let r = try Tapedeck.run(["record"] + args + ["--device", "filetap:IN=\(input),OUT=/dev/null", "--device-format", "s16",
                                                     "--bits", "16", "--duration", "\(seconds)", "--json"],
                                 environment: RecordSupport.environment, timeout: 120)
        return (r, RecordSupport.jsonLines(r.stdout))
    }

    /// A small disk with `secondsOfRoom` of recording left before a take writer stops.
    private func smallDisk(secondsOfRoom: Int) throws -> String {
        let point = try SmallDisk.mount(self, megabytes: 4)
        SmallDisk.fill(point, leavingRecording: Int64(secondsOfRoom * bytesPerSecond))
        return point
    }

    private func markers(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".recording") }.sorted()
    }

    /// Both copies of a split take are the input, piece for piece, under the same names.
    func testTheMirrorHoldsEveryPieceOfTheTakeUnderTheSameNames() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let input = RecordSupport.signal(frames: rate * 12, channels: 1, bits: 16, seed: 21)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        try FileManager.default.createDirectory(atPath: dir + "/mirror", withIntermediateDirectories: true)
        let (r, lines) = try run([folder.path, "--mirror", dir + "/mirror/", "--split", "4s"], seconds: 10, input: dir + "/in.raw")
        XCTAssertEqual(r.status, 0, r.stderr)
        let done = try XCTUnwrap(lines.last { $0["event"] as? String == "done" })
        let mirror = try XCTUnwrap(done["mirror"] as? [String: Any], "\(done)")
        XCTAssertEqual(mirror["frames"] as? Int, rate * 10)
        XCTAssertEqual(mirror["pieces"] as? Int, 3)
        XCTAssertTrue(mirror["error"] is NSNull)
        let regions = try folder.load().tracks.flatMap(\.regions)
        XCTAssertEqual(regions.count, 3)
        for region in regions {
            let name = (region.file as NSString).lastPathComponent
            let main = try Data(contentsOf: URL(fileURLWithPath: folder.absolutePath(of: region.file)))
            let copy = try Data(contentsOf: URL(fileURLWithPath: dir + "/mirror/" + name))
            XCTAssertEqual(main, copy, "\(name): the mirror's copy is the take's, byte for byte")
        }
        let got = try RecordSupport.readInts(dir + "/mirror/" + (regions[1].file as NSString).lastPathComponent, bits: 16)
        XCTAssertTrue(got.values == Array(input[(rate * 4)..<(rate * 8)]), "the second piece is the input's seconds 4 to 8")
        XCTAssertEqual(markers(in: dir + "/mirror"), [], "finished copies keep no crash marker")
        XCTAssertEqual(markers(in: folder.audioFolder), [])
    }

    /// The test: the mirror's disk fills; the take is complete, one line says the
    /// mirror stopped (once), the mirror's file is valid with what it kept.
    func testAMirrorThatFillsStopsAloneAndTheTakeIsComplete() throws {
        let small = try smallDisk(secondsOfRoom: 3)
        let dir = try Tapedeck.temporaryFolder(self).path
        let input = RecordSupport.signal(frames: rate * 14, channels: 1, bits: 16, seed: 22)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        let (r, lines) = try run([folder.path, "--mirror", small], seconds: 12, input: dir + "/in.raw")
        XCTAssertEqual(r.status, 1, "the take is whole, the mirror is not: \(r.stderr)")
        let region = try XCTUnwrap(try folder.load().tracks.first?.regions.first, r.stderr)
        XCTAssertEqual(region.lengthFrames, Int64(rate * 12), "the take went on to its end")
        let got = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16)
        XCTAssertTrue(got.values == Array(input[0..<(rate * 12)]), "the take is the input")
        let said = lines.filter { ($0["text"] as? String ?? "").contains("mirror stopped") }
        XCTAssertEqual(said.count, 1, "said once: \(r.stdout)")
        XCTAssertTrue((said.first?["text"] as? String ?? "").contains("the disk is full"), "\(said)")
        XCTAssertTrue((said.first?["text"] as? String ?? "").hasPrefix("mirror stopped (the take records on): the disk is full"), "\(said)")
        let done = try XCTUnwrap(lines.last { $0["event"] as? String == "done" })
        XCTAssertEqual(done["frames"] as? Int, rate * 12)
        let mirror = try XCTUnwrap(done["mirror"] as? [String: Any])
        XCTAssertTrue((mirror["error"] as? String ?? "").contains("disk is full"), "\(mirror)")
        let kept = try XCTUnwrap(mirror["frames"] as? Int)
        XCTAssertGreaterThan(kept, rate * 2)
        XCTAssertLessThanOrEqual(kept, rate * 3)
        let copy = try RecordSupport.readInts(small + "/" + (region.file as NSString).lastPathComponent, bits: 16)
        XCTAssertEqual(copy.frames, kept, "the mirror's header says what it kept")
        XCTAssertTrue(copy.values == Array(input[0..<kept]))
        XCTAssertEqual(markers(in: small), [], "the take holds more than the mirror: the mirror is no take to recover")
    }

    /// The other way round: the take's disk fills, the mirror records the whole take, and
    /// `recover --mirror` brings it into the session once there is room.
    func testWhenTheTakesDiskFillsTheMirrorIsCompleteAndRecoverBringsItIn() throws {
        let small = try smallDisk(secondsOfRoom: 3)
        let dir = try Tapedeck.temporaryFolder(self).path
        let input = RecordSupport.signal(frames: rate * 12, channels: 1, bits: 16, seed: 23)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        // The session was created before the disk filled.
        try FileManager.default.removeItem(atPath: small + "/filler")
        let folder = SessionFolder(path: small + "/s.tapedeck")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        SmallDisk.fill(small, leavingRecording: Int64(3 * bytesPerSecond))
        try FileManager.default.createDirectory(atPath: dir + "/mirror", withIntermediateDirectories: true)

        let (r, lines) = try run([folder.path, "--mirror", dir + "/mirror"], seconds: 10, input: dir + "/in.raw")
        XCTAssertEqual(r.status, 74, "the take's disk refused a write: \(r.stderr)")
        let stopped = try XCTUnwrap(lines.first { $0["event"] as? String == "take_stopped" })
        XCTAssertEqual(stopped["recording_stopped"] as? Bool, false, "the mirror records on")
        XCTAssertTrue((stopped["text"] as? String ?? "").contains("its mirror records on"), "\(stopped)")
        let done = try XCTUnwrap(lines.last { $0["event"] as? String == "done" })
        let mirror = try XCTUnwrap(done["mirror"] as? [String: Any])
        XCTAssertEqual(mirror["frames"] as? Int, rate * 10, "the mirror holds the whole take")
        let name = ((mirror["file"] as? String ?? "") as NSString).lastPathComponent
        let copy = try RecordSupport.readInts(dir + "/mirror/" + name, bits: 16)
        XCTAssertTrue(copy.values == Array(input[0..<(rate * 10)]), "the mirror's copy is the input")
        XCTAssertTrue(r.stderr.contains("recover \(folder.path) --mirror \(dir)/mirror"), r.stderr)
        let short = try XCTUnwrap(try folder.load().tracks.first?.regions.first)
        XCTAssertLessThan(short.lengthFrames, Int64(rate * 4), "the session holds what its disk took")
        XCTAssertEqual(markers(in: dir + "/mirror"), [name + ".recording"], "the mirror's copy stays marked until brought in")

        // Still full (the writers' finishing reserve taken too): refused in one line, nothing lost.
        FileManager.default.createFile(atPath: small + "/filler2", contents: Data(count: Int(SmallDisk.freeBytes(small))))
        let refused = try Tapedeck.run(["recover", folder.path, "--mirror", dir + "/mirror"])
        XCTAssertEqual(refused.status, 1, refused.stdout + refused.stderr)
        XCTAssertTrue(refused.stdout.contains("cannot copy it into the session"), refused.stdout)
        XCTAssertEqual(markers(in: dir + "/mirror"), [name + ".recording"])

        try FileManager.default.removeItem(atPath: small + "/filler")
        try FileManager.default.removeItem(atPath: small + "/filler2")
        let recovered = try Tapedeck.run(["recover", folder.path, "--mirror", dir + "/mirror"])
        XCTAssertEqual(recovered.status, 0, recovered.stdout + recovered.stderr)
        let regions = try folder.load().tracks.flatMap(\.regions)
        XCTAssertEqual(regions.count, 1, "the short region was replaced, not doubled")
        XCTAssertEqual(regions.first?.lengthFrames, Int64(rate * 10))
        XCTAssertEqual(regions.first?.timelineStartFrame, short.timelineStartFrame)
        let whole = try RecordSupport.readInts(folder.absolutePath(of: regions[0].file), bits: 16)
        XCTAssertTrue(whole.values == Array(input[0..<(rate * 10)]), "the session's take is now the whole input")
        XCTAssertEqual(markers(in: dir + "/mirror"), [])
        XCTAssertEqual(try Tapedeck.run(["recover", folder.path, "--mirror", dir + "/mirror"]).status, 0, "safe to run again")
        XCTAssertEqual(try folder.load().tracks.flatMap(\.regions).count, 1)
    }

    /// Its own writer, on a paced (JACK) device: the take's disk stops answering for three
    /// seconds with a one-second ring, so the take loses two seconds (silence, said); the
    /// mirror's writer never waited on that disk, and its copy is the whole input.
    func testAStalledTakeDiskDoesNotHoldUpTheMirror() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let frames = 5 * rate
        let input = RecordSupport.signal(frames: frames + 96_000, channels: 1, bits: 16, seed: 24)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        let jack = try JackServer.start(self, folder: dir)
        var env = jack.environment
        env["TAPEDECK_TEST_WRITER_STALL"] = "48000:3000"
        env["TAPEDECK_TEST_CAPTURE_RING"] = "1"
        try FileManager.default.createDirectory(atPath: dir + "/mirror", withIntermediateDirectories: true)
        let r = try Tapedeck.run(["record", "--device", "jacktap:IN=\(dir)/in.raw", "--device-format", "s16", "--bits", "16",
                                  "--duration", "\(frames)f", "--out", dir + "/take.wav", "--mirror", dir + "/mirror", "--json"],
                                 environment: env, timeout: 60)
        let done = try XCTUnwrap(RecordSupport.jsonLines(r.stdout).last { $0["event"] as? String == "done" }, r.stderr)
        XCTAssertGreaterThan(done["dropped_frames"] as? Int ?? 0, rate, "the take's stalled disk lost input: \(done)")
        let mirror = try XCTUnwrap(done["mirror"] as? [String: Any])
        XCTAssertEqual(mirror["dropped_frames"] as? Int, 0, "the mirror lost nothing")
        XCTAssertEqual(mirror["frames"] as? Int, frames)
        let take = try RecordSupport.readInts(dir + "/take.wav", bits: 16).values
        let copy = try RecordSupport.readInts(dir + "/mirror/take.wav", bits: 16).values
        XCTAssertEqual(take.count, frames)
        XCTAssertEqual(copy.count, frames)
        let offset = try XCTUnwrap((0...768).first { Array(input[$0..<($0 + 64)]) == Array(copy[0..<64]) }, "the mirror is the input")
        XCTAssertTrue(copy == Array(input[offset..<(offset + frames)]), "the mirror is the whole input, in order")
        XCTAssertTrue(take.filter { $0 == 0 }.count > rate, "the take has the stall's silence")
        XCTAssertTrue(r.stderr.contains("input frames were lost"), r.stderr)
    }

    /// A crash (SIGKILL) while recording with a mirror, and the take's disk lost with it:
    /// `recover --mirror` repairs the mirror's copy and places it where the take was recorded.
    func testAfterACrashThatTookTheTakesDiskTheMirrorIsRecoveredOntoTheTrack() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let jack = try JackServer.start(self, folder: dir)
        let input = RecordSupport.signal(frames: rate * 20, channels: 1, bits: 16, seed: 25)
        RecordSupport.writeRaw(input, bits: 16, to: dir + "/in.raw")
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        try FileManager.default.createDirectory(atPath: dir + "/mirror", withIntermediateDirectories: true)
        let stdoutPath = dir + "/stdout.jsonl"
        let child = try SpawnedChild([Tapedeck.binary, "record", folder.path, "--device", "jacktap:IN=\(dir)/in.raw", "--device-format", "s16",
                                      "--bits", "16", "--at", "2", "--mirror", dir + "/mirror", "--json"],
                                     environment: jack.environment, stdoutPath: stdoutPath)
        var reaped = false
        defer { if !reaped { _ = child.kill(SIGKILL) } }
        func recorded() -> Int {
            let text = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            return RecordSupport.jsonLines(text).last { $0["event"] as? String == "status" }?["frames"] as? Int ?? 0
        }
        let deadline = Date().addingTimeInterval(30)
        while recorded() < 3 * rate && Date() < deadline { usleep(20_000) }
        XCTAssertGreaterThanOrEqual(recorded(), 3 * rate, "it recorded")
        reaped = child.kill(SIGKILL) != nil
        let marked = markers(in: dir + "/mirror")
        XCTAssertEqual(marked.count, 1, "the mirror's copy is marked as unfinished")
        // The take's disk is gone: only the mirror is left.
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder) { unlink(folder.audioFolder + "/" + file) }

        let r = try Tapedeck.run(["recover", folder.path, "--mirror", dir + "/mirror"])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("on track 1 at 00:02.000"), r.stdout)
        let region = try XCTUnwrap(try folder.load().tracks.first?.regions.first)
        XCTAssertEqual(region.timelineStartFrame, Int64(2 * rate), "placed where it was recorded")
        XCTAssertGreaterThanOrEqual(region.lengthFrames, Int64(2 * rate), "everything up to about a second before the kill")
        let got = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16)
        XCTAssertEqual(Int64(got.frames), region.lengthFrames)
        let offset = try XCTUnwrap((0...768).first { Array(input[$0..<($0 + 64)]) == Array(got.values[0..<64]) }, "the take is the input")
        XCTAssertTrue(got.values == Array(input[offset..<(offset + got.frames)]), "every recovered frame is the input")
        XCTAssertEqual(markers(in: dir + "/mirror"), [])
    }

    /// The mistakes people make, each refused in one line before anything records.
    func testAMirrorThatCannotBeIsRefusedBeforeRecording() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        FileManager.default.createFile(atPath: dir + "/file", contents: Data())
        let cases: [([String], String)] = [
            ([folder.path, "--mirror", dir + "/nowhere"], "No such file or directory"),
            ([folder.path, "--mirror", dir + "/file"], "not a folder"),
            ([folder.path, "--mirror", ""], "needs a folder"),
            // Refused by the one write guard, before the transport would say the same.
            ([folder.path, "--mirror", folder.audioFolder], "is inside audio/ of the session s.tapedeck"),
            ([folder.path, "--mirror", dir, "--retro", "5"], "cannot be combined"),
        ]
        for (args, words) in cases {
            let r = try Tapedeck.run(["record"] + args + ["--device", "filetap", "--duration", "1"], environment: RecordSupport.environment)
            XCTAssertNotEqual(r.status, 0, "\(args)")
            XCTAssertTrue(r.stderr.contains(words), "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "one line: \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("Fatal"), r.stderr)
        }
        XCTAssertEqual(try folder.load().tracks.flatMap(\.regions).count, 0, "nothing recorded")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).filter { !$0.hasPrefix(".") }, [])
        // A file take whose mirror name is taken.
        FileManager.default.createFile(atPath: dir + "/x.wav", contents: Data())
        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        let taken = try Tapedeck.run(["record", "--device", "filetap", "--duration", "1", "--out", dir + "/out/x.wav", "--mirror", dir],
                                     environment: RecordSupport.environment)
        XCTAssertNotEqual(taken.status, 0)
        XCTAssertTrue(taken.stderr.contains("already there"), taken.stderr)
        let bad = try Tapedeck.run(["recover", folder.path, "--mirror", dir + "/nowhere"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("no such folder"), bad.stderr)
    }
}
