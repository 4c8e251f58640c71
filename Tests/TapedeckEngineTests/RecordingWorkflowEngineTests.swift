import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckDSP
@testable import TapedeckEngine

/// Punch, count-in and click at the engine, through an in-process loopback of known delay:
/// what is played comes back `delay` frames later, exactly like a cable.
final class RecordingWorkflowEngineTests: XCTestCase {
    /// At least one period: the loopback is causal (what is read was written a cycle before).
    let delay = 2048
    let frames = 40_000

    /// A session whose one track plays `signal` from frame 0.
    private func session(in dir: String, signal: [Float]) throws -> (Session, SessionFolder) {
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 48000)
        try folder.create(session)
        let w = try AudioFileWriter(path: folder.audioFolder + "/src.wav",
                                    format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        try signal.withUnsafeBufferPointer { try w.write([$0.baseAddress!], frameCount: $0.count) }
        try w.close()
        session.tracks = [Track(name: "src", pan: -1, regions: [Region(file: "audio/src.wav", timelineStartFrame: 0,
                                                                     lengthFrames: Int64(signal.count))])]
        return (session, folder)
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
        let (session, folder) = try session(in: dir, signal: signal)
        for (period, a, b) in [(128, 10_007, 20_011), (256, 3, 777), (1000, 25_000, 39_999)] {
            var take = TakeRequest(path: dir + "/punch-\(period).wav", container: .wav, encoding: .float32, deviceChannels: [1],
                                   maxFrames: Int64(b - a))
            take.gate = FrameRange(startFrame: Int64(a), endFrame: Int64(b))
            let engine = try Engine(device: LoopbackDevice(periodFrames: period, delayFrames: delay), take: take,
                                    playback: try PlaybackPlan(session: session, folder: folder, from: 0))
            let summary = try Fixture.run(engine)
            XCTAssertNil(summary.error)
            let recorded = try Fixture.readMono(take.path)
            XCTAssertEqual(recorded.count, b - a, "period \(period)")
            // Hard left: the loopback's channel carries the track at unity.
            let mismatches = zip(recorded, signal[a..<b]).filter { $0 != $1 }.count
            XCTAssertEqual(mismatches, 0, "period \(period): the take is the punch range, frame for frame")
            XCTAssertEqual(recorded.first, signal[a], "period \(period): first frame")
        }
    }

    func testAfterACountInTheFirstRecordedFrameIsExactlyTheRecordPoint() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let signal = noise(150_000)
        let (session, folder) = try session(in: dir, signal: signal)
        // 120 BPM, 4/4: a bar is 96000 frames. Record at bar 2 after a one-bar count-in.
        // The click plays on output 2, which is not looped back: an exact take proves the
        // engine never mixes the click into what it records.
        let recordPoint: Int64 = 96_000
        var take = TakeRequest(path: dir + "/take.wav", container: .wav, encoding: .float32, deviceChannels: [1], maxFrames: 40_000)
        take.gate = FrameRange(startFrame: recordPoint, endFrame: .max)
        var options = EngineOptions()
        var click = ClickSettings(levelDecibels: -6, outputChannels: [2])
        click.untilFrame = recordPoint
        options.click = click
        let plan = try PlaybackPlan(session: session, folder: folder, from: recordPoint - 96_000)
        let device = LoopbackDevice(periodFrames: 256, delayFrames: delay, maxFrames: 400_000)
        let engine = try Engine(device: device, take: take, playback: plan, options: options)
        let summary = try Fixture.run(engine)
        XCTAssertNil(summary.error)
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
        var take = TakeRequest(path: dir + "/take.wav", container: .wav, encoding: .float32, deviceChannels: [1], maxFrames: 200_000)
        take.gate = nil
        var options = EngineOptions()
        options.click = ClickSettings(levelDecibels: -6, outputChannels: [1])
        let device = LoopbackDevice(periodFrames: 256, delayFrames: delay, maxFrames: 400_000)
        let engine = try Engine(device: device, take: take, playback: nil, options: options)
        let summary = try Fixture.run(engine)
        XCTAssertNil(summary.error)
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

