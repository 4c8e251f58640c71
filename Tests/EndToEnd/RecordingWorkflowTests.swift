import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// `record` with a count-in, punch range, loop takes and a transport speed, through the
/// `filetap` test device: the input file is known, so every placed frame can be checked.
final class RecordingWorkflowTests: XCTestCase {
    let period = 128, periods = 4
    var dir: URL!
    var folder: SessionFolder!
    var input: [Int32] = []

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
        folder = SessionFolder(path: dir.path + "/s")
        try folder.create(Session(sampleRate: 48000))
        input = RecordSupport.signal(frames: 400_000, channels: 1, bits: 16, seed: 11)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
    }

    /// A session with a 200 000-frame "bed" track and an empty "dub" track.
    private func addBed() throws {
        let bed = Signals.noise16(frames: 200_000, seed: 3, amplitude: 0.3)
        try Signals.write([bed], to: folder.audioFolder + "/bed.wav", encoding: .int16)
        var s = try folder.load()
        s.tracks = [Track(name: "bed", regions: [Region(file: "audio/bed.wav", timelineStartFrame: 0, lengthFrames: 200_000)]),
                    Track(name: "dub")]
        try folder.save(s)
    }

    private func record(_ args: [String]) throws -> (latency: Int, session: Session) {
        let r = try Tapedeck.run(["record", folder.path, "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                  "--channels", "1", "--bits", "16", "--period", "\(period)", "--periods", "\(periods)", "--json"] + args,
                                 environment: RecordSupport.environment, timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let done = RecordSupport.jsonLines(r.stdout).last ?? [:]
        return (done["latency_frames"] as? Int ?? -1, try folder.load())
    }

    /// The input as the take stores it (16-bit values).
    private func take(_ region: Region) throws -> [Int32] {
        try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16).values
    }

    func testAfterACountInTheTakeStartsExactlyAtTheRecordPoint() throws {
        try addBed()
        // 120 BPM 4/4: bar 3 starts at 192000; one bar of count-in starts the transport at 96000.
        let (_, s) = try record(["--track", "2", "--at", "3.1.1", "--count-in", "1", "--duration", "24000f"])
        let region = try XCTUnwrap(s.tracks[1].regions.first)
        XCTAssertEqual(region.timelineStartFrame, 192_000)
        XCTAssertEqual(region.sourceOffsetFrame, 0)
        XCTAssertEqual(region.lengthFrames, 24_000)
        // Without playback nothing is compensated: input frame k is timeline 96000 + k, so the
        // take's first frame is input frame 96000.
        XCTAssertEqual(try take(region), Array(input[96_000..<120_000]))
    }

    func testAPunchRecordsOnlyInsideTheRangeAndCrossfadesWithWhatWasThere() throws {
        try addBed()
        let (latency, s) = try record(["--track", "1", "--play", "--punch", "48000f-96000f"])
        XCTAssertEqual(latency, period * periods, "filetap's round trip is one buffer")
        let regions = s.tracks[0].regions.sorted { $0.timelineStartFrame < $1.timelineStartFrame }
        XCTAssertEqual(regions.count, 3, "bed before, the take, bed after")
        let (before, punched, after) = (regions[0], regions[1], regions[2])
        XCTAssertEqual(punched.timelineStartFrame, 48_000)
        XCTAssertEqual(punched.lengthFrames, 48_000, "exactly the punch range")
        XCTAssertEqual(punched.fadeInFrames, 240)
        XCTAssertEqual(punched.fadeOutFrames, 240)
        XCTAssertEqual(before.timelineEndFrame, 48_240, "the bed fades out across the first 5 ms of the take")
        XCTAssertEqual(before.fadeOutFrames, 240)
        XCTAssertEqual(after.timelineStartFrame, 95_760, "and fades back in across the last 5 ms")
        XCTAssertEqual(after.sourceOffsetFrame, 95_760)
        XCTAssertEqual(after.fadeInFrames, 240)
        // Transport from 48000: input frame k is timeline 48000 + k − latency.
        XCTAssertEqual(try take(punched), Array(input[latency..<(latency + 48_000)]), "the punch range, to the frame")
    }

    func testLoopRecordingMakesATakePerPassEachTheLoopsLengthAndAligned() throws {
        try addBed()
        var s = try folder.load()
        s.loopRange = FrameRange(startFrame: 24_000, endFrame: 48_000)
        s.loopEnabled = true
        try folder.save(s)
        // Three whole passes and half a fourth: stopping mid-pass keeps the partial pass.
        // (--duration is the take's length; the round trip is never in the file.)
        let (latency, after) = try record(["--track", "2", "--play", "--loop", "--duration", "84000f"])
        let takes = after.tracks[1].regions
        XCTAssertEqual(takes.count, 4)
        XCTAssertEqual(takes.map(\.lengthFrames), [24_000, 24_000, 24_000, 12_000])
        XCTAssertEqual(Set(takes.map(\.timelineStartFrame)), [24_000], "every pass on the loop's start")
        XCTAssertEqual(Set(takes.compactMap(\.takeGroup)).count, 1, "one stack of takes")
        XCTAssertEqual(takes.compactMap(\.takeNumber), [1, 2, 3, 4])
        XCTAssertEqual(takes.map(\.sourceOffsetFrame), [0, 1, 2, 3].map { Int64($0 * 24_000) })
        // The transport starts on the loop's start: each pass is the input one round trip on.
        let file = try take(Region(file: takes[0].file, timelineStartFrame: 0, lengthFrames: 84_000))
        XCTAssertEqual(file, Array(input[latency..<(latency + 84_000)]), "the passes, back to back, to the frame")
        XCTAssertEqual(after.tracks[1].activeRegions.count, 1, "one take is active")
        XCTAssertEqual(after.tracks[1].activeRegions.first?.takeNumber, 3, "the last complete pass plays, not the one cut short")
        let group = try XCTUnwrap(takes.first?.takeGroup)
        var cycled = try Tapedeck.run(["takes", folder.path, "2", "--cycle", "\(group)"])
        XCTAssertEqual(cycled.status, 0, cycled.stderr)
        XCTAssertTrue(cycled.stdout.contains("▶ take \(group).4"), "the partial pass is kept, after it: \(cycled.stdout)")
        cycled = try Tapedeck.run(["takes", folder.path, "2", "--cycle", "\(group)"])
        XCTAssertTrue(cycled.stdout.contains("▶ take \(group).1"), cycled.stdout)
        XCTAssertEqual(try folder.load().tracks[1].activeRegions.first?.takeNumber, 1, "after the last comes the first")
        let chosen = try Tapedeck.run(["takes", folder.path, "dub", "--choose", "\(group).3"])
        XCTAssertEqual(chosen.status, 0, chosen.stderr)
        XCTAssertEqual(try folder.load().tracks[1].activeRegions.first?.takeNumber, 3)
        let wrong = try Tapedeck.run(["takes", folder.path, "2", "--choose", "\(group).9"])
        XCTAssertEqual(wrong.status, 64)
        XCTAssertTrue(wrong.stderr.contains("no take 9"), wrong.stderr)
    }

    func testLoopRecordingAfterACountInCountsInOnceThenRecordsEveryPass() throws {
        try addBed()
        var s = try folder.load()
        // 120 BPM 4/4: a bar is 96000 frames. The loop is bar 2; one bar of count-in is bar 1.
        s.loopRange = FrameRange(startFrame: 96_000, endFrame: 192_000)
        s.loopEnabled = true
        try folder.save(s)
        let (latency, after) = try record(["--track", "2", "--play", "--loop", "--count-in", "1", "--duration", "240000f"])
        let takes = after.tracks[1].regions
        // The same takes the screen makes with loop and count-in (ScreenWorkflowTests): every
        // pass on the loop's start, a loop's length each, back to back in one file.
        XCTAssertEqual(takes.map(\.lengthFrames), [96_000, 96_000, 48_000])
        XCTAssertEqual(Set(takes.map(\.timelineStartFrame)), [96_000])
        XCTAssertEqual(takes.map(\.sourceOffsetFrame), [0, 96_000, 192_000])
        XCTAssertEqual(takes.compactMap(\.takeNumber), [1, 2, 3])
        // The count-in is counted once, before the first pass, and is in no take: the file
        // begins with what came in as the loop's first frame was heard.
        let file = try take(takes[0])
        XCTAssertEqual(file, Array(input[(96_000 + latency)..<(96_000 + latency + 240_000)]), "the passes, after one count-in")
    }

    func testATakeRecordedAtHalfSpeedIsPlacedInTimeAndMarked() throws {
        try addBed()
        let (latency, s) = try record(["--track", "2", "--play", "--speed", "0.5", "--duration", "48000f"])
        let region = try XCTUnwrap(s.tracks[1].regions.first)
        XCTAssertEqual(region.recordedSpeed, 0.5)
        XCTAssertEqual(region.lengthFrames, 24_000, "48000 frames played at half speed span 24000 of timeline")
        XCTAssertEqual(region.rate, 2, accuracy: 1e-9, "so at 1× it plays twice as fast, pitch kept")
        XCTAssertEqual(region.sourceOffsetFrame, 0)
        XCTAssertEqual(try take(Region(file: region.file, timelineStartFrame: 0, lengthFrames: 48_000)),
                       Array(input[latency..<(latency + 48_000)]), "the input one round trip on")
        let info = try Tapedeck.run(["info", folder.path])
        XCTAssertTrue(info.stdout.contains("rate 2.0"), info.stdout)
    }
}
