import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Issue 29, item 5: input a slow disk dropped becomes a marker on the timeline and a
/// labelled cue point in the take, where the gap of silence is, to the frame.
final class TakeLostInputMarkerTests: XCTestCase {
    private let frames = 3 * 48000

    /// Records `frames` into a new session with the take's disk stalled once long enough to
    /// drop one span: the unpaced device waits two seconds for a full ring, then drops, so a
    /// 2.6 s stall with a 50 ms ring loses one. The input has no zero sample: a zero in the
    /// take is a dropped frame.
    private func recordWithAStall(_ extra: [String]) throws -> (folder: SessionFolder, result: Tapedeck.Result) {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/s.tapedeck")
        try folder.create(Session(sampleRate: 48000))
        let input = RecordSupport.signal(frames: frames + 4 * 48000, channels: 1, bits: 16, seed: 9).map { $0 == 0 ? 1 : $0 }
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        var env = RecordSupport.environment
        env["TAPEDECK_TEST_WRITER_STALL"] = "48000:2600"
        env["TAPEDECK_TEST_CAPTURE_RING"] = "0.05"
        let r = try Tapedeck.run(["record", folder.path, "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                  "--bits", "16", "--duration", "\(frames)f", "--json"] + extra, environment: env, timeout: 120)
        return (folder, r)
    }

    func testAWriterStallThatDropsFramesIsMarkedInTheTakeAndOnTheTimeline() throws {
        let (folder, r) = try recordWithAStall(["--at", "1"])
        XCTAssertNotEqual(r.status, 0, "lost input fails the take's exit status")
        let session = try folder.load()
        let region = try XCTUnwrap(session.tracks.last?.regions.first)
        XCTAssertEqual(region.timelineStartFrame, 48000)
        let take = folder.absolutePath(of: region.file)
        let samples = try RecordSupport.readInts(take, bits: 16).values
        XCTAssertEqual(samples.count, frames)
        // The gap: the run of zeros in the take.
        let gapStart = try XCTUnwrap(samples.firstIndex(of: 0), "frames were dropped")
        let gapEnd = samples[gapStart...].firstIndex { $0 != 0 } ?? samples.count
        let lost = gapEnd - gapStart
        XCTAssertEqual(samples.filter { $0 == 0 }.count, lost, "one span")
        let name = "dropped \(lost)"
        let wav = try RIFFWalk(path: take)
        XCTAssertEqual(wav.cues.map(\.position), [UInt32(gapStart)], "the cue at the gap's first frame in the take")
        XCTAssertEqual(wav.cues.map(\.sampleOffset), [UInt32(gapStart)])
        XCTAssertEqual(wav.cues.map { wav.labels[$0.id] }, [name])
        XCTAssertTrue(wav.riffSizeMatchesFile, "the RIFF size holds the new chunks")
        XCTAssertEqual(session.markers, [Marker(name: name, frame: 48000 + Int64(gapStart), kind: .lostInput)], "on the timeline where the gap plays")
        let done = try XCTUnwrap(RecordSupport.jsonLines(r.stdout).last { $0["event"] as? String == "done" })
        let said = try XCTUnwrap(done["markers"] as? [[String: Any]])
        XCTAssertEqual(said.map { $0["name"] as? String }, [name], "the summary says it")
        XCTAssertEqual(said.map { $0["frame"] as? Int }, [48000 + gapStart])
        // The file still reads whole (libsndfile walks past the new chunks).
        XCTAssertEqual(try AudioFileReader(path: take).frameCount, Int64(frames))

        // Issue 43: lost input is its own kind of marker. `info` lists it as such; an export
        // leaves it out of its cues and chapters unless asked (`--markers all`).
        let info = try Tapedeck.run(["info", folder.path])
        XCTAssertTrue(info.stdout.contains("lost input: \(name)@"), info.stdout)
        try Tapedeck.run(["marker", folder.path, "add", "0.5", "Intro"])
        let out = (folder.path as NSString).deletingLastPathComponent
        let plain = try Tapedeck.run(["export", folder.path, "-o", out + "/plain.wav", "--chapters", out + "/plain.txt"], timeout: 120)
        XCTAssertEqual(plain.status, 0, plain.stderr)
        let plainWAV = try RIFFWalk(path: out + "/plain.wav")
        XCTAssertEqual(plainWAV.cues.map { plainWAV.labels[$0.id] }, ["Intro"], "only the user's marker")
        XCTAssertEqual(try String(contentsOfFile: out + "/plain.txt", encoding: .utf8), "00:00:00.500 Intro\n")
        let all = try Tapedeck.run(["export", folder.path, "-o", out + "/all.wav", "--markers", "all"], timeout: 120)
        XCTAssertEqual(all.status, 0, all.stderr)
        let allWAV = try RIFFWalk(path: out + "/all.wav")
        XCTAssertEqual(allWAV.cues.map { allWAV.labels[$0.id] }, ["Intro", name])
        XCTAssertEqual(allWAV.cues.last?.position, UInt32(48000 + gapStart))
    }

    /// A stalled audio thread on the paced JACK device: each xrun is a marker where it began
    /// on the timeline and a cue point there in the take, named with the frames it lost.
    func testAnXrunIsMarkedInTheTakeAndOnTheTimeline() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let jack = try JackServer.start(self, folder: dir.path)
        let folder = SessionFolder(path: dir.path + "/s.tapedeck")
        try folder.create(Session(sampleRate: 48000))
        RecordSupport.writeRaw(RecordSupport.signal(frames: 48_000 * 6, channels: 1, bits: 16, seed: 3), bits: 16, to: dir.path + "/in.raw")
        var env = jack.environment
        env["TAPEDECK_TEST_STALL"] = "96000:400"
        try FileManager.default.createDirectory(atPath: dir.path + "/mirror", withIntermediateDirectories: true)
        let r = try Tapedeck.run(["record", folder.path, "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16", "--bits", "16",
                                  "--duration", "3", "--at", "1", "--mirror", dir.path + "/mirror", "--json"], environment: env, timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let xruns = RecordSupport.jsonLines(r.stdout).filter { $0["event"] as? String == "xrun" }
        XCTAssertGreaterThanOrEqual(xruns.count, 1, "a 400 ms stall on a paced device overruns")
        // An xrun told before its cost and again with it, from the same frame, is one marker.
        let told = xruns.filter { x in
            (x["lost_frames"] as? Int ?? 0) > 0 || !xruns.contains { ($0["frame"] as? Int) == (x["frame"] as? Int) && ($0["lost_frames"] as? Int ?? 0) > 0 }
        }
        let expected = try told.map { x -> Marker in
            let lost = try XCTUnwrap(x["lost_frames"] as? Int)
            // Issue 43: the name always says what was lost, the first xrun's too.
            return Marker(name: lost > 0 ? "xrun: \(lost) frame\(lost == 1 ? "" : "s") lost" : "xrun: no frames lost",
                          frame: Int64(try XCTUnwrap(x["frame"] as? Int)), kind: .lostInput)
        }
        let session = try folder.load()
        XCTAssertEqual(session.markers, expected)
        XCTAssertTrue(session.markers.allSatisfy { $0.name.hasPrefix("xrun: ") && $0.name.hasSuffix(" lost") }, "\(session.markers)")
        let region = try XCTUnwrap(session.tracks.last?.regions.first)
        let wav = try RIFFWalk(path: folder.absolutePath(of: region.file))
        XCTAssertEqual(wav.cues.map { Int64($0.position) }, expected.map { $0.frame - region.timelineStartFrame })
        XCTAssertEqual(wav.cues.map { wav.labels[$0.id] }, expected.map(\.name))
        XCTAssertTrue(wav.riffSizeMatchesFile)
        // The mirror copy went through the same xruns: the same cue points.
        let mirrored = try RIFFWalk(path: dir.path + "/mirror/" + (region.file as NSString).lastPathComponent)
        XCTAssertEqual(mirrored.cues.map(\.position), wav.cues.map(\.position))
        XCTAssertEqual(mirrored.cues.map { mirrored.labels[$0.id] }, expected.map(\.name))
        // Each cue is where the take's silence for its xrun begins, to the frame.
        let samples = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16).values
        for (cue, x) in zip(wav.cues, told) {
            let at = Int(cue.position), lost = x["lost_frames"] as? Int ?? 0
            guard lost > 0, at + lost <= samples.count, at > 0 else { continue }
            XCTAssertTrue(samples[at..<(at + lost)].allSatisfy { $0 == 0 }, "silence from the cue on")
            XCTAssertNotEqual(samples[at - 1], 0, "input right before it")
        }
    }

    /// A FLAC take carries them as chapter comments (as FLAC exports carry markers), and a
    /// clock stamp as its comment's time reference.
    func testAFLACTakeGetsChapterCommentsForDroppedInputAndItsClockStamp() throws {
        let before = Date()
        let (folder, _) = try recordWithAStall(["--format", "flac", "--timestamp", "clock"])
        let after = Date()
        let session = try folder.load()
        let region = try XCTUnwrap(session.tracks.last?.regions.first)
        let take = folder.absolutePath(of: region.file)
        XCTAssertTrue(take.hasSuffix(".flac"))
        let samples = try RecordSupport.readInts(take, bits: 16).values
        XCTAssertEqual(samples.count, frames, "the audio survives the rewritten metadata")
        let gapStart = try XCTUnwrap(samples.firstIndex(of: 0))
        let lost = (samples[gapStart...].firstIndex { $0 != 0 } ?? samples.count) - gapStart
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: take)).prefix(1 << 16), as: UTF8.self)
        XCTAssertTrue(text.contains("CHAPTER001NAME=dropped \(lost)"), "the chapter names the dropped span")
        XCTAssertFalse(text.contains("CHAPTER002"))
        XCTAssertEqual(session.markers, [Marker(name: "dropped \(lost)", frame: Int64(gapStart), kind: .lostInput)])
        let reference = try XCTUnwrap(try TakeMetadata.read(path: take)?.timeReference)
        let midnight = Calendar.current.startOfDay(for: before)
        XCTAssertGreaterThanOrEqual(Double(reference) / 48000, before.timeIntervalSince(midnight) - 0.05)
        XCTAssertLessThanOrEqual(Double(reference) / 48000, after.timeIntervalSince(midnight) + 0.05)
    }

    func testATakeWithoutLostInputHasNoCuePointsAndNoMarkers() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/s.tapedeck")
        try folder.create(Session(sampleRate: 48000))
        RecordSupport.writeRaw(RecordSupport.signal(frames: 3 * 48000, channels: 1, bits: 16, seed: 4), bits: 16, to: dir.path + "/in.raw")
        let r = try Tapedeck.run(["record", folder.path, "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                  "--bits", "16", "--duration", "1"], environment: RecordSupport.environment, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let session = try folder.load()
        let region = try XCTUnwrap(session.tracks.last?.regions.first)
        let wav = try RIFFWalk(path: folder.absolutePath(of: region.file))
        XCTAssertTrue(wav.cues.isEmpty)
        XCTAssertFalse(wav.chunkIDs.contains("cue "))
        XCTAssertTrue(session.markers.isEmpty)
    }
}
