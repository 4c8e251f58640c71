import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// Mixer values have one writer each between the front-end and the engine: a key hands over
/// the one value it moved (``MixerChange``), a controller's move is the engine's and then the
/// transport's, and a session handed over whole writes only what differs. So a key on one
/// strip, or any edit, never writes back a fader a controller moved a moment before.
final class MixerChangeTests: XCTestCase {
    /// Two tracks on a paced offline device, CC 7 on channel 1 learnt to A's fader, `port`
    /// attached.
    private func transport(_ dir: String, port: MIDIInputPort) throws -> (Transport, Session) {
        let folder = SessionFolder(path: dir + "/m.tapedeck")
        var session = Session(sampleRate: 48000)
        try folder.create(session)
        var a = Track(name: "A")
        a.sends = [Send(bus: "FX", levelDecibels: -12)]
        session.tracks = [a, Track(name: "B"), Track.makeBus(name: "FX")]
        session.midiBindings = [MIDIBinding(controller: 7, channel: 1, kind: .fader, track: "A")]
        try folder.save(session)
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0, paced: true)
        let t = try Transport(session: session, folder: folder, device: device)
        t.engine.attach(midiInput: port)
        return (t, session)
    }

    private func gain(_ t: Transport, _ strip: Int) -> Float { t.engine.graphs.last!.strips[strip].controls.gain }

    func testAnEditElsewhereNeverWritesBackAControllersMoveNotYetCollected() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let port = MIDIInputPort(name: "fader")
        let (t, session) = try transport(dir, port: port)
        defer { t.close() }
        usleep(50_000)
        [UInt8(0xB0), 7, 40].withUnsafeBufferPointer { port.receive($0, atNanoseconds: MIDIInputPort.now()) }
        let moved = Float(Decibels.toLinear(MIDIBinding.faderDecibels(controllerValue: 40)))
        let deadline = Date().addingTimeInterval(10)
        while gain(t, 0) != moved && Date() < deadline { usleep(1000) }
        XCTAssertEqual(gain(t, 0), moved, "the engine plays the controller's move")

        // No snapshot yet: the front-end has not heard of the move. A key on B, then the
        // session handed over whole with an edit elsewhere (B muted, a marker, B's chain).
        t.apply([.pan(strip: 1, value: 0.5)])
        XCTAssertEqual(gain(t, 0), moved, "a key on another strip leaves A's fader alone")
        XCTAssertEqual(t.engine.graphs.last!.strips[1].controls.pan, 0.5)
        var edited = session
        edited.tracks[1].pan = 0.5
        edited.tracks[1].mute = true
        edited.markers = [Marker(name: "M1", frame: 48_000)]
        XCTAssertNil(t.follow(session: edited))
        XCTAssertEqual(gain(t, 0), moved, "a mute elsewhere leaves A's fader alone")
        XCTAssertTrue(t.engine.graphs.last!.strips[1].controls.mute)
        edited.tracks[1].playbackChain = "gain:-3"
        XCTAssertNil(t.follow(session: edited))
        XCTAssertEqual(gain(t, 0), moved, "a new graph leaves A's fader alone")
        XCTAssertEqual(t.engine.graphs.last!.routes.sendStates[0][0].controls.level, Float(Decibels.toLinear(-12)), accuracy: 1e-6)

        // The snapshot hands the move to the transport's session and to the front-end.
        _ = t.snapshot()
        XCTAssertEqual(t.session.tracks[0].gainDecibels, MIDIBinding.faderDecibels(controllerValue: 40), accuracy: 1e-9)
        let moves = t.collectMIDIChanges().moves
        XCTAssertEqual(moves.map(\.value), [40])
        // The front-end follows it without handing it back; its next whole hand-over agrees.
        var chains = SessionChains(edited)
        edited.apply(moves[0].binding, value: moves[0].value, chains: &chains)
        edited.tracks[1].playbackChain = ""
        XCTAssertNil(t.follow(session: edited))
        XCTAssertEqual(gain(t, 0), moved)
        // An undo handed over whole (A's fader back at 0 dB) is a change, and is written.
        edited.tracks[0].gainDecibels = 0
        XCTAssertNil(t.follow(session: edited))
        XCTAssertEqual(gain(t, 0), 1)
        // The controller moves again; before anyone hears of it, a key resets the fader to the
        // 0 dB the session already holds: the key is the newest hand, and is heard.
        [UInt8(0xB0), 7, 20].withUnsafeBufferPointer { port.receive($0, atNanoseconds: MIDIInputPort.now()) }
        let again = Float(Decibels.toLinear(MIDIBinding.faderDecibels(controllerValue: 20)))
        let until = Date().addingTimeInterval(10)
        while gain(t, 0) != again && Date() < until { usleep(1000) }
        XCTAssertEqual(gain(t, 0), again)
        t.apply([.gain(strip: 0, decibels: 0)])
        XCTAssertEqual(gain(t, 0), 1, "a key to the value the session holds is still written")
    }

    func testTypedChangesWriteTheirValueOnlyAndRefuseWhatNamesNothing() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (t, _) = try transport(dir, port: MIDIInputPort(name: "unused"))
        defer { t.close() }
        let sendLevel = { t.engine.graphs.last!.routes.sendStates[0][0].controls.level }
        t.apply([.gain(strip: 0, decibels: -6), .sendLevel(strip: 0, send: 0, decibels: 0), .solo(strip: 1, on: true)])
        XCTAssertEqual(gain(t, 0), Float(Decibels.toLinear(-6)), accuracy: 1e-6)
        XCTAssertEqual(sendLevel(), 1, accuracy: 1e-6)
        XCTAssertTrue(t.engine.graphs.last!.strips[1].controls.solo)
        XCTAssertFalse(t.engine.graphs.last!.strips[1].controls.mute, "solo leaves the mute as it was")
        XCTAssertEqual(t.session.tracks[0].gainDecibels, -6)
        XCTAssertEqual(t.session.tracks[0].sends[0].levelDecibels, 0)
        // Strips and sends that do not exist, and values that are not numbers: nothing changes.
        let before = t.session
        t.apply([.gain(strip: 99, decibels: 0), .gain(strip: -1, decibels: 0), .sendLevel(strip: 1, send: 0, decibels: 0),
                 .sendLevel(strip: 0, send: Int.max, decibels: 0), .pan(strip: Int.min, value: 0),
                 .gain(strip: 0, decibels: .nan), .pan(strip: 0, value: .nan), .masterGain(decibels: .nan)])
        XCTAssertEqual(t.session, before)
        XCTAssertEqual(gain(t, 0), Float(Decibels.toLinear(-6)), accuracy: 1e-6)
        // The largest values are held as a session can store them (JSON has no infinity).
        t.apply([.gain(strip: 0, decibels: -.infinity), .pan(strip: 0, value: 1e300), .masterGain(decibels: .greatestFiniteMagnitude)])
        XCTAssertEqual(t.session.tracks[0].gainDecibels, Fader.silentDecibels)
        XCTAssertEqual(t.session.tracks[0].pan, 1)
        XCTAssertEqual(t.session.masterGainDecibels, Fader.maximumDecibels)
        XCTAssertEqual(gain(t, 0), 0, "−∞ is silence")
        XCTAssertNoThrow(try JSONEncoder().encode(t.session))
    }

    func testAChainValueIsWrittenToThePlayingNodeAndAnInputChainKeepsItsNodes() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/c.tapedeck")
        var session = Session(sampleRate: 48000)
        try folder.create(session)
        session.tracks = [Track(name: "A", inputChannels: [1], armed: true, inputChain: "comp:ratio=4", playbackChain: "lpf:cutoff=1000,gain:0"),
                          Track(name: "B")]
        session.masterChain = "gain:0"
        try folder.save(session)
        let device = OfflineClockDevice(sampleRate: 48000, captureChannels: 2, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0, paced: true)
        let t = try Transport(session: session, folder: folder, device: device)
        defer { t.close() }
        let graph = t.engine.graphs.last!
        let input = try XCTUnwrap(graph.inputs.first)
        func value(_ chain: ChainInstance?, _ node: Int, _ id: String) -> Double {
            guard let p = chain?.nodes[node].parameters, let i = p.index(of: id) else { return .nan }
            return p.value(i)
        }
        // Typed: the node moves, no graph is built, the transport's session says so.
        t.apply([ChainValueChange(place: .playback(strip: 0), node: 0, value: .parameter("cutoff", .number(2000))),
                 ChainValueChange(place: .input(strip: 0), node: 0, value: .parameter("ratio", .number(8))),
                 ChainValueChange(place: .master, node: 0, value: .parameter("gain", .number(-2))),
                 ChainValueChange(place: .playback(strip: 0), node: 1, value: .bypass(true))])
        XCTAssertTrue(t.engine.graphs.last! === graph, "a value needs no new graph")
        XCTAssertEqual(value(graph.strips[0].chain, 0, "cutoff"), 2000)
        XCTAssertEqual(value(input.chain, 0, "ratio"), 8)
        XCTAssertEqual(value(graph.masterChain, 0, "gain"), -2)
        XCTAssertTrue(graph.strips[0].chain!.isBypassed(1))
        XCTAssertEqual(t.session.tracks[0].playbackChain, "lpf:cutoff=2000,!gain:gain=0")
        XCTAssertEqual(t.session.tracks[0].inputChain, "comp:ratio=8")
        XCTAssertEqual(t.session.masterChain, "gain:gain=-2", "in the parser's canonical form")
        // Names nothing: nothing changes.
        let before = t.session
        t.apply([ChainValueChange(place: .playback(strip: 7), node: 0, value: .bypass(true)),
                 ChainValueChange(place: .playback(strip: 0), node: 9, value: .bypass(true)),
                 ChainValueChange(place: .playback(strip: 0), node: 0, value: .parameter("nonsense", .number(1))),
                 ChainValueChange(place: .playback(strip: 0), node: 0, value: .parameter("cutoff", .number(.nan))),
                 ChainValueChange(place: .playback(strip: 0), node: 0, value: .parameter("cutoff", .number(-.infinity)))])
        XCTAssertEqual(t.session, before)
        XCTAssertEqual(value(graph.strips[0].chain, 0, "cutoff"), 2000)

        // An undo hands the older session back whole: the older values are heard again; a
        // redo brings the typed ones back.
        let typed = t.session
        XCTAssertNil(t.follow(session: session))
        XCTAssertEqual(value(t.engine.graphs.last!.strips[0].chain, 0, "cutoff"), 1000)
        XCTAssertFalse(t.engine.graphs.last!.strips[0].chain!.isBypassed(1))
        XCTAssertEqual(value(t.engine.graphs.last!.inputs.first?.chain, 0, "ratio"), 4)
        XCTAssertEqual(value(t.engine.graphs.last!.masterChain, 0, "gain"), 0)
        XCTAssertNil(t.follow(session: typed))
        XCTAssertEqual(value(t.engine.graphs.last!.strips[0].chain, 0, "cutoff"), 2000)
        XCTAssertEqual(value(t.engine.graphs.last!.masterChain, 0, "gain"), -2)
        // A mixer value typed, then undone whole.
        t.apply([.gain(strip: 1, decibels: -9)])
        XCTAssertNil(t.follow(session: typed))
        XCTAssertEqual(t.engine.graphs.last!.strips[1].controls.gain, 1)

        // An edit elsewhere builds a graph: the input and its chain's nodes go on, at the typed values.
        var edited = t.session
        edited.tracks[1].playbackChain = "gain:-3"
        XCTAssertNil(t.follow(session: edited))
        let next = t.engine.graphs.last!
        XCTAssertFalse(next === graph)
        XCTAssertTrue(next.inputs.first === input, "the input strip is kept")
        XCTAssertEqual(value(next.strips[0].chain, 0, "cutoff"), 2000)
        XCTAssertEqual(value(input.chain, 0, "ratio"), 8)
        XCTAssertEqual(value(next.masterChain, 0, "gain"), -2)
        // A value of the input chain handed over in a whole session: retuned in place, not rebuilt.
        edited.tracks[0].inputChain = "comp:ratio=2"
        XCTAssertNil(t.follow(session: edited))
        XCTAssertTrue(t.engine.graphs.last!.inputs.first === input, "a value edit keeps the input's nodes")
        XCTAssertEqual(value(input.chain, 0, "ratio"), 2)
        // A different node is a new input chain.
        edited.tracks[0].inputChain = "hpf:cutoff=80"
        XCTAssertNil(t.follow(session: edited))
        XCTAssertFalse(t.engine.graphs.last!.inputs.first === input)
    }
}
