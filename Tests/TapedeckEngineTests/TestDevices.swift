import Foundation
import TapedeckIO
import TapedeckCore
import TapedeckDSP
@testable import TapedeckEngine
@testable import TapedeckDevices

/// A device that plays into a delay line and captures from it: what is written in one cycle
/// comes back `delayFrames` later, like a cable from the output to the input.
final class LoopbackDevice: PeriodDevice, @unchecked Sendable {
    var configuration: DeviceConfiguration
    let driver = PeriodDriver()
    private var history: [Float]
    private var readFrame = 0
    private var writeFrame: Int

    init(sampleRate: Int = 48000, periodFrames: Int = 256, delayFrames: Int, maxFrames: Int = 1 << 20) {
        configuration = DeviceConfiguration(name: "loopback", sampleRate: sampleRate, captureChannels: 1, playbackChannels: 2,
                                            periodFrames: periodFrames, periodCount: 2, bufferFrames: delayFrames,
                                            captureFormat: .float32, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: Int64(delayFrames), linked: true)
        // No clock: it runs as fast as it is asked, so the engine may wait for its disk.
        configuration.isPaced = false
        history = [Float](repeating: 0, count: maxFrames + delayFrames + periodFrames)
        writeFrame = delayFrames
    }

    func startStreams() throws(DeviceError) {}
    func stopStreams() {}

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
final class XrunDevice: PeriodDevice, @unchecked Sendable {
    var configuration: DeviceConfiguration
    let driver = PeriodDriver()
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
        configuration.isPaced = false
        self.xrunCycles = xrunCycles
        self.lostFrames = lostFrames
    }

    /// A 16-bit-exact ramp that never repeats within a test.
    static func signal(_ frame: Int64) -> Float { Float(Int16(truncatingIfNeeded: frame % 30000 + 1)) / 32768 }

    func startStreams() throws(DeviceError) {}
    func stopStreams() {}

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

    /// Track "A": `audio/dc.wav` in `folder` (written anew), a steady 0.5 for `seconds`, panned
    /// hard left, so the left output is 0.5 × whatever gain the strip applies.
    static func steadyTrack(in folder: SessionFolder, seconds: Int, sampleRate rate: Int = 48000) throws -> Track {
        let x = [Float](repeating: 0.5, count: seconds * rate)
        unlink(folder.audioFolder + "/dc.wav")
        let writer = try AudioFileWriter(path: folder.audioFolder + "/dc.wav",
                                         format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: rate, channelCount: 1))
        try x.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: x.count) }
        try writer.close()
        return Track(name: "A", pan: -1, regions: [Region(file: "audio/dc.wav", timelineStartFrame: 0, lengthFrames: Int64(x.count))])
    }

    /// Reads a (small) stereo file whole: its two channels (a mono file's one twice).
    static func readStereo(_ path: String) throws -> (left: [Float], right: [Float]) {
        let reader = try AudioFileReader(path: path)
        var left: [Float] = [], right: [Float] = []
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 4096), r = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { l.deallocate(); r.deallocate() }
        while true {
            let n = try reader.read(into: [l, r], frameCount: 4096)
            if n == 0 { break }
            left += UnsafeBufferPointer(start: l, count: n)
            right += UnsafeBufferPointer(start: reader.channelCount > 1 ? r : l, count: n)
        }
        return (left, right)
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

    /// One track playing `path` from frame 0 (channel count from the file), plus `inputs`
    /// listening tracks after it, each on the device input of that number.
    static func spec(playing path: String?, inputs: [Int] = [], inputChain: Chain = Chain(), sampleRate: Int = 48000) throws -> GraphSpec {
        var tracks: [GraphSpec.Track] = []
        if let path {
            let reader = try AudioFileReader(path: path, blockFrames: 16)
            let region = Region(file: path, timelineStartFrame: 0, lengthFrames: reader.frameCount)
            tracks.append(GraphSpec.Track(name: "play", sources: [GraphSpec.Source(path: path, region: region)],
                                          channelCount: min(reader.channelCount, 2), pan: -1))
        }
        for (k, ch) in inputs.enumerated() {
            tracks.append(GraphSpec.Track(name: "in\(k + 1)", sources: [], channelCount: 1,
                                          input: GraphSpec.Input(deviceChannels: [ch], chain: inputChain)))
        }
        return GraphSpec(tracks: tracks, sampleRate: sampleRate)
    }

    /// What a run of ``record(device:spec:takes:gate:from:options:setUp:)`` left.
    struct Recorded {
        let engine: Engine
        let outcomes: [TakeOutcome]
        let status: EngineStatus
        let events: [EngineEvent]
        /// The timeline frame of the takes' first frame.
        let startFrame: Int64
    }

    /// Prepares an engine on `device` for `spec` with the playhead at `from`, asks (before
    /// the device starts, so its first period counts) for `takes` under `gate` and to roll,
    /// runs until the takes end (bounded), closes it.
    static func record(device: AudioDevice, spec: GraphSpec, takes: [TakeRequest], gate: TakeGate, from: Int64 = 0,
                       options: EngineOptions = EngineOptions(), setUp: (Engine) -> Void = { _ in },
                       timeoutSeconds: Double = 30) throws -> Recorded {
        let engine = Engine(device: device, options: options)
        try engine.prepare(spec, position: from)
        setUp(engine)
        let set = try engine.startTakes(takes, gate: gate)
        engine.play()
        try engine.start()
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while !set.hasEnded && engine.isRunning && Date() < deadline { usleep(2000) }
        let outcomes = engine.finish(set)
        let status = engine.status()
        let start = set.startFrame
        engine.close()
        return Recorded(engine: engine, outcomes: outcomes, status: status, events: engine.drainEvents(), startFrame: start)
    }
}

