import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// Shared helpers for the transport tests: sessions with known signals, the test ALSA
/// devices (no sound card), reading what a file tap received.
enum TransportFixture {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var alsaConfigPath: String { packageRoot.appendingPathComponent("Tests/Fixtures/alsa-test.conf").path }
    static var jackScript: String { packageRoot.appendingPathComponent("Tests/Fixtures/jack-dummy.sh").path }

    static func temporaryFolder() throws -> String {
        let path = NSTemporaryDirectory() + "td-transport-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes mono float `samples` to `path`.
    static func write(_ samples: [Float], to path: String, channels: Int = 1) throws {
        let w = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000,
                                                                      channelCount: channels))
        try samples.withUnsafeBufferPointer { p in
            try w.write(Array(repeating: p.baseAddress!, count: channels), frameCount: samples.count)
        }
        try w.close()
    }

    /// A saved session in `dir/NAME.tapedeck` whose tracks each play one of `signals` from 0.
    static func session(in dir: String, name: String = "s", signals: [[Float]]) throws -> (Session, SessionFolder) {
        let folder = SessionFolder(path: "\(dir)/\(name).tapedeck")
        var session = Session(sampleRate: 48000)
        try folder.create(session)
        for (i, signal) in signals.enumerated() {
            try write(signal, to: folder.audioFolder + "/t\(i).wav")
            session.tracks.append(Track(name: "t\(i + 1)", regions: [Region(file: "audio/t\(i).wav", timelineStartFrame: 0,
                                                                         lengthFrames: Int64(signal.count))]))
        }
        try folder.save(session)
        return (session, folder)
    }

    /// A deterministic noise signal.
    static func noise(_ count: Int, seed: UInt32 = 7, amplitude: Float = 0.4) -> [Float] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max) * amplitude
        }
    }

    /// Opens a device of the test ALSA config (`filetap:…`, `jacktap:…`).
    static func device(_ name: String, capture: Int = 0, playback: Int = 2, period: Int = 256, periods: Int = 3) throws -> ALSADuplexDevice {
        let config = try ALSAConfig(path: alsaConfigPath)
        return try ALSADuplexDevice(request: DeviceRequest(name: name, sampleRate: 48000, captureChannels: capture,
                                                           playbackChannels: playback, periodFrames: period, periodCount: periods,
                                                           formats: [.float32]), config: config)
    }

    /// Interleaved float frames a file tap wrote, as (left, right).
    static func stereo(_ path: String) throws -> (left: [Float], right: [Float]) {
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        let all: [Float] = raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (stride(from: 0, to: all.count - 1, by: 2).map { all[$0] }, stride(from: 1, to: all.count, by: 2).map { all[$0] })
    }

    /// The transport requests from MIDI `transport` hands its front-end, read from its
    /// snapshots until `count` came (or `timeout` seconds passed).
    static func machineRequests(_ transport: Transport, count: Int, timeout: Double = 10) -> [MachineRequest] {
        var requests: [MachineRequest] = []
        let deadline = Date().addingTimeInterval(timeout)
        while requests.count < count && Date() < deadline {
            _ = transport.snapshot()
            requests += transport.collectMachineRequests()
            usleep(10_000)
        }
        return requests
    }

    /// Polls `transport` until `condition` holds (bounded); the last snapshot.
    @discardableResult
    static func waitFor(_ transport: Transport, timeout: Double = 20, _ condition: (TransportSnapshot) -> Bool) -> TransportSnapshot {
        let deadline = Date().addingTimeInterval(timeout)
        var snap = transport.snapshot()
        while !condition(snap) && Date() < deadline {
            usleep(2000)
            snap = transport.snapshot()
        }
        return snap
    }
}
