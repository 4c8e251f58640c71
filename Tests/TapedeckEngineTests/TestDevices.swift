import Foundation
import TapedeckIO
@testable import TapedeckEngine

/// A device that plays into a delay line and captures from it: what is written in one cycle
/// comes back `delayFrames` later, like a cable from the output to the input.
final class LoopbackDevice: AudioDevice, @unchecked Sendable {
    let configuration: DeviceConfiguration
    private var history: [Float]
    private var readFrame = 0
    private var writeFrame: Int

    init(sampleRate: Int = 48000, periodFrames: Int = 256, delayFrames: Int, maxFrames: Int = 1 << 20) {
        configuration = DeviceConfiguration(name: "loopback", sampleRate: sampleRate, captureChannels: 1, playbackChannels: 2,
                                            periodFrames: periodFrames, periodCount: 2, bufferFrames: delayFrames,
                                            captureFormat: .float32, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: Int64(delayFrames), linked: true)
        history = [Float](repeating: 0, count: maxFrames + delayFrames + periodFrames)
        writeFrame = delayFrames
    }

    func start() throws(DeviceError) {}
    func stop() {}

    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        for i in 0..<frameCount { channels[0][i] = readFrame + i < history.count ? history[readFrame + i] : 0 }
        readFrame += frameCount
        return .ok
    }

    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        for i in 0..<frameCount where writeFrame + i < history.count { history[writeFrame + i] = channels[0][i] }
        writeFrame += frameCount
        return .ok
    }
}

/// A capture-only device whose input at device frame f is `signal(f)`, and which reports an
/// xrun swallowing `lostFrames` of device time at the given cycles.
final class XrunDevice: AudioDevice, @unchecked Sendable {
    let configuration: DeviceConfiguration
    let xrunCycles: Set<Int>
    let lostFrames: Int64
    private var cycle = 0
    private var deviceFrame: Int64 = 0
    var failAtCycle: Int?

    init(periodFrames: Int, xrunCycles: Set<Int>, lostFrames: Int64) {
        configuration = DeviceConfiguration(name: "xrunner", sampleRate: 48000, captureChannels: 1, playbackChannels: 0,
                                            periodFrames: periodFrames, periodCount: 2, bufferFrames: periodFrames * 2,
                                            captureFormat: .s16, playbackFormat: nil,
                                            captureLatencyFrames: 0, playbackLatencyFrames: 0, linked: false)
        self.xrunCycles = xrunCycles
        self.lostFrames = lostFrames
    }

    /// A 16-bit-exact ramp that never repeats within a test.
    static func signal(_ frame: Int64) -> Float { Float(Int16(truncatingIfNeeded: frame % 30000 + 1)) / 32768 }

    func start() throws(DeviceError) {}
    func stop() {}

    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        defer { cycle += 1 }
        if failAtCycle == cycle { return .failed(code: -19) }
        if xrunCycles.contains(cycle) {
            deviceFrame += lostFrames
            return .xrun(lostFrames: lostFrames)
        }
        for i in 0..<frameCount { channels[0][i] = XrunDevice.signal(deviceFrame + Int64(i)) }
        deviceFrame += Int64(frameCount)
        return .ok
    }

    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult { .ok }
}

/// Test helpers shared by the engine tests.
enum Fixture {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var alsaConfigPath: String { packageRoot.appendingPathComponent("Tests/Fixtures/alsa-test.conf").path }

    static func temporaryFolder() throws -> String {
        let path = NSTemporaryDirectory() + "td-engine-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Reads a (small) mono file whole.
    static func readMono(_ path: String) throws -> [Float] {
        let reader = try AudioFileReader(path: path)
        var out: [Float] = []
        let buf = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { buf.deallocate() }
        while true {
            let n = try reader.read(into: [buf], frameCount: 4096)
            if n == 0 { break }
            out += UnsafeBufferPointer(start: buf, count: n)
        }
        return out
    }

    /// Runs an engine until it is done (bounded) and finishes it.
    static func run(_ engine: Engine, timeoutSeconds: Double = 30) throws -> EngineSummary {
        try engine.start()
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while !engine.isDone && Date() < deadline { usleep(2000) }
        if !engine.isDone { engine.stop() }
        return try engine.finish()
    }
}