/// What a device the test steps holds: a paced 48 kHz configuration with one input and two
/// outputs of one period, and those buffers (the input silent until written).
final class SteppedBuffers: @unchecked Sendable {
    let configuration: DeviceConfiguration
    let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let input: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(name: String, periodFrames: Int) {
        var config = DeviceConfiguration(name: name, sampleRate: 48000, captureChannels: 1, playbackChannels: 2,
                                         periodFrames: periodFrames, periodCount: 2, bufferFrames: 2 * periodFrames,
                                         captureFormat: .float32, playbackFormat: .float32,
                                         captureLatencyFrames: 0, playbackLatencyFrames: 0, linked: true)
        config.isPaced = true
        configuration = config
        output = .allocate(capacity: 2)
        for c in 0..<2 { (output + c).initialize(to: .allocate(capacity: periodFrames)) }
        input = .allocate(capacity: 1)
        input.initialize(to: .allocate(capacity: periodFrames))
        input[0].update(repeating: 0, count: periodFrames)
    }

    deinit {
        for c in 0..<2 { output[c].deallocate() }
        output.deallocate()
        input[0].deallocate()
        input.deallocate()
    }
}

/// A device the test steps period by period on its own thread, as JACK's cycle drives the
/// engine, with one input and two outputs. It says it is paced (the engine renders ahead only
/// for a device with a deadline); between two periods the workers have all the time they
/// need. Its one input at true device frame f is `input(f)`; it can lose device time
/// without saying so, say it holds (cannot tell yet whether it lost any), and later tell what
/// it lost, in JACK's order after a stall.
final class SteppedDevice: AudioDevice, @unchecked Sendable {
    private let buffers: SteppedBuffers
    var configuration: DeviceConfiguration { buffers.configuration }
    var output: UnsafeMutablePointer<UnsafeMutablePointer<Float>> { buffers.output }
    private var inputBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>> { buffers.input }
    private let input: (Int64) -> Float
    private var client: AudioDeviceClient?
    /// The device's own time: every frame it ran, lost ones too.
    private(set) var trueFrame: Int64 = 0
    var periodFrames: Int { configuration.periodFrames }

    init(periodFrames: Int, input: @escaping (Int64) -> Float = { _ in 0.25 }) {
        buffers = SteppedBuffers(name: "stepped", periodFrames: periodFrames)
        self.input = input
    }

    func start(client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError) {
        self.client = client
        client.audioThreadBegins(realtime: false)
    }

    func stop() {
        guard let client else { return }
        self.client = nil
        client.audioThreadEnds()
    }

    /// One period, read at the device's own time, on the calling thread; false when the
    /// engine is idle (the period still passes).
    @discardableResult
    func cycle() -> Bool {
        guard let client else { return false }
        defer { trueFrame += Int64(periodFrames) }
        for i in 0..<periodFrames { inputBuffers[0][i] = input(trueFrame + Int64(i)) }
        guard client.beginCycle() else { return false }
        client.renderCycle(input: UnsafePointer(inputBuffers), output: UnsafePointer(output), frameCount: periodFrames)
        return true
    }

    /// Device time passes unheard (not told yet).
    func lose(_ frames: Int64) { trueFrame += frames }
    /// What the device cannot tell yet (0: it can again).
    func holds(_ frames: Int64) { client?.deviceHolds(frames: frames) }
    /// What it lost, told now and skipped.
    func tellLost(_ frames: Int64) { client?.deviceDidXrun(lostFrames: frames, skippingNow: frames) }

    /// A stall as PipeWire's JACK has it: `lost` frames pass unheard, the missed cycles
    /// (`heldCycles`) run back to back while the device holds, then it tells the loss and
    /// lets go. Returns the true frame of the first held cycle.
    @discardableResult
    func stall(losing lost: Int64, heldCycles: Int = 2) -> Int64 {
        lose(lost)
        holds(Int64(periodFrames))
        let firstHeld = trueFrame
        for _ in 0..<heldCycles { cycle() }
        tellLost(lost)
        holds(0)
        return firstHeld
    }
}
