import XCTest
import TapedeckCore
@testable import TapedeckEngine

/// A device whose shared transport the test reads out cycle by cycle, as JACK2 hands it to a
/// client: state and frame as they were when the client's cycle read them.
private final class ScriptedHostDevice: HostTransportDevice, @unchecked Sendable {
    private let buffers: SteppedBuffers
    var configuration: DeviceConfiguration { buffers.configuration }
    private var client: AudioDeviceClient?
    private(set) var startsAsked = 0
    let followsHostTransport = true
    var hostCycleFrames: Int { configuration.periodFrames }

    init(periodFrames: Int) { buffers = SteppedBuffers(name: "scripted", periodFrames: periodFrames) }

    func start(client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError) {
        self.client = client
        client.audioThreadBegins(realtime: false)
    }

    func stop() {
        guard let client else { return }
        self.client = nil
        client.audioThreadEnds()
    }

    func requestHostStart() { startsAsked += 1 }
    func requestHostStop() {}
    func requestHostLocate(to frame: Int64) {}
    func publishTempo(_ map: TempoMap) {}

    /// One cycle in which the shared transport reads `state` at `frame`, in JACKCycle's order.
    @discardableResult
    func cycle(_ state: HostClockFrame.State, at frame: Int64) -> HostFollowReply? {
        guard let client else { return nil }
        _ = client.beginCycle()
        let reply = (client as? HostClockClient)?.followHost(HostClockFrame(state: state, frame: frame),
                                                              frameCount: configuration.periodFrames)
        client.renderCycle(input: UnsafePointer(buffers.input), output: UnsafePointer(buffers.output), frameCount: configuration.periodFrames)
        return reply
    }
}

/// JACK2 changes its transport's state when the server's cycle ends but its frame only when
/// the next cycle begins, so a client whose cycle reads the transport before that end sees
/// it starting at F, then rolling at F plus a period. That is a start from F seen a cycle
/// late: Tapedeck follows JACK's frame, and names it a start at F, never a locate by another
/// program (CI once read "moved to 00:02.005 by another program" after `jack_transport play`).
final class HostStartSeenLateTests: XCTestCase {
    private let period = 256

    private func engine() throws -> (ScriptedHostDevice, Engine) {
        let device = ScriptedHostDevice(periodFrames: period)
        var options = EngineOptions()
        options.renderThreads = 1
        options.realtimePriority = false
        let engine = Engine(device: device, options: options)
        try engine.prepare(try Fixture.spec(playing: nil, inputs: [1]))
        try engine.start()
        return (device, engine)
    }

    /// The transport stands at `at` (moved there by another program), starts, and reads
    /// rolling at `rollsAt`; the events of those cycles and the playhead after them.
    private func start(_ device: ScriptedHostDevice, _ engine: Engine, at: Int64, rollsAt: Int64) -> ([EngineEvent], Int64) {
        for _ in 0..<4 { device.cycle(.stopped, at: 0) }
        device.cycle(.stopped, at: at)
        for _ in 0..<200 {
            if device.cycle(.starting, at: at)?.readyToRoll == true { break }
            usleep(2000)
        }
        device.cycle(.rolling, at: rollsAt)
        device.cycle(.rolling, at: rollsAt + Int64(period))
        return (engine.drainEvents(), engine.status().positionFrame)
    }

    func testAnotherProgramsStartSeenACycleLateIsAStartFromWhereItStood() throws {
        let (device, engine) = try engine()
        defer { engine.close() }
        let (events, position) = start(device, engine, at: 96000, rollsAt: 96000 + Int64(period))
        let located = events.filter { $0.kind == .hostLocated }.map(\.frame)
        XCTAssertEqual(located, [96000], "only the locate to where it stood is a move: \(events)")
        let started = events.filter { $0.kind == .hostStarted }
        XCTAssertEqual(started.map(\.frame), [96000], "started where it stood")
        XCTAssertEqual(started.first?.external, true, "by another program")
        XCTAssertEqual(position, 96000 + 3 * Int64(period), "the playhead is where JACK's transport is")
    }

    func testAStartFromWhereItStoodIsAStartThere() throws {
        let (device, engine) = try engine()
        defer { engine.close() }
        let (events, position) = start(device, engine, at: 96000, rollsAt: 96000)
        XCTAssertEqual(events.filter { $0.kind == .hostLocated }.map(\.frame), [96000])
        XCTAssertEqual(events.filter { $0.kind == .hostStarted }.map(\.frame), [96000])
        XCTAssertEqual(position, 96000 + 2 * Int64(period))
    }

    func testAStartThatRollsFarFromWhereItStoodIsAMove() throws {
        let (device, engine) = try engine()
        defer { engine.close() }
        let (events, position) = start(device, engine, at: 96000, rollsAt: 480_000)
        XCTAssertEqual(events.filter { $0.kind == .hostLocated }.map(\.frame), [96000, 480_000], "\(events)")
        XCTAssertEqual(events.filter { $0.kind == .hostStarted }.map(\.frame), [480_000])
        XCTAssertEqual(position, 480_000 + 2 * Int64(period))
    }

    func testTapedecksOwnStartSeenACycleLateIsNotNews() throws {
        let (device, engine) = try engine()
        defer { engine.close() }
        engine.play()
        XCTAssertEqual(device.startsAsked, 1, "Tapedeck's play goes to the shared transport")
        let (events, _) = start(device, engine, at: 0, rollsAt: Int64(period))
        XCTAssertTrue(events.filter { $0.kind != .deviceXrun }.allSatisfy { !$0.external }, "\(events)")
        XCTAssertEqual(events.filter { $0.kind == .hostStarted }.map(\.frame), [0])
    }
}
