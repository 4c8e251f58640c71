import XCTest
import TapedeckCore
@testable import TapedeckEngine

/// A device that starts and never runs a period: the audio thread is stuck (issue 42: on a
/// full queue the engine slept the screen's UI thread for up to 2 s, then dropped the command).
private final class StuckDevice: AudioDevice, @unchecked Sendable {
    let configuration = DeviceConfiguration(name: "stuck", sampleRate: 48000, captureChannels: 0, playbackChannels: 2,
                                            periodFrames: 256, periodCount: 2, bufferFrames: 512,
                                            captureFormat: nil, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: 512, linked: false)
    func start(client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError) {}
    func stop() {}
}

final class CommandQueueTests: XCTestCase {
    func testAFullCommandQueueIsRefusedAtOnceInOneLineNeverSleptOn() throws {
        let engine = Engine(device: StuckDevice())
        try engine.start(GraphSpec(tracks: [], sampleRate: 48000))
        defer { engine.close() }
        XCTAssertTrue(engine.isRunning, "as far as the engine knows, the device runs: only its audio thread is stuck")
        for k in 0..<engine.commandQueueCapacity { engine.locate(to: Int64(k)) }
        XCTAssertNil(engine.drainRefusals(), "every command up to the queue's size is taken")

        let started = DispatchTime.now().uptimeNanoseconds
        engine.locate(to: 48000)
        engine.play()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        // Refused at once: the old wait was 2 s per command, 4 s for these two. The bound is
        // generous for a busy machine (the quiet figure is a few microseconds).
        XCTAssertLessThan(seconds, 1.0, "a full queue is refused, not waited on")
        let line = try XCTUnwrap(engine.drainRefusals(), "the refusal is kept for the front-end to show")
        XCTAssertTrue(line.contains("2 commands (the last: play)") && line.contains("queue of 256 commands is full"), line)
        XCTAssertFalse(line.contains("\n"), "one line")
        XCTAssertNil(engine.drainRefusals(), "told once")
    }
}
