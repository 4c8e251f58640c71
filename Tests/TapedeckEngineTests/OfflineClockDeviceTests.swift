import Foundation
import XCTest
import CTestSupport
import Synchronization
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckDevices

/// Counts the audio thread's heap allocations between its first and last period.
private final class OfflineAllocationProbe: AudioThreadProbe, @unchecked Sendable {
    let count = Atomic<Int64>(-1)
    func audioThreadBegins() { td_alloc_count_begin() }
    func audioThreadEnds() { count.store(td_alloc_count_end(), ordering: .releasing) }
}

/// The offline backend: unpaced periods, each stamped with the monotonic clock into a
/// preallocated array, and the engine running on it to an exact frame count.
final class OfflineClockDeviceTests: XCTestCase {
    private func buffers(_ channels: Int, _ frames: Int, value: Float) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
        let p = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        for c in 0..<channels {
            p[c] = .allocate(capacity: frames)
            p[c].initialize(repeating: value, count: frames)
        }
        return p
    }

    private func free(_ p: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, _ channels: Int) {
        for c in 0..<channels { p[c].deallocate() }
        p.deallocate()
    }

    func testWritesAreStampedInOrderAndTheDurationsAreTheGapsBetweenThem() throws {
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 64, capacityPeriods: 10)
        XCTAssertEqual(device.configuration.periodFrames, 64)
        XCTAssertEqual(device.configuration.playbackChannels, 2)
        XCTAssertNil(device.configuration.captureFormat)
        let out = buffers(2, 64, value: 0.5)
        defer { free(out, 2) }
        try device.startStreams()
        for _ in 0..<5 {
            XCTAssertEqual(device.write(from: out, frameCount: 64), .ok)
            usleep(2000)
        }
        XCTAssertEqual(device.stampedPeriods, 5)
        let stamps = device.periodStamps()
        XCTAssertEqual(stamps, stamps.sorted())
        let gaps = device.periodNanoseconds()
        XCTAssertEqual(gaps.count, 4, "N stamps give N − 1 durations")
        XCTAssertEqual(gaps, zip(stamps.dropFirst(), stamps).map { $0 - $1 })
        // Each gap holds one 2 ms sleep (nanosleep never returns early).
        for g in gaps { XCTAssertGreaterThanOrEqual(g, 2_000_000) }
        // Load is the gap over the period's length (64 / 48000 s = 1.333 ms).
        for (load, g) in zip(device.loads(), gaps) { XCTAssertEqual(load, Double(g) / (64e9 / 48000), accuracy: 1e-9) }
        // The thread's CPU clock does not count the sleeps: well under the wall gaps.
        let cpu = device.periodCPUNanoseconds()
        XCTAssertEqual(cpu.count, 4)
        for (c, g) in zip(cpu, gaps) {
            XCTAssertGreaterThanOrEqual(c, 0)
            XCTAssertLessThan(c, g - 1_000_000)
        }
        XCTAssertEqual(device.cpuLoads().count, 4)

        // A restart forgets the stamps; a full array stops stamping and counts the rest.
        try device.startStreams()
        for _ in 0..<13 { _ = device.write(from: out, frameCount: 64) }
        XCTAssertEqual(device.stampedPeriods, 10)
        XCTAssertEqual(device.unstampedPeriods, 3)
        XCTAssertEqual(device.periodNanoseconds().count, 9)
        XCTAssertTrue(device.periodNanoseconds().allSatisfy { $0 >= 0 })
    }

    func testWithCaptureReadsReturnSilenceAndMarkThePeriods() throws {
        let device = OfflineClockDevice(sampleRate: 96000, captureChannels: 3, playbackChannels: 2, periodFrames: 128,
                                        capacityPeriods: 8)
        XCTAssertEqual(device.configuration.captureChannels, 3)
        XCTAssertEqual(device.configuration.captureFormat, .float32)
        let input = buffers(3, 128, value: 1)
        let out = buffers(2, 128, value: 0)
        defer { free(input, 3); free(out, 2) }
        try device.startStreams()
        for _ in 0..<4 {
            XCTAssertEqual(device.read(into: input, frameCount: 128), .ok)
            XCTAssertEqual(device.write(from: out, frameCount: 128), .ok)
        }
        for c in 0..<3 { XCTAssertTrue(UnsafeBufferPointer(start: input[c], count: 128).allSatisfy { $0 == 0 }) }
        XCTAssertEqual(device.stampedPeriods, 4, "one stamp per period (on the read), not one per call")
    }

    func testPlaybackEngineRunsToItsEndFrameOnePeriodPerStamp() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/tone.wav"
        let frames = 48_000 + 37 // not a whole number of periods
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32,
                                                                            sampleRate: 48000, channelCount: 1))
        let samples = (0..<frames).map { Float(sin(Double($0) * 0.05) * 0.5) }
        try samples.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: $0.count) }
        try writer.close()

        let periods = (frames + 63) / 64
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 64, capacityPeriods: periods + 4)
        let engine = Engine(device: device)
        try engine.prepare(try GraphSpec(file: path))
        engine.setEndFrame(Int64(frames))
        engine.play()
        try engine.start()
        let deadline = Date().addingTimeInterval(30)
        // Unpaced and idle once stopped: the device then stops moving (and stamping).
        while engine.status().transport != .stopped || engine.status().deviceFrame == 0, Date() < deadline { usleep(1000) }
        let status = engine.status()
        engine.close()
        XCTAssertNil(status.lastError)
        XCTAssertEqual(status.xrunCount, 0)
        XCTAssertEqual(status.positionFrame, Int64(frames), "stops on its end frame")
        XCTAssertEqual(device.stampedPeriods, periods, "one period per stamp, none while idle")
        XCTAssertEqual(device.unstampedPeriods, 0)
        let gaps = device.periodNanoseconds()
        XCTAssertEqual(gaps.count, periods - 1)
        XCTAssertTrue(gaps.allSatisfy { $0 >= 0 })
        XCTAssertGreaterThan(gaps.reduce(0, +), 0)
    }

    func testCaptureEngineRecordsExactlyItsFrameCountOfSilence() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let device = OfflineClockDevice(sampleRate: 48000, captureChannels: 2, playbackChannels: 0, periodFrames: 64,
                                        capacityPeriods: 1000)
        let path = dir + "/take.wav"
        let track = GraphSpec.Track(name: "in", sources: [], channelCount: 2, input: GraphSpec.Input(deviceChannels: [1, 2]))
        let run = try Fixture.record(device: device, spec: GraphSpec(tracks: [track], sampleRate: 48000),
                                     takes: [TakeRequest(track: 0, channelCount: 2, path: path, container: .wav, encoding: .int24)],
                                     gate: TakeGate(recordPoint: 0, maxFrames: 20_000))
        XCTAssertNil(run.status.lastError)
        XCTAssertEqual(run.outcomes.first?.frameCount, 20_000)
        XCTAssertGreaterThanOrEqual(device.stampedPeriods, (20_000 + 63) / 64, "one stamp per period")
        let reader = try AudioFileReader(path: path)
        XCTAssertEqual(reader.frameCount, 20_000)
        XCTAssertEqual(reader.channelCount, 2)
        let a = UnsafeMutablePointer<Float>.allocate(capacity: 4096), b = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { a.deallocate(); b.deallocate() }
        var loudest: Float = 0
        while case let n = try reader.read(into: [a, b], frameCount: 4096), n > 0 {
            for i in 0..<n { loudest = max(loudest, abs(a[i]), abs(b[i])) }
        }
        XCTAssertEqual(loudest, 0, "the offline backend captures silence")
    }

    func testStampingAllocatesNothingOnTheAudioThread() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let device = OfflineClockDevice(sampleRate: 48000, captureChannels: 2, playbackChannels: 2, periodFrames: 64,
                                        capacityPeriods: 100) // fewer than the run: the overflow path runs too
        let probe = OfflineAllocationProbe()
        var options = EngineOptions()
        options.audioThreadProbe = probe
        let track = GraphSpec.Track(name: "in", sources: [], channelCount: 2, input: GraphSpec.Input(deviceChannels: [1, 2]))
        let run = try Fixture.record(device: device, spec: GraphSpec(tracks: [track], sampleRate: 48000),
                                     takes: [TakeRequest(track: 0, channelCount: 2, path: dir + "/take.wav", container: .wav, encoding: .int24)],
                                     gate: TakeGate(recordPoint: 0, maxFrames: 12_800), options: options)
        XCTAssertNil(run.status.lastError)
        XCTAssertEqual(device.stampedPeriods, 100)
        XCTAssertGreaterThanOrEqual(device.unstampedPeriods, 100, "the take alone spans 200 periods")
        XCTAssertEqual(probe.count.load(ordering: .acquiring), 0)
    }
}
