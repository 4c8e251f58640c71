import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// MIDI through the one transport: machine control drives it, MIDI learn binds and follows,
/// a MIDI track records takes like an audio track (count-in, loop passes as take lanes).
final class TransportMIDITests: XCTestCase {
    /// A session with one armed MIDI track (`chain`) and a 20 s MIDI region on it (a single
    /// controller), saved.
    private func session(_ dir: String, chain: String = "sampler", armed: Bool = true) throws -> (Session, SessionFolder) {
        let folder = SessionFolder(path: dir + "/m")
        var session = Session(sampleRate: 48000)
        try folder.create(session)
        let quiet = MIDISequence(events: [.init(frame: 0, status: 0xB0, data1: 7, data2: 100)], lengthFrames: 960_000)
        let file = try MIDIRegionFile.writeNew(quiet, base: "quiet", name: nil, folder: folder, tempoMap: session.tempoMap)
        session.tracks = [Track(name: "Keys", armed: armed, playbackChain: chain,
                                regions: [Region(file: file, timelineStartFrame: 0, lengthFrames: 960_000, isMIDI: true)], isMIDI: true)]
        try folder.save(session)
        return (session, folder)
    }

    /// A transport on a playback-only device paced in real time, with `port` attached.
    private func transport(_ session: Session, _ folder: SessionFolder, port: MIDIInputPort) throws -> Transport {
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0, paced: true)
        let t = try Transport(session: session, folder: folder, device: device)
        t.engine.attach(midiInput: port)
        return t
    }

    private func send(_ port: MIDIInputPort, _ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { port.receive($0, atNanoseconds: MIDIInputPort.now()) }
    }

    /// MMC reaches the front-end as requests, in order, named by their port; the transport
    /// does not act on them itself (the front-end answers them as `tapedeck ctl`'s commands:
    /// MachineControlAnswerTests, ScreenMachineControlTests).
    func testMMCReachesTheFrontEndInOrderAndTheTransportDoesNotActOnItAlone() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try self.session(dir, armed: false)
        let port = MIDIInputPort(name: "mmc")
        let t = try transport(session, folder, port: port)
        defer { t.close() }
        XCTAssertEqual(t.snapshot().state, .stopped)
        send(port, [0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7])
        // LOCATE 00:00:10:00 at 25 fps.
        send(port, [0xF0, 0x7F, 0x7F, 0x06, 0x44, 0x06, 0x01, 0x20, 0x00, 0x0A, 0x00, 0x00, 0xF7])
        send(port, [0xF0, 0x7F, 0x7F, 0x06, 0x01, 0xF7])
        let requests = TransportFixture.machineRequests(t, count: 3)
        XCTAssertEqual(requests.map(\.command), [.play, .locate(microseconds: 10_000_000), .stop])
        XCTAssertEqual(Set(requests.map(\.port)), ["mmc"])
        XCTAssertEqual(t.snapshot().state, .stopped, "nothing rolled without the front-end")
        XCTAssertEqual(t.collectMachineRequests(), [], "each request is handed over once")
    }

    func testMIDILearnBindsTheNextControllerAndItsMovesReachTheSession() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try self.session(dir, chain: "sampler,lpf:cutoff=1000")
        let port = MIDIInputPort(name: "knobs")
        let t = try transport(session, folder, port: port)
        defer { t.close() }
        t.learnController(for: MIDIBinding(controller: 0, kind: .parameter, track: "Keys", node: 2, parameter: "cutoff"))
        XCTAssertTrue(t.isLearningController)
        usleep(50_000)
        send(port, [0xB2, 74, 10])
        var learned: MIDIBinding?
        let deadline = Date().addingTimeInterval(5)
        while learned == nil && Date() < deadline {
            _ = t.snapshot()
            learned = t.collectMIDIChanges().learned
            usleep(10_000)
        }
        XCTAssertEqual(learned, MIDIBinding(controller: 74, channel: 3, kind: .parameter, track: "Keys", node: 2, parameter: "cutoff"))
        XCTAssertFalse(t.isLearningController)
        session.bind(try XCTUnwrap(learned))
        XCTAssertNil(t.follow(session: session))
        usleep(50_000)
        send(port, [0xB2, 74, 127])
        send(port, [0xB0, 74, 0])          // another channel: not bound, a plain controller
        var moves: [(binding: MIDIBinding, value: Int)] = []
        let until = Date().addingTimeInterval(5)
        while moves.isEmpty && Date() < until {
            _ = t.snapshot()
            moves = t.collectMIDIChanges().moves
            usleep(10_000)
        }
        XCTAssertEqual(moves.count, 1)
        XCTAssertEqual(moves.first?.value, 127)
        var chains = SessionChains(session)
        XCTAssertTrue(session.apply(try XCTUnwrap(moves.first?.binding), value: 127, chains: &chains))
        // Swept logarithmically over 20 Hz…20 kHz: the top of the knob is the top of the range.
        let chain = try Chain(parsing: session.tracks[0].playbackChain)
        XCTAssertEqual(chain.entries[1].settings.first { $0.parameter == "cutoff" }?.value, .number(20000))
    }

    func testATouchFromAControllerAndALatchFromAKeyAreWrittenWhenLetGoAndAtTheStop() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try self.session(dir, armed: false)
        session.tracks[0].automation = [
            AutomationLane(parameter: .gain, mode: .touch, points: [AutomationPoint(frame: 0, value: -20)]),
            AutomationLane(parameter: .pan, mode: .latch),
        ]
        session.midiBindings = [MIDIBinding(controller: 7, channel: 1, kind: .fader, track: "Keys")]
        try folder.save(session)
        let port = MIDIInputPort(name: "fader")
        let t = try transport(session, folder, port: port)
        defer { t.close() }
        t.play(from: 0)
        TransportFixture.waitFor(t) { $0.positionFrame > 12_000 }
        for v: UInt8 in [60, 80, 100] {
            send(port, [0xB0, 7, v])
            usleep(30_000)
        }
        // Idle: the touch lets go and its pass comes over.
        var writes: [AutomationWrite] = []
        let until = Date().addingTimeInterval(5)
        while writes.isEmpty && Date() < until {
            _ = t.snapshot()
            writes += t.collectMIDIChanges().automationWrites
            usleep(20_000)
        }
        XCTAssertEqual(writes.map(\.parameter), [.gain], "the touch is written once let go, while rolling")
        let gain = try XCTUnwrap(writes.first)
        var lane = session.tracks[0].automation[0]
        lane.apply(gain)
        XCTAssertEqual(lane.points.map(\.value).filter { $0 != -20 }.suffix(1).first ?? .nan,
                       Fader.stored(MIDIBinding.faderDecibels(controllerValue: 100)), accuracy: 1e-9, "the hand's last value")
        XCTAssertEqual(lane.points.last?.value ?? .nan, -20, accuracy: 1e-9, "then back to the lane")
        XCTAssertGreaterThan(gain.range.startFrame, 12_000, "from where the hand took it")

        // A key moves the pan (latch): held to the stop.
        let movedAt = t.snapshot().positionFrame
        session.tracks[0].pan = 0.5
        XCTAssertNil(t.follow(session: session))
        usleep(700_000)
        _ = t.snapshot()
        XCTAssertTrue(t.collectMIDIChanges().automationWrites.isEmpty, "a latch does not let go when idle")
        t.stop()
        let stopped = TransportFixture.waitFor(t) { $0.state == .stopped }
        _ = t.snapshot()
        let latched = t.collectMIDIChanges().automationWrites
        XCTAssertEqual(latched.map(\.parameter), [.pan])
        var pan = session.tracks[0].automation[1]
        if let w = latched.first { pan.apply(w) }
        XCTAssertEqual(pan.value(at: movedAt + 24_000) ?? .nan, 0.5, accuracy: 1e-9)
        XCTAssertEqual(Double(pan.points.last?.frame ?? 0), Double(stopped.positionFrame), accuracy: 4800, "held to where it stopped")
    }

    /// A send's level moved by a key (the front-end's session) over its lane in touch is
    /// written when the hand lets go; a node's parameter moved so over a latch lane, at the stop.
    func testASendLevelAndANodeParameterMovedByKeysAreWritten() throws {
        try keysWriteTheirLanes(typed: false)
    }

    /// As the screen's keys hand them over now: typed changes, no whole session.
    func testASendLevelAndANodeParameterMovedByTypedChangesAreWritten() throws {
        try keysWriteTheirLanes(typed: true)
    }

    /// A send's level and a node's cutoff moved while rolling over their touch and latch
    /// lanes, handed over as a whole session or (`typed`) as typed changes.
    private func keysWriteTheirLanes(typed: Bool) throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try self.session(dir, chain: "sampler,lpf", armed: false)
        session.tracks[0].sends = [Send(bus: "FX", levelDecibels: -30)]
        session.tracks.append(Track.makeBus(name: "FX"))
        session.tracks[0].automation = [
            AutomationLane(parameter: .send("FX"), mode: .touch, points: [AutomationPoint(frame: 0, value: -30)]),
            AutomationLane(parameter: .node("lpf", "cutoff"), mode: .latch),
        ]
        try folder.save(session)
        let t = try transport(session, folder, port: MIDIInputPort(name: "none"))
        defer { t.close() }
        t.play(from: 0)
        let movedAt = TransportFixture.waitFor(t) { $0.positionFrame > 12_000 }.positionFrame
        session.tracks[0].sends[0].levelDecibels = -6
        var chain = try Chain(parsing: session.tracks[0].playbackChain)
        XCTAssertTrue(chain.set(entry: 1, parameter: "cutoff", to: 2000))
        session.tracks[0].playbackChain = chain.description
        if typed {
            t.apply([MixerChange.sendLevel(strip: 0, send: 0, decibels: -6)])
            t.apply([ChainValueChange(place: .playback(strip: 0), node: 1, value: .parameter("cutoff", .number(2000)))])
        } else {
            XCTAssertNil(t.follow(session: session))
        }
        var writes: [AutomationWrite] = []
        let until = Date().addingTimeInterval(5)
        while writes.isEmpty && Date() < until {
            _ = t.snapshot()
            writes += t.collectMIDIChanges().automationWrites
            usleep(20_000)
        }
        XCTAssertEqual(writes.map(\.parameter), [.send("FX")], "the send's touch is written once let go")
        var send = session.tracks[0].automation[0]
        if let w = writes.first { send.apply(w) }
        XCTAssertEqual(send.value(at: movedAt + 2_400) ?? .nan, -6, accuracy: 0.5, "the hand's level where it moved")
        XCTAssertEqual(send.points.last?.value ?? .nan, -30, accuracy: 1e-9, "then back to the lane")
        t.stop()
        TransportFixture.waitFor(t) { $0.state == .stopped }
        _ = t.snapshot()
        let latched = t.collectMIDIChanges().automationWrites
        XCTAssertEqual(latched.map(\.parameter), [.node("lpf", "cutoff")], "the parameter's latch at the stop")
        XCTAssertEqual(latched.first?.points.last?.value ?? .nan, 2000, accuracy: 1e-9)
    }

    /// A controller learnt to a send's level, turned over the send's lane in touch: the send
    /// follows it and the pass is written when it lets go.
    func testAControllerLearntToASendWritesItsTouchLane() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try self.session(dir, armed: false)
        session.tracks[0].sends = [Send(bus: "FX", levelDecibels: -30)]
        session.tracks.append(Track.makeBus(name: "FX"))
        session.tracks[0].automation = [AutomationLane(parameter: .send("FX"), mode: .touch, points: [AutomationPoint(frame: 0, value: -30)])]
        session.midiBindings = [MIDIBinding(controller: 12, channel: 1, kind: .send, track: "Keys", bus: "fx")]
        try folder.save(session)
        let port = MIDIInputPort(name: "send")
        let t = try transport(session, folder, port: port)
        defer { t.close() }
        t.play(from: 0)
        TransportFixture.waitFor(t) { $0.positionFrame > 12_000 }
        for v: UInt8 in [70, 80, 90] {
            send(port, [0xB0, 12, v])
            usleep(30_000)
        }
        var writes: [AutomationWrite] = [], moves: [(MIDIBinding, Int)] = []
        let until = Date().addingTimeInterval(5)
        while writes.isEmpty && Date() < until {
            _ = t.snapshot()
            let changes = t.collectMIDIChanges()
            writes += changes.automationWrites
            moves += changes.moves
            usleep(20_000)
        }
        XCTAssertEqual(moves.last?.1, 90, "the moves reach the front-end")
        var applied = session
        var chains = SessionChains(applied)
        XCTAssertTrue(applied.apply(session.midiBindings[0], value: 90, chains: &chains))
        XCTAssertEqual(applied.tracks[0].sends[0].levelDecibels, Fader.stored(MIDIBinding.faderDecibels(controllerValue: 90)), accuracy: 1e-9)
        XCTAssertEqual(writes.map(\.parameter), [.send("FX")], "the touch is written once let go")
        var lane = session.tracks[0].automation[0]
        if let w = writes.first { lane.apply(w) }
        XCTAssertEqual(lane.points.map(\.value).filter { $0 != -30 }.last ?? .nan, Fader.stored(MIDIBinding.faderDecibels(controllerValue: 90)),
                       accuracy: 1e-9, "the hand's last value")
        XCTAssertEqual(lane.points.last?.value ?? .nan, -30, accuracy: 1e-9, "then back to the lane")
    }

    func testAMIDILoopPassAfterACountInBecomesTakesOnTheTrack() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try self.session(dir)
        session.loopRange = FrameRange(startFrame: 48_000, endFrame: 72_000)
        session.loopEnabled = true
        try folder.save(session)
        let port = MIDIInputPort(name: "keys")
        let t = try transport(session, folder, port: port)
        defer { t.close() }
        t.setLoop(session.loopRange, enabled: true)
        t.countInBars = 1
        try t.record(RecordRequest(fromFrame: 48_000))
        // Count-in from 0 (one 2 s bar before the loop's start at 1 s): nothing played there is kept.
        var sent: [(pass: Int, offset: Int64)] = []
        var pass = -1
        var lastPosition: Int64 = 0
        let deadline = Date().addingTimeInterval(15)
        while sent.count < 3 && Date() < deadline {
            let snap = t.snapshot()
            if snap.state == .countIn && sent.isEmpty && snap.positionFrame > 10_000 {
                send(port, [0x90, 40, 100]); send(port, [0x80, 40, 0])   // during the count-in
                sent.append((-1, 0))
            }
            if snap.state == .recording {
                if snap.positionFrame < lastPosition || pass < 0 { pass += 1 }
                if snap.positionFrame > 60_000 && !sent.contains(where: { $0.pass == pass }) && pass < 2 {
                    send(port, [0x90, UInt8(60 + pass), 100])
                    send(port, [0x80, UInt8(60 + pass), 0])
                    sent.append((pass, snap.positionFrame - 48_000))
                }
            }
            lastPosition = snap.positionFrame
            usleep(5_000)
        }
        // Into a third pass, then stop: the partial pass is kept too (as with audio).
        _ = TransportFixture.waitFor(t, timeout: 5) { $0.positionFrame > 50_000 && $0.positionFrame < 60_000 }
        t.stop()
        _ = TransportFixture.waitFor(t, timeout: 5) { $0.state == .stopped }
        _ = t.snapshot()
        let takes = t.collectFinishedTakes()
        XCTAssertEqual(takes.count, 1)
        let take = try XCTUnwrap(takes.first)
        XCTAssertTrue(take.region.isMIDI)
        guard case .loopPasses(let more) = take.placement else { return XCTFail("loop passes: \(take.placement)") }
        let passes = [take.region] + more
        XCTAssertGreaterThanOrEqual(passes.count, 2)
        for (k, region) in passes.enumerated() {
            XCTAssertEqual(region.timelineStartFrame, 48_000, "every pass lies over the loop")
            XCTAssertEqual(region.sourceOffsetFrame, Int64(k) * 24_000, "pass \(k) is its part of the file")
            XCTAssertTrue(region.isMIDI)
        }
        var placed = session
        placed.place(take, onTrack: 0)
        XCTAssertEqual(placed.tracks[0].takeGroups.count, 1, "one stack of takes")
        // Pass k holds note 60 + k, where it was played; the count-in's note is not kept.
        for (k, region) in passes.prefix(2).enumerated() {
            let notes = try MIDIRegionFile.sequence(of: region, folder: folder, sampleRate: 48000).notes
            XCTAssertEqual(notes.map(\.pitch), [UInt8(60 + k)], "pass \(k)")
            if let at = sent.first(where: { $0.pass == k })?.offset, let note = notes.first {
                XCTAssertEqual(Double(note.startFrame), Double(at), accuracy: 4800, "pass \(k) note where it was played in its pass")
            }
        }
    }
}
