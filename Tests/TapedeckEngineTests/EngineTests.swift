import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckDevices

final class EngineTests: XCTestCase {

    func testRecordedTakeIsAlignedWithPlaybackToTheFrame() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clickFrame = 10_007
        let clickPath = dir + "/click.wav"
        let click = try AudioFileWriter(path: clickPath,
                                        format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        var samples = [Float](repeating: 0, count: 40_000)
        samples[clickFrame] = 0.9
        try samples.withUnsafeBufferPointer { try click.write([$0.baseAddress!], frameCount: $0.count) }
        try click.close()
        let spec = try Fixture.spec(playing: clickPath, inputs: [1])

        for (period, delay) in [(256, 3 * 256 + 17), (64, 1000), (1000, 2048)] {
            let device = LoopbackDevice(periodFrames: period, delayFrames: delay)
            let takePath = dir + "/take-\(period).wav"
            let take = TakeRequest(track: 1, channelCount: 1, path: takePath, container: .wav, encoding: .float32)
            let run = try Fixture.record(device: device, spec: spec, takes: [take],
                                         gate: TakeGate(recordPoint: 0, maxFrames: 30_000, latencyFrames: Int64(delay)))
            XCTAssertNil(run.status.lastError)
            XCTAssertEqual(run.outcomes.first?.frameCount, 30_000)
            XCTAssertEqual(run.startFrame, 0)
            let recorded = try Fixture.readMono(takePath)
            let loudest = recorded.indices.max { abs(recorded[$0]) < abs(recorded[$1]) }!
            XCTAssertGreaterThan(abs(recorded[loudest]), 0.5)
            XCTAssertEqual(loudest, clickFrame, "period \(period): the take's frame k is what played at timeline frame k")
        }
    }

    func testXrunsAreCountedAndBecomeSilenceSoTheTakeSpansItsTime() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let device = XrunDevice(periodFrames: 128, xrunCycles: [5, 40], lostFrames: 1000)
        let path = dir + "/take.wav"
        let run = try Fixture.record(device: device, spec: try Fixture.spec(playing: nil, inputs: [1]),
                                     takes: [TakeRequest(track: 0, channelCount: 1, path: path, container: .wav, encoding: .int16)],
                                     gate: TakeGate(recordPoint: 0, maxFrames: 12_000))
        XCTAssertNil(run.status.lastError)
        let xruns = run.events.filter { $0.kind == .deviceXrun }
        XCTAssertEqual(xruns.count, 2)
        XCTAssertEqual(xruns.first, EngineEvent(kind: .deviceXrun, frame: 5 * 128, frames: 1000))
        XCTAssertEqual(run.outcomes.first?.frameCount, 12_000)
        XCTAssertEqual(run.status.xrunCount, 2)
        let take = try Fixture.readMono(path)
        XCTAssertEqual(take.count, 12_000)
        let lostSpans = xruns.map { $0.frame..<($0.frame + $0.frames) }
        var mismatches = 0
        for (i, v) in take.enumerated() {
            let expected: Float = lostSpans.contains { $0.contains(Int64(i)) } ? 0 : XrunDevice.signal(Int64(i))
            if v != expected { mismatches += 1 }
        }
        XCTAssertEqual(mismatches, 0, "every frame sits at the device time it was captured")
    }

    func testDeviceFailureStopsCleanlyAndLeavesAValidTake() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let device = XrunDevice(periodFrames: 100, xrunCycles: [], lostFrames: 0)
        device.failAtCycle = 10
        let path = dir + "/take.flac"
        let run = try Fixture.record(device: device, spec: try Fixture.spec(playing: nil, inputs: [1]),
                                     takes: [TakeRequest(track: 0, channelCount: 1, path: path, container: .flac, encoding: .int24)],
                                     gate: TakeGate(recordPoint: 0))
        XCTAssertEqual(run.outcomes.first?.frameCount, 1000)
        XCTAssertFalse(run.status.deviceRunning)
        XCTAssertTrue(run.status.lastError?.contains("No such device") ?? false, run.status.lastError ?? "")
        XCTAssertEqual(try Fixture.readMono(path).count, 1000)
    }

    func testATakeThatCannotBeCreatedLeavesNoFilesOfItsPass() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let engine = Engine(device: XrunDevice(periodFrames: 100, xrunCycles: [], lostFrames: 0))
        try engine.prepare(try Fixture.spec(playing: nil, inputs: [1, 1]))
        let good = TakeRequest(track: 0, channelCount: 1, path: dir + "/a.wav", container: .wav, encoding: .int16)
        let bad = TakeRequest(track: 1, channelCount: 1, path: dir + "/missing/b.wav", container: .wav, encoding: .int16)
        XCTAssertThrowsError(try engine.startTakes([good, bad], gate: TakeGate()))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/a.wav"), "all takes of a pass or none")
        engine.close()
    }
}