    func testRetroactiveCaptureKeepsWhatWasPlayedAtItsOriginalPosition() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The unpaced loopback runs on until the test thread stops it; on a busy machine that
        // has come 500 000 frames late, so the signal is as long as the loopback remembers.
        let signal = noise(1_000_000)
        let (session, folder) = try session(in: dir, signal: signal)
        var options = EngineOptions()
        options.retro = (seconds: 1, deviceChannels: [1])
        // Playback starts at 5000; nothing is being recorded, only remembered.
        let plan = try PlaybackPlan(session: session, folder: folder, from: 5000)
        let engine = try Engine(device: LoopbackDevice(periodFrames: 256, delayFrames: delay, maxFrames: 1_000_000),
                                take: nil, playback: plan, options: options)
        let buffer = try XCTUnwrap(engine.retroBuffer)
        try engine.start()
        let deadline = Date().addingTimeInterval(30)
        while buffer.framesWritten < 150_000 && Date() < deadline { usleep(1000) }
        engine.stop()
        let summary = try engine.finish()
        XCTAssertNil(summary.error)
        let path = dir + "/retro.wav"
        let (first, count) = try buffer.keep(to: path, format: AudioFileFormat(container: .wav, encoding: .float32,
                                                                              sampleRate: 48000, channelCount: 1))
        XCTAssertEqual(count, 48_000, "the last second")
        XCTAssertEqual(engine.retroTimelineOrigin, 5000 - Int64(delay), "input lags the timeline by the round trip")
        let timelineStart = Int(engine.retroTimelineOrigin + first)
        let kept = try Fixture.readMono(path)
        XCTAssertEqual(kept.count, count)
        // What came back through the cable, kept after the fact, is the session's audio at the
        // timeline place it was played.
        guard timelineStart + count <= signal.count else {
            return XCTFail("the engine ran \(buffer.framesWritten) frames before the test could stop it, past the signal")
        }
        let mismatches = kept.indices.filter { kept[$0] != signal[timelineStart + $0] }.count
        XCTAssertEqual(mismatches, 0)
    }

    func testInputMonitoringPlaysTheInputThroughItsChainAndOffPlaysNothing() throws {
        for monitor in [true, false] {
            let dir = try Fixture.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let device = SignalDevice(frames: 60_000)
            var take = TakeRequest(path: dir + "/t.wav", container: .wav, encoding: .float32, deviceChannels: [1], maxFrames: 48_000)
            take.inputChain = try Chain(parsing: "gain:-6")
            var options = EngineOptions()
            options.monitorInput = monitor
            let engine = try Engine(device: device, take: take, playback: nil, options: options)
            XCTAssertNil(try Fixture.run(engine).error)
            if monitor {
                // Past the gain's glide, each output frame is the same period's input at -6 dB.
                let gain = Float(pow(10, -6.0 / 20))
                let worst = (4800..<48_000).map { abs(device.output[$0] - SignalDevice.signal($0) * gain) }.max() ?? 1
                XCTAssertLessThan(worst, 1e-6, "monitored through the input chain")
            } else {
                XCTAssertTrue(device.output.allSatisfy { $0 == 0 }, "monitoring off: silence")
            }
        }
    }
}

/// Capture returns a known signal; playback is kept for inspection (channel 1).
private final class SignalDevice: AudioDevice, @unchecked Sendable {
    let configuration: DeviceConfiguration
    var output: [Float]
    private var readFrame = 0
    private var writeFrame = 0

    static func signal(_ frame: Int) -> Float { Float(sin(Double(frame) * 0.013)) * 0.5 }

    init(frames: Int) {
        configuration = DeviceConfiguration(name: "signal", sampleRate: 48000, captureChannels: 1, playbackChannels: 2,
                                            periodFrames: 256, periodCount: 2, bufferFrames: 512,
                                            captureFormat: .float32, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: 512, linked: true)
        output = [Float](repeating: 0, count: frames)
    }

    func start() throws(DeviceError) {}
    func stop() {}

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
