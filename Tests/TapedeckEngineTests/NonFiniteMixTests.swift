import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckDevices

/// A file with NaN and infinite samples on a track without effects: the device hears
/// silence there (never a NaN), the rest of the track plays unchanged, and the engine counts
/// what it replaced.
final class NonFiniteMixTests: XCTestCase {
    func testNaNFromAFileNeverReachesTheDeviceAndIsCounted() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/poisoned.wav"
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32,
                                                                             sampleRate: 48000, channelCount: 1))
        var samples = [Float](repeating: 0.25, count: 20_000)
        let poisoned = [5_000, 5_001, 9_999, 12_345]
        samples[5_000] = .nan
        samples[5_001] = .infinity
        samples[9_999] = -.infinity
        samples[12_345] = .nan
        try samples.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: $0.count) }
        try writer.close()

        // The loopback cable brings the left output back as input 1, recorded as a take.
        let delay = 300
        let spec = try Fixture.spec(playing: path, inputs: [1])
        let takePath = dir + "/heard.wav"
        let run = try Fixture.record(device: LoopbackDevice(periodFrames: 256, delayFrames: delay), spec: spec,
                                     takes: [TakeRequest(track: 1, channelCount: 1, path: takePath, container: .wav, encoding: .float32)],
                                     gate: TakeGate(recordPoint: 0, maxFrames: 20_000, latencyFrames: Int64(delay)))
        XCTAssertNil(run.status.lastError)
        XCTAssertEqual(run.status.nonFiniteSamples, Int64(poisoned.count), "every bad sample is counted once")
        let heard = try Fixture.readMono(takePath)
        XCTAssertEqual(heard.count, 20_000)
        XCTAssertTrue(heard.allSatisfy(\.isFinite), "no NaN or infinity reached the device")
        // Hard left at the centre-normalised pan law, the good samples arrive at one level.
        let level = heard[1_000]
        XCTAssertGreaterThan(level, 0.1)
        for (i, x) in heard.enumerated() {
            if poisoned.contains(i) {
                XCTAssertEqual(x, 0, "frame \(i): silence in place of the bad sample")
            } else {
                XCTAssertEqual(x, level, accuracy: 1e-6, "frame \(i): the rest plays unchanged")
            }
        }
    }
}
