import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckTakes

/// A crash leaves a take whose header is up to a second old and a marker beside it;
/// recovery must make every written frame readable and put the take on its track, once.
final class TakeRecoveryTests: XCTestCase {
    /// Writes `total` frames with a header update after `flushed`, then copies the file as a
    /// crash would leave it (the writer never closes it).
    private func crashedTake(at path: String, container: AudioContainer, flushed: Int, total: Int) throws -> [Float] {
        let format = AudioFileFormat(container: container, encoding: .int16, sampleRate: 48000, channelCount: 1)
        let scratch = path + ".live"
        let writer = try AudioFileWriter(path: scratch, format: format)
        let samples = (0..<total).map { Float(Int16(truncatingIfNeeded: $0 * 7 % 20000 - 10000)) / 32768 }
        try samples.withUnsafeBufferPointer { buf in
            try writer.write([buf.baseAddress!], frameCount: flushed)
            writer.updateHeader()
            try writer.write([buf.baseAddress! + flushed], frameCount: total - flushed)
        }
        writer.updateHeader()  // flushes libsndfile; the test then appends "unflushed" audio by hand for WAV
        try FileManager.default.copyItem(atPath: scratch, toPath: path)
        try? writer.close()
        try? FileManager.default.removeItem(atPath: scratch)
        return samples
    }

