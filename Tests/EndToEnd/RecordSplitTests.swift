import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `tapedeck record --split`: a long take from the unpaced `filetap` device in pieces that
/// are, joined, the input bit for bit, placed back to back so the track plays them as one.
final class RecordSplitTests: XCTestCase {
    /// The test: ten minutes split every minute is ten files whose samples, one
    /// after the other, are the input's, and the session's export is the input again.
    func testTenMinuteTakeSplitEveryMinuteIsTheInputInTenPieces() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/long")
        try folder.create(Session(sampleRate: 48000))
        let rate = 48000, minute = 60 * rate, frames = 10 * minute
        // A second more than is recorded: filetap repeats stale data once its input runs out.
        let input = Self.signal16(count: (frames + rate) * 2, seed: 29)
        input.withUnsafeBytes { FileManager.default.createFile(atPath: dir.path + "/in.raw", contents: Data($0)) }
        let r = try Tapedeck.run(["record", folder.path, "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                  "--channels", "1,2", "--bits", "16", "--duration", "10:00", "--split", "1m", "--json"],
                                 environment: RecordSupport.environment, timeout: 600)
        XCTAssertEqual(r.status, 0, r.stderr)
        let done = try XCTUnwrap(RecordSupport.jsonLines(r.stdout).last)
        XCTAssertEqual(done["frames"] as? Int, frames, "the take's frames are its pieces' together")
        XCTAssertEqual((done["pieces"] as? [String])?.count, 10)
        // Not played over: the take starts on the input's first frame (no latency offset).
        let latency = try XCTUnwrap(done["latency_frames"] as? Int)
        XCTAssertEqual(latency, 0)

        let regions = try folder.load().tracks.flatMap(\.regions)
        XCTAssertEqual(regions.count, 10, "one region per piece")
        var next: Int64 = 0
        for (k, region) in regions.enumerated() {
            XCTAssertTrue(region.file.hasSuffix(String(format: "-%03d.wav", k + 1)), "the name says the piece: \(region.file)")
            XCTAssertEqual(region.timelineStartFrame, next, "piece \(k + 1) starts where the one before ends")
            XCTAssertEqual(region.sourceOffsetFrame, 0)
            XCTAssertEqual(region.lengthFrames, Int64(minute))
            next = region.timelineEndFrame
            let path = folder.absolutePath(of: region.file)
            XCTAssertEqual(try AudioFileReader(path: path).frameCount, Int64(minute), "piece \(k + 1) holds one minute")
            // Piece k holds the take's frames [k·N, (k+1)·N): compared sample for sample.
            let mismatch = try Self.firstMismatch(path, against: input, fromFrame: (k * minute + latency))
            XCTAssertNil(mismatch, "piece \(k + 1) differs from the input at frame \(mismatch ?? 0)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).filter { $0.hasSuffix(".recording") }
        XCTAssertEqual(left, [], "every piece's crash marker went once it was placed")

        // The track plays the pieces without a gap: the export is the input over the take.
        let mix = dir.path + "/mix.wav"
        let e = try Tapedeck.run(["export", folder.path, "-o", mix, "--bits", "16"], timeout: 600)
        XCTAssertEqual(e.status, 0, e.stderr)
        XCTAssertEqual(try AudioFileReader(path: mix).frameCount, Int64(frames))
        let exportMismatch = try Self.firstMismatch(mix, against: input, fromFrame: latency)
        XCTAssertNil(exportMismatch, "the export differs from the input at frame \(exportMismatch ?? 0)")
    }

    /// A file take (`--out`) is split by size: whole frames, no piece's data over the size.
    func testFileTakeSplitBySizeKeepsEveryPieceUnderIt() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let frames = 300_000
        let input = Self.signal16(count: (frames + 48000) * 2, seed: 7)
        input.withUnsafeBytes { FileManager.default.createFile(atPath: dir.path + "/in.raw", contents: Data($0)) }
        // 1 MB of stereo 16-bit data is 262144 frames: two pieces, the second 37856 frames.
        let r = try Tapedeck.run(["record", "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16", "--channels", "1,2",
                                  "--bits", "16", "--duration", "\(frames)f", "--split", "1MB", "--out", dir.path + "/t.wav"],
                                 environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        var at = 0
        for (k, expected) in [262_144, 37_856].enumerated() {
            let path = dir.path + String(format: "/t-%03d.wav", k + 1)
            XCTAssertEqual(try AudioFileReader(path: path).frameCount, Int64(expected))
            XCTAssertNil(try Self.firstMismatch(path, against: input, fromFrame: at))
            XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".recording"))
            at += expected
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path + "/t-003.wav"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path + "/t.wav"))
        // Again into the same name: the pieces there are never written over, refused up front.
        let again = try Tapedeck.run(["record", "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16", "--channels", "1,2",
                                      "--bits", "16", "--duration", "\(frames)f", "--split", "1MB", "--out", dir.path + "/t.wav"],
                                     environment: RecordSupport.environment)
        XCTAssertEqual(again.status, 64, again.stderr)
        XCTAssertTrue(again.stderr.contains("t-001.wav is already there"), again.stderr)
        XCTAssertEqual(try AudioFileReader(path: dir.path + "/t-002.wav").frameCount, 37_856, "untouched")
    }

    /// Nonsense is refused in one line, before any device opens or file is made.
    func testNonsenseSplitsAreRefusedInOneLine() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        for (split, says) in [("0", "longer than 0"), ("0s", "longer than 0"), ("0.5s", "at least 1 second"), ("5TB", "at most 4GB"),
                              ("10KB", "less than 1 second"), ("12", "give a length"), ("soon", "give a length")] {
            let r = try Tapedeck.run(["record", "--device", "filetap", "--split", split, "--out", dir.path + "/x.wav", "--duration", "1"],
                                     environment: RecordSupport.environment)
            XCTAssertEqual(r.status, 64, "--split \(split): \(r.stderr)")
            let lines = r.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, "--split \(split): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(says), "--split \(split): \(r.stderr)")
        }
        let both = try Tapedeck.run(["record", "--device", "filetap", "--split", "1m", "--keep", "both", "--out", dir.path + "/x.wav"],
                                    environment: RecordSupport.environment)
        XCTAssertEqual(both.status, 64, both.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    /// Killed mid-take, a split take leaves its finished pieces and the one being written,
    /// each with its own marker: `recover` places them all, back to back, and every frame
    /// they hold is the input's. Paced by `jacktap` so the kill lands mid-way.
    func testKilledSplitTakeIsRecoveredPieceByPiece() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let jack = try JackServer.start(self, folder: dir.path)
        let folder = SessionFolder(path: dir.path + "/killed")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "field", inputChannels: [1, 2], armed: true)]
        try folder.create(session)
        let input = Self.signal16(count: 48_000 * 12 * 2, seed: 11)
        input.withUnsafeBytes { FileManager.default.createFile(atPath: dir.path + "/in.raw", contents: Data($0)) }
        let stdoutPath = dir.path + "/stdout.jsonl"
        let child = try SpawnedChild([Tapedeck.binary, "record", folder.path, "--device", "jacktap:IN=\(dir.path)/in.raw",
                                      "--device-format", "s16", "--bits", "16", "--split", "1s", "--json"],
                                     environment: jack.environment, stdoutPath: stdoutPath)
        var reaped = false
        defer { if !reaped { _ = child.kill(SIGKILL) } }
        // Killed once three and a half seconds are recorded: three whole pieces and a fourth begun.
        let deadline = Date().addingTimeInterval(30)
        var frames = 0
        while frames < 168_000 && Date() < deadline {
            let text = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            frames = RecordSupport.jsonLines(text).filter { $0["event"] as? String == "status" }.last?["frames"] as? Int ?? 0
            usleep(20_000)
        }
        XCTAssertGreaterThanOrEqual(frames, 168_000, "recording never got far enough")
        let status = child.kill(SIGKILL)
        reaped = status != nil
        XCTAssertEqual(status.map { $0 & 0x7f }, SIGKILL)
        let marked = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).filter { $0.hasSuffix(".recording") }
        XCTAssertGreaterThanOrEqual(marked.count, 4, "every piece is marked until placed: \(marked)")

        let r = try Tapedeck.run(["recover", folder.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let regions = try folder.load().tracks[0].regions.sorted { $0.timelineStartFrame < $1.timelineStartFrame }
        XCTAssertGreaterThanOrEqual(regions.count, 4, r.stderr)
        var next: Int64 = 0
        for (k, region) in regions.enumerated() {
            XCTAssertTrue(region.file.hasSuffix(String(format: "-%03d.wav", k + 1)), region.file)
            XCTAssertEqual(region.timelineStartFrame, next, "piece \(k + 1) follows the one before")
            if k < regions.count - 1 { XCTAssertEqual(region.lengthFrames, 48_000, "a finished piece is whole") }
            next = region.timelineEndFrame
            let mismatch = try Self.firstMismatch(folder.absolutePath(of: region.file), against: input, fromFrame: k * 48_000)
            XCTAssertNil(mismatch, "piece \(k + 1) differs at frame \(mismatch ?? 0)")
        }
        XCTAssertGreaterThanOrEqual(next, Int64(frames) - 48_000, "at most the last second is lost")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).filter { $0.hasSuffix(".recording") }
        XCTAssertEqual(left, [])
    }

    /// Input lost to a stalled disk is silence written across piece boundaries as the
    /// input would have gone: every piece keeps its exact length and the take its span.
    func testSilenceForLostInputCrossesPieceBoundariesAtTheirFrames() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let frames = 5 * 48_000
        let input = RecordSupport.signal(frames: frames + 96_000, channels: 1, bits: 16, seed: 5)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let jack = try JackServer.start(self, folder: dir.path)
        var env = jack.environment
        // The disk stops for three seconds after the first second; the ring holds one.
        env["TAPEDECK_TEST_WRITER_STALL"] = "48000:3000"
        env["TAPEDECK_TEST_CAPTURE_RING"] = "1"
        let r = try Tapedeck.run(["record", "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16", "--bits", "16",
                                  "--duration", "\(frames)f", "--split", "1s", "--out", dir.path + "/t.wav", "--json"],
                                 environment: env, timeout: 60)
        let done = try XCTUnwrap(RecordSupport.jsonLines(r.stdout).last { $0["event"] as? String == "done" }, r.stderr)
        let dropped = try XCTUnwrap(done["dropped_frames"] as? Int)
        XCTAssertGreaterThan(dropped, 48_000, "the stall lost more than a piece's worth")
        XCTAssertEqual(done["frames"] as? Int, frames)
        var take: [Int32] = []
        for k in 1...5 {
            let piece = try RecordSupport.readInts(dir.path + String(format: "/t-%03d.wav", k), bits: 16)
            XCTAssertEqual(piece.frames, 48_000, "piece \(k) is whole")
            take += piece.values
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path + "/t-006.wav"))
        XCTAssertGreaterThanOrEqual(take.filter { $0 == 0 }.count, dropped - 100, "the lost frames are silence")
        // The take starts on the input (within one device buffer) and its first second is it.
        let offset = try XCTUnwrap((0...768).first { Array(input[$0..<($0 + 64)]) == Array(take[0..<64]) })
        XCTAssertTrue(Array(take[0..<24_000]) == Array(input[offset..<(offset + 24_000)]))
        // Whatever is not silence is the input at its own place: nothing slid across a boundary.
        for i in stride(from: 0, to: take.count, by: 97) where take[i] != 0 {
            XCTAssertEqual(take[i], input[offset + i], "frame \(i)")
            if take[i] != input[offset + i] { break }
        }
    }

    /// Deterministic pseudo-random 16-bit samples (RecordSupport's generator, kept as Int16:
    /// ten minutes of stereo as Int32 would be twice the memory).
    static func signal16(count: Int, seed: UInt64) -> [Int16] {
        var state = seed &* 0x9E3779B97F4A7C15
        return [Int16](unsafeUninitializedCapacity: count) { buffer, initialized in
            for i in 0..<count {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                buffer[i] = Int16(truncatingIfNeeded: Int64(state >> 33) % 65536 - 32768)
            }
            initialized = count
        }
    }

    /// The first frame at which the 16-bit file at `path` differs from `input` (interleaved
    /// stereo) read from `fromFrame` on, or nil: read through libsndfile and compared sample
    /// for sample as RecordSupport.readInts does, block by block so ten minutes fit.
    static func firstMismatch(_ path: String, against input: [Int16], fromFrame: Int) throws -> Int? {
        let reader = try AudioFileReader(path: path)
        let c = reader.channelCount
        guard c == 2 else { return 0 }
        let bufs = (0..<c).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 65536) }
        defer { bufs.forEach { $0.deallocate() } }
        var frame = 0
        while true {
            let n = try reader.read(into: bufs, frameCount: 65536)
            if n == 0 { return nil }
            for i in 0..<n {
                let at = (fromFrame + frame + i) * 2
                guard at + 1 < input.count else { return frame + i }
                for ch in 0..<2 where Int32((bufs[ch][i] * 32768).rounded()) != Int32(input[at + ch]) { return frame + i }
            }
            frame += n
        }
    }
}
