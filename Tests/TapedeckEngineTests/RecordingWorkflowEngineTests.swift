import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckDSP
@testable import TapedeckEngine
@testable import TapedeckDevices

/// Punch, count-in and click at the engine, through an in-process loopback of known delay:
/// what is played comes back `delay` frames later, exactly like a cable.
final class RecordingWorkflowEngineTests: XCTestCase {
    /// At least one period: the loopback is causal (what is read was written a cycle before).
    let delay = 2048
    let frames = 40_000

    /// A spec whose first track plays `signal` from frame 0, hard left (the loopback's input
    /// carries it at unity), and whose second listens to input 1.
    private func spec(in dir: String, signal: [Float]) throws -> GraphSpec {
        let path = dir + "/src.wav"
        let w = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        try signal.withUnsafeBufferPointer { try w.write([$0.baseAddress!], frameCount: $0.count) }
        try w.close()
        return try Fixture.spec(playing: path, inputs: [1])
    }

    private func noise(_ count: Int) -> [Float] {
        var state: UInt32 = 99
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max) * 0.5
        }
    }


    func testPunchedAudioIsExactlyThePunchRangeToTheFrame() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let signal = noise(frames)
        let spec = try spec(in: dir, signal: signal)
        for (period, a, b) in [(128, 10_007, 20_011), (256, 3, 777), (1000, 25_000, 39_999)] {
            let take = TakeRequest(track: 1, channelCount: 1, path: dir + "/punch-\(period).wav", container: .wav, encoding: .float32)
            let run = try Fixture.record(device: LoopbackDevice(periodFrames: period, delayFrames: delay), spec: spec, takes: [take],
                                         gate: TakeGate(recordPoint: Int64(a), endFrame: Int64(b), latencyFrames: Int64(delay)))
            XCTAssertNil(run.status.lastError)
            XCTAssertEqual(run.startFrame, Int64(a))
            let recorded = try Fixture.readMono(take.path)
            XCTAssertEqual(recorded.count, b - a, "period \(period)")
            let mismatches = zip(recorded, signal[a..<b]).filter { $0 != $1 }.count
            XCTAssertEqual(mismatches, 0, "period \(period): the take is the punch range, frame for frame")
            XCTAssertEqual(recorded.first, signal[a], "period \(period): first frame")
        }
    }

    func testAfterACountInTheFirstRecordedFrameIsExactlyTheRecordPoint() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let signal = noise(150_000)
        let spec = try spec(in: dir, signal: signal)
        // 120 BPM, 4/4: a bar is 96000 frames. Record at bar 2 after a one-bar count-in.
        // The click plays on output 2, which is not looped back: an exact take proves the
        // engine never mixes the click into what it records.
        let recordPoint: Int64 = 96_000
        let take = TakeRequest(track: 1, channelCount: 1, path: dir + "/take.wav", container: .wav, encoding: .float32)
        let device = LoopbackDevice(periodFrames: 256, delayFrames: delay, maxFrames: 400_000)
        let engine = Engine(device: device, clickOutputs: [2])
        try engine.prepare(spec, position: recordPoint - 96_000)
        engine.setClick(on: true, untilFrame: recordPoint)
        let set = try engine.startTakes([take], gate: TakeGate(recordPoint: recordPoint, maxFrames: 40_000, latencyFrames: Int64(delay)))
        engine.play()
        try engine.start()
        let deadline = Date().addingTimeInterval(30)
        while !set.hasEnded && Date() < deadline { usleep(2000) }
        _ = engine.finish(set)
        engine.close()
        let recorded = try Fixture.readMono(take.path)
        XCTAssertEqual(recorded.count, 40_000)
        XCTAssertEqual(recorded.first, signal[Int(recordPoint)], "the first frame is the record point's")
        let mismatches = zip(recorded, signal[Int(recordPoint)...]).filter { $0 != $1 }.count
        XCTAssertEqual(mismatches, 0, "every frame in place")
    }

    func testTheClickSoundsOnEveryBeatWithAnAccentedDownbeat() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The click plays on output 1, which the loopback cable carries back in: the "take"
        // here is a recording of the click as the output sent it. (That the engine never
        // mixes the click into what it records is the count-in test's exact-take check.)
        let take = TakeRequest(track: 0, channelCount: 1, path: dir + "/take.wav", container: .wav, encoding: .float32)
        let device = LoopbackDevice(periodFrames: 256, delayFrames: delay, maxFrames: 400_000)
        let engine = Engine(device: device, clickOutputs: [1])
        try engine.prepare(try Fixture.spec(playing: nil, inputs: [1]))
        engine.setClick(on: true)
        let set = try engine.startTakes([take], gate: TakeGate(recordPoint: 0, maxFrames: 200_000))
        engine.play()
        try engine.start()
        let deadline = Date().addingTimeInterval(30)
        while !set.hasEnded && Date() < deadline { usleep(2000) }
        _ = engine.finish(set)
        engine.close()
        let heard = try Fixture.readMono(take.path)  // what came back through the cable: the click
        // Beats every 24000 frames from frame 0, delayed by the loop.
        var peaks: [Float] = []
        for beat in 0..<8 {
            let at = beat * 24_000 + delay
            XCTAssertEqual(heard[at - 1], 0, "silence just before beat \(beat)")
            XCTAssertNotEqual(heard[at], 0, "beat \(beat) starts on its frame")
            peaks.append(heard[at..<(at + 1200)].map(abs).max() ?? 0)
        }
        for beat in 0..<8 {
            let accented = beat % 4 == 0
            let ratio = 20 * log10(Double(peaks[beat] / peaks[1]))
            XCTAssertEqual(ratio, accented ? 6 : 0, accuracy: 0.5, "beat \(beat + 1) \(accented ? "accented" : "plain")")
        }
    }

    func testRetroactiveMemoryHoldsWhatWasPlayedAtItsTransportPlace() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // As long as the device can run (its 1,000,000 frames from 5000): the unpaced device
        // runs on until the stop is applied, so the last second may lie anywhere up to there.
        let signal = noise(1_010_000)
        var spec = try spec(in: dir, signal: signal)
        spec.retroSeconds = 1
        // Playback starts at 5000; nothing is being recorded, only remembered.
        let engine = Engine(device: LoopbackDevice(periodFrames: 256, delayFrames: delay, maxFrames: 1_000_000))
        try engine.prepare(spec, position: 5000)
        engine.play()
        try engine.start()
        let buffer = try XCTUnwrap(engine.retroBuffer(track: 1))
        let deadline = Date().addingTimeInterval(30)
        while buffer.framesWritten < 150_000 && Date() < deadline { usleep(1000) }
        engine.stop()
        XCTAssertTrue(engine.waitUntilApplied())
        let path = dir + "/retro.wav"
        let (first, count) = try buffer.keep(to: path, format: AudioFileFormat(container: .wav, encoding: .float32,
                                                                              sampleRate: 48000, channelCount: 1))
        XCTAssertEqual(count, 48_000, "the last second")
        // Frame k of the memory arrived at device frame firstDevice + k and was played `delay`
        // frames before: the transport log says where the playhead was then.
        let firstDevice = try XCTUnwrap(buffer.firstDeviceFrame)
        let played = firstDevice + first - Int64(delay)
        let segment = try XCTUnwrap(engine.transportSegment(at: played))
        XCTAssertEqual(segment.speed, 1, "rolling at 1×")
        let timelineStart = Int(segment.timelineFrame + played - segment.deviceFrame)
        engine.close()
        let kept = try Fixture.readMono(path)
        XCTAssertEqual(kept.count, count)
        XCTAssertTrue(timelineStart >= 0 && timelineStart + kept.count <= signal.count, "placed at \(timelineStart), inside the session's audio")
        guard timelineStart >= 0 && timelineStart + kept.count <= signal.count else { return }
        let mismatches = kept.indices.filter { kept[$0] != signal[timelineStart + $0] }.count
        XCTAssertEqual(mismatches, 0, "kept after the fact, it is the session's audio at the place it was played")
    }

    func testInputMonitoringPlaysTheInputThroughItsChainAndOffPlaysNothing() throws {
        for monitoring in [MonitoringMode.input, .off] {
            let device = SignalDevice(frames: 60_000)
            // Hard left, so the left output carries the monitored input at unity.
            let track = GraphSpec.Track(name: "in", sources: [], channelCount: 1, pan: -1,
                                        input: GraphSpec.Input(deviceChannels: [1], chain: try Chain(parsing: "gain:-6"), monitoring: monitoring))
            let engine = Engine(device: device)
            try engine.prepare(GraphSpec(tracks: [track], sampleRate: 48000))
            try engine.start()
            let deadline = Date().addingTimeInterval(30)
            while device.written < 48_000 && Date() < deadline { usleep(1000) }
            engine.close()
            if monitoring == .input {
                // Past the gain's glide, each output frame is the same period's input at -6 dB.
                let gain = Float(pow(10, -6.0 / 20))
                let worst = (4800..<48_000).map { abs(device.output[$0] - SignalDevice.signal($0) * gain) }.max() ?? 1
                XCTAssertLessThan(worst, 1e-6, "monitored through the input chain, stopped or not")
            } else {
                XCTAssertTrue(device.output.allSatisfy { $0 == 0 }, "monitoring off: silence")
            }
        }
    }
}

/// Capture returns a known signal; playback is kept for inspection (channel 1).
private final class SignalDevice: PeriodDevice, @unchecked Sendable {
    let configuration: DeviceConfiguration
    let driver = PeriodDriver()
    var output: [Float]
    private var readFrame = 0
    private var writeFrame = 0
    var written: Int { writeFrame }

    static func signal(_ frame: Int) -> Float { Float(sin(Double(frame) * 0.013)) * 0.5 }

    init(frames: Int) {
        configuration = DeviceConfiguration(name: "signal", sampleRate: 48000, captureChannels: 1, playbackChannels: 2,
                                            periodFrames: 256, periodCount: 2, bufferFrames: 512,
                                            captureFormat: .float32, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: 512, linked: true)
        output = [Float](repeating: 0, count: frames)
    }

    func startStreams() throws(DeviceError) {}
    func stopStreams() {}

    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        for i in 0..<frameCount { channels[0][i] = SignalDevice.signal(readFrame + i) }
        readFrame += frameCount
        return .ok
    }

    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        for i in 0..<frameCount where writeFrame + i < output.count { output[writeFrame + i] = channels[0][i] }
        writeFrame += frameCount
        return .ok
    }
}
