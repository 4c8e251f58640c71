import Foundation
import XCTest
import CTestSupport
import Synchronization
import TapedeckIO
@testable import TapedeckEngine

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
        try device.start()
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
        try device.start()
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
        try device.start()
        for _ in 0..<4 {
            XCTAssertEqual(device.read(into: input, frameCount: 128), .ok)
            XCTAssertEqual(device.write(from: out, frameCount: 128), .ok)
        }
        for c in 0..<3 { XCTAssertTrue(UnsafeBufferPointer(start: input[c], count: 128).allSatisfy { $0 == 0 }) }
        XCTAssertEqual(device.stampedPeriods, 4, "one stamp per period (on the read), not one per call")
    }

    func testPlaybackEngineRunsToTheEndOfItsPlanOnePeriodPerStamp() throws {
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
        let engine = try Engine(device: device, take: nil, playback: try PlaybackPlan(file: path))
        let summary = try Fixture.run(engine)
        XCTAssertNil(summary.error)
        XCTAssertTrue(summary.xruns.isEmpty)
        XCTAssertEqual(summary.positionFrame, Int64(periods * 64))
        XCTAssertEqual(device.stampedPeriods, periods)
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
        let take = TakeRequest(path: path, container: .wav, encoding: .int24, deviceChannels: [1, 2], maxFrames: 20_000)
        let summary = try Fixture.run(try Engine(device: device, take: take, playback: nil))
        XCTAssertNil(summary.error)
        XCTAssertEqual(summary.takeFrames, 20_000)
        XCTAssertEqual(device.stampedPeriods, (20_000 + 63) / 64)
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
        let take = TakeRequest(path: dir + "/take.wav", container: .wav, encoding: .int24, deviceChannels: [1, 2], maxFrames: 12_800)
        let probe = OfflineAllocationProbe()
        var options = EngineOptions()
        options.audioThreadProbe = probe
        let summary = try Fixture.run(try Engine(device: device, take: take, playback: nil, options: options))
        XCTAssertNil(summary.error)
        XCTAssertEqual(device.stampedPeriods, 100)
        XCTAssertEqual(device.unstampedPeriods, 100)
        XCTAssertEqual(probe.count.load(ordering: .acquiring), 0)
    }
}
