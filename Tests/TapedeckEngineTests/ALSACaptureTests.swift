import XCTest
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckDevices

/// Captures through the test config's unpaced `filetap` device.
final class ALSACaptureTests: XCTestCase {
    /// Writes `frames` × `channels` of pseudo-random `bits`-deep integers as raw `format` IN.
    private func makeInput(path: String, format: DeviceSampleFormat, bits: Int, frames: Int, channels: Int) -> [Int32] {
        var values: [Int32] = []
        values.reserveCapacity(frames * channels)
        var state: UInt64 = 0x9E3779B97F4A7C15
        let limit = Int64(1) << (bits - 1)
        for _ in 0..<(frames * channels) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            values.append(Int32(Int64(state >> 33) % (2 * limit) - limit))
        }
        var bytes: [UInt8] = []
        for v in values {
            switch format {
            case .s16: withUnsafeBytes(of: Int16(v).littleEndian) { bytes += $0 }
            case .s24: withUnsafeBytes(of: v.littleEndian) { bytes += $0 }
            case .s24Packed: withUnsafeBytes(of: v.littleEndian) { bytes += $0.prefix(3) }
            case .s32: withUnsafeBytes(of: (v << (32 - bits)).littleEndian) { bytes += $0 }
            case .float32: withUnsafeBytes(of: (Float(v) / Float(limit)).bitPattern.littleEndian) { bytes += $0 }
            }
        }
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return values
    }

    func testKnownSignalArrivesBitIdenticalInTheTake() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try ALSAConfig(path: Fixture.alsaConfigPath)
        let cases: [(DeviceSampleFormat, SampleEncoding, Int)] = [
            (.s16, .int16, 64), (.s16, .int16, 1000), (.float32, .int16, 256),
            (.s24, .int24, 256), (.s24Packed, .int24, 333), (.s32, .int24, 128), (.float32, .int24, 512),
        ]
        for (format, encoding, period) in cases {
            let bits = encoding.bits
            let channels = 2, captureFrames = 20_000
            let inPath = dir + "/in-\(format.rawValue)-\(period).raw"
            let values = makeInput(path: inPath, format: format, bits: bits, frames: captureFrames * 2, channels: channels)
            let request = DeviceRequest(name: "filetap:IN=\(inPath)", sampleRate: 48000, captureChannels: channels,
                                        playbackChannels: 0, periodFrames: period, periodCount: 4, formats: [format])
            let device = try ALSADuplexDevice(request: request, config: config)
            XCTAssertEqual(device.configuration.captureFormat, format)
            let takePath = dir + "/take-\(format.rawValue)-\(period).wav"
            let track = GraphSpec.Track(name: "in", sources: [], channelCount: 2, input: GraphSpec.Input(deviceChannels: [1, 2]))
            let run = try Fixture.record(device: device, spec: GraphSpec(tracks: [track], sampleRate: 48000),
                                         takes: [TakeRequest(track: 0, channelCount: 2, path: takePath, container: .wav, encoding: encoding)],
                                         gate: TakeGate(recordPoint: 0, maxFrames: Int64(captureFrames)))
            XCTAssertNil(run.status.lastError)
            let reader = try AudioFileReader(path: takePath)
            XCTAssertEqual(reader.frameCount, Int64(captureFrames), "\(format) period \(period)")
            let l = UnsafeMutablePointer<Float>.allocate(capacity: 4096), r = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
            defer { l.deallocate(); r.deallocate() }
            var frame = 0, mismatches = 0
            let scale = Float(Int64(1) << (bits - 1))
            while true {
                let n = try reader.read(into: [l, r], frameCount: 4096)
                if n == 0 { break }
                for i in 0..<n {
                    if Int32(l[i] * scale) != values[(frame + i) * 2] { mismatches += 1 }
                    if Int32(r[i] * scale) != values[(frame + i) * 2 + 1] { mismatches += 1 }
                }
                frame += n
            }
            XCTAssertEqual(mismatches, 0, "\(format) → \(encoding) at period \(period)")
        }
    }

    func testMissingDeviceAndImpossibleChannelCountGiveClearErrors() throws {
        let config = try ALSAConfig(path: Fixture.alsaConfigPath)
        XCTAssertThrowsError(try ALSADuplexDevice(request: DeviceRequest(name: "nosuchpcm", captureChannels: 1, playbackChannels: 0), config: config)) {
            XCTAssertTrue("\($0)".contains("nosuchpcm"), "\($0)")
        }
        XCTAssertThrowsError(try ALSADuplexDevice(request: DeviceRequest(name: "filetap48", captureChannels: 100_000, playbackChannels: 0), config: config)) {
            XCTAssertTrue("\($0)".contains("channels"), "\($0)")
        }
    }

    func testNegotiatedSettingsAreReported() throws {
        let config = try ALSAConfig(path: Fixture.alsaConfigPath)
        let device = try ALSADuplexDevice(request: DeviceRequest(name: "filetap", sampleRate: 44100, captureChannels: 2, playbackChannels: 2,
                                                                 periodFrames: 128, periodCount: 3), config: config)
        defer { device.stop() }
        let c = device.configuration
        XCTAssertEqual(c.sampleRate, 44100)
        XCTAssertEqual(c.periodFrames, 128)
        XCTAssertEqual(c.captureFormat, .float32)
        XCTAssertEqual(c.playbackLatencyFrames, Int64(c.bufferFrames))
        XCTAssertTrue(c.description.contains("44100 Hz"))
        XCTAssertTrue(config.pcmNames.contains("filetap"))
    }
}
