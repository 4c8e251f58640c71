import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine

final class EngineTests: XCTestCase {

    func testRecordedTakeIsAlignedWithPlaybackToTheFrame() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/song")
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "click"), Track(name: "overdub", armed: true)]
        try folder.create(session)
        let clickFrame = 10_007
        let click = try AudioFileWriter(path: folder.audioFolder + "/click.wav",
                                        format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        var samples = [Float](repeating: 0, count: 40_000)
        samples[clickFrame] = 0.9
        try samples.withUnsafeBufferPointer { try click.write([$0.baseAddress!], frameCount: $0.count) }
        try click.close()
        session.tracks[0].regions = [Region(file: "audio/click.wav", timelineStartFrame: 0, lengthFrames: 40_000)]

        for (period, delay) in [(256, 3 * 256 + 17), (64, 1000), (1000, 2048)] {
            let device = LoopbackDevice(periodFrames: period, delayFrames: delay)
            let plan = try PlaybackPlan(session: session, folder: folder, from: 0)
            let takePath = folder.audioFolder + "/take-\(period).wav"
            let take = TakeRequest(path: takePath, container: .wav, encoding: .float32, deviceChannels: [1], maxFrames: 30_000)
            let engine = try Engine(device: device, take: take, playback: plan)
            let summary = try Fixture.run(engine)
            XCTAssertNil(summary.error)
            XCTAssertEqual(summary.takeFrames, 30_000)
            XCTAssertEqual(summary.latencyFrames, Int64(delay))
            let recorded = try Fixture.readMono(takePath)
            let loudest = recorded.indices.max { abs(recorded[$0]) < abs(recorded[$1]) }!
            XCTAssertGreaterThan(abs(recorded[loudest]), 0.5)
            XCTAssertEqual(loudest - Int(summary.latencyFrames), clickFrame, "period \(period)")
        }
    }

    func testXrunsAreCountedAndBecomeSilenceSoTheTakeSpansItsTime() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let device = XrunDevice(periodFrames: 128, xrunCycles: [5, 40], lostFrames: 1000)
        let path = dir + "/take.wav"
        let engine = try Engine(device: device, take: TakeRequest(path: path, container: .wav, encoding: .int16,
                                                                  deviceChannels: [1], maxFrames: 12_000), playback: nil)
        let summary = try Fixture.run(engine)
        XCTAssertNil(summary.error)
        XCTAssertEqual(summary.xruns.count, 2)
        XCTAssertEqual(summary.xruns.first, XrunEvent(frame: 5 * 128, lostFrames: 1000))
        XCTAssertEqual(summary.takeFrames, 12_000)
        let take = try Fixture.readMono(path)
        XCTAssertEqual(take.count, 12_000)
        let lostSpans = summary.xruns.map { $0.frame..<($0.frame + $0.lostFrames) }
        var mismatches = 0
        for (i, v) in take.enumerated() {
            let expected: Float = lostSpans.contains { $0.contains(Int64(i)) } ? 0 : XrunDevice.signal(Int64(i))
            if v != expected { mismatches += 1 }
        }
        XCTAssertEqual(mismatches, 0, "every frame sits at the device time it was captured")
        XCTAssertEqual(engine.status().xrunCount, 2)
    }

    func testDeviceFailureStopsCleanlyAndLeavesAValidTake() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let device = XrunDevice(periodFrames: 100, xrunCycles: [], lostFrames: 0)
        device.failAtCycle = 10
        let path = dir + "/take.flac"
        let engine = try Engine(device: device, take: TakeRequest(path: path, container: .flac, encoding: .int24, deviceChannels: [1]), playback: nil)
        let summary = try Fixture.run(engine)
        XCTAssertEqual(summary.takeFrames, 1000)
        XCTAssertNotNil(summary.error)
        XCTAssertTrue(summary.error?.contains("No such device") ?? false, summary.error ?? "")
        XCTAssertEqual(engine.status().state, .failed)
        XCTAssertEqual(try Fixture.readMono(path).count, 1000)
    }

    func testChannelsThatDoNotExistAreRefusedBeforeAnythingIsWritten() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let device = XrunDevice(periodFrames: 100, xrunCycles: [], lostFrames: 0)
        XCTAssertThrowsError(try Engine(device: device, take: TakeRequest(path: dir + "/t.wav", container: .wav, encoding: .int16,
                                                                          deviceChannels: [2]), playback: nil))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/t.wav"))
    }
}