    func testWAVWithAStaleHeaderIsRepairedFromItsLength() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/t.wav"
        _ = try crashedTake(at: path, container: .wav, flushed: 1000, total: 1000)
        // Audio written after the last header update: 500 more 16-bit frames and half a frame.
        let fh = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        fh.seekToEndOfFile()
        fh.write(Data(repeating: 0x11, count: 1001))
        try fh.close()
        XCTAssertEqual(try AudioFileReader(path: path).frameCount, 1000, "libsndfile trusts the stale header")
        let outcome = try WAVHeaderRepair.repair(path: path)
        XCTAssertEqual(outcome.frameCount, 1500)
        XCTAssertTrue(outcome.changed)
        XCTAssertEqual(try AudioFileReader(path: path).frameCount, 1500)
        XCTAssertFalse(try WAVHeaderRepair.repair(path: path).changed, "a second repair changes nothing")
    }

    func testRecoverPutsMarkedTakesOnTheirTrackOnce() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "a"), Track(name: "b")]
        try folder.create(session)
        for (name, container) in [("w.wav", AudioContainer.wav), ("f.flac", .flac)] {
            let path = folder.audioFolder + "/" + name
            _ = try crashedTake(at: path, container: container, flushed: 30_000, total: 50_000)
            try TakeMarker(file: "audio/" + name, session: folder.path, trackIndex: 1, timelineStartFrame: 480,
                           latencyFrames: 100, sampleRate: 48000, deviceChannels: [1], startedAtSeconds: 0).write(forAudio: path)
        }
        let found = try TakeRecovery.recover(session: folder)
        XCTAssertEqual(found.count, 2)
        for r in found {
            XCTAssertNil(r.problem)
            XCTAssertGreaterThanOrEqual(r.frameCount, 30_000, r.file)
        }
        session = try folder.load()
        XCTAssertEqual(session.tracks[1].regions.count, 2)
        for region in session.tracks[1].regions {
            XCTAssertEqual(region.timelineStartFrame, 480)
            XCTAssertEqual(region.sourceOffsetFrame, 100)
            XCTAssertEqual(region.lengthFrames, try AudioFileReader(path: folder.absolutePath(of: region.file)).frameCount - 100)
        }
        XCTAssertEqual(try TakeRecovery.recover(session: folder), [], "markers are gone")
        let audio = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder)
        XCTAssertFalse(audio.contains { $0.hasSuffix(".recording") })
    }

    /// A take killed between creating its file and finishing its header (the clean-clone CI's
    /// kill matrix hit it once: recover left the marker, as the file was "not a WAVE file")
    /// holds no audio: recover removes it and its marker and says so; a longer damaged file is
    /// kept with its marker.
    func testATakeKilledBeforeItsHeaderWasWrittenIsResolvedAndADamagedOneKept() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "a")]
        try folder.create(session)
        let files: [(String, Data)] = [("empty.wav", Data()), ("cut.wav", Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8)),
                                       ("cut.flac", Data("fLaC".utf8)), ("garbage.wav", Data(repeating: 0x55, count: 4096))]
        for (name, bytes) in files {
            let path = folder.audioFolder + "/" + name
            try bytes.write(to: URL(fileURLWithPath: path))
            try TakeMarker(file: "audio/" + name, session: folder.path, trackIndex: 0, timelineStartFrame: 0,
                           latencyFrames: 0, sampleRate: 48000, deviceChannels: [1], startedAtSeconds: 0).write(forAudio: path)
        }
        let found = try TakeRecovery.recover(session: folder)
        XCTAssertEqual(found.count, 4)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).sorted()
        XCTAssertEqual(left, ["garbage.wav", "garbage.wav.recording"], "only the damaged file (and its marker) stays")
        for r in found where r.file != "audio/garbage.wav" {
            XCTAssertTrue(r.problem?.contains("holds no audio") == true, "\(r.file): \(r.problem ?? "")")
        }
        XCTAssertTrue(found.first { $0.file == "audio/garbage.wav" }?.problem?.contains("cannot repair") == true)
        XCTAssertEqual(try folder.load().tracks[0].regions, [], "nothing placed")
    }

    /// A killed take lands where a clean stop would have put it: at its record point, punched
    /// in with crossfades, or as one take per loop pass, scaled for its speed (issue 13).
    func testRecoveryPlacesPunchLoopAndSpeedTakesAsACleanStopWould() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "bed", regions: [Region(file: "audio/bed.wav", timelineStartFrame: 0, lengthFrames: 200_000)]),
                          Track(name: "loops"), Track(name: "slow")]
        try folder.create(session)
        let punchRange = FrameRange(startFrame: 48000, endFrame: 96000)
        let loop = FrameRange(startFrame: 10_000, endFrame: 30_000)
        var markers: [(String, TakeMarker)] = []
        var punch = TakeMarker(file: "audio/p.wav", session: folder.path, trackIndex: 0, trackName: "bed", timelineStartFrame: 48000,
                               latencyFrames: 0, sampleRate: 48000, deviceChannels: [1], startedAtSeconds: 0)
        punch.placement = .punch(range: punchRange, crossfadeFrames: 240)
        markers.append(("p.wav", punch))
        var looped = TakeMarker(file: "audio/l.wav", session: folder.path, trackIndex: 1, trackName: "loops", timelineStartFrame: 10_000,
                                latencyFrames: 100, sampleRate: 48000, deviceChannels: [1], startedAtSeconds: 0)
        looped.placement = .loopPasses(loop: loop)
        markers.append(("l.wav", looped))
        var slow = TakeMarker(file: "audio/v.wav", session: folder.path, trackIndex: 5, trackName: "slow", timelineStartFrame: 96000,
                              latencyFrames: 0, sampleRate: 48000, deviceChannels: [1], startedAtSeconds: 0)
        slow.recordedSpeed = 0.5
        markers.append(("v.wav", slow))
        for (name, marker) in markers {
            let path = folder.audioFolder + "/" + name
            _ = try crashedTake(at: path, container: .wav, flushed: 20_000, total: 45_000)
            try marker.write(forAudio: path)
        }
        let found = try TakeRecovery.recover(session: folder)
        XCTAssertEqual(found.map(\.problem), [nil, nil, nil])
        session = try folder.load()
        // Punch: the bed is cut back around the take, crossfaded 240 frames into it.
        let bed = session.tracks[0].regions.sorted { $0.timelineStartFrame < $1.timelineStartFrame }
        XCTAssertEqual(bed.map(\.file), ["audio/bed.wav", "audio/p.wav", "audio/bed.wav"])
        XCTAssertEqual(bed[0].timelineEndFrame, 48000 + 240)
        XCTAssertEqual(bed[1].timelineStartFrame, 48000)
        XCTAssertEqual(bed[1].fadeInFrames, 240)
        XCTAssertEqual(bed[2].timelineStartFrame, 48000 + 45_000 - 240)
        // Loop: 45,000 frames after 100 of latency = two whole passes of 20,000 and a partial one.
        let passes = session.tracks[1].regions
        XCTAssertEqual(passes.map(\.timelineStartFrame), [10_000, 10_000, 10_000])
        XCTAssertEqual(passes.map(\.sourceOffsetFrame), [100, 20_100, 40_100])
        XCTAssertEqual(passes.map(\.lengthFrames), [20_000, 20_000, 4_900])
        XCTAssertEqual(Set(passes.compactMap(\.takeGroup)).count, 1)
        XCTAssertEqual(session.tracks[1].activeRegions.map(\.lengthFrames), [20_000], "the last complete pass plays, as a clean stop has it")
        // Speed: found by its track's name (the index was stale), placed over the time it spans.
        let taken = try XCTUnwrap(session.tracks[2].regions.first)
        XCTAssertEqual(taken.timelineStartFrame, 96000)
        XCTAssertEqual(taken.lengthFrames, 22_500)
        XCTAssertEqual(taken.recordedSpeed, 0.5)
    }

    func testAMarkerFromBeforePlacementsReadsAsAPlainTakeAndALinkedTakeIsLeftAlone() throws {
        let old = #"{"file":"audio/t.wav","trackIndex":0,"timelineStartFrame":5,"latencyFrames":7,"sampleRate":48000,"deviceChannels":[1],"startedAtSeconds":0}"#
        let marker = try JSONDecoder().decode(TakeMarker.self, from: Data(old.utf8))
        XCTAssertEqual(marker.placement, .plain)
        XCTAssertEqual(marker.recordedSpeed, 1)
        XCTAssertEqual(marker.timelineStartFrame, 5)

        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s")
        try folder.create(Session())
        let outside = dir + "/outside.wav"
        _ = try crashedTake(at: outside, container: .wav, flushed: 100, total: 100)
        let before = try Data(contentsOf: URL(fileURLWithPath: outside))
        symlink(outside, folder.audioFolder + "/t.wav")
        try marker.write(forAudio: folder.audioFolder + "/t.wav")
        let found = try TakeRecovery.recover(session: folder)
        XCTAssertTrue(found.first?.problem?.contains("link") ?? false, "\(found)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: outside)), before, "the file outside was not touched")
    }
}
