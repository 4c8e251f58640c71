import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// A mixer value a controller moved belongs to the engine from then on: a new graph (an edit
/// on another track, the same track's region moved, its chain changed) keeps it, even when the
/// spec it is built from still holds the older value — the control thread has not heard of
/// the move yet. Only a typed change (``Engine/set(_:)``) or a strip new to its track writes.
final class MixerValueKeptTests: XCTestCase {
    private let rate = 48000

    func testAControllersMovesOutliveEveryGraphSwapOfTheirTrack() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/k.tapedeck")
        try folder.create(Session())
        // A: a steady 0.5 hard left (the left output is 0.5 × its fader), sending to FX.
        var a = try Fixture.steadyTrack(in: folder, seconds: 8, sampleRate: rate)
        a.sends = [Send(bus: "FX", levelDecibels: -20, pan: 1)]
        var session = Session()
        session.tracks = [a, Track(name: "B"), Track.makeBus(name: "FX")]
        session.midiBindings = [MIDIBinding(controller: 7, channel: 1, kind: .fader, track: "A"),
                                MIDIBinding(controller: 8, channel: 1, kind: .send, track: "A", bus: "FX")]
        try folder.save(session)

        let run = try FreewheelRun(session, folder, rate: rate)
        defer { run.close() }
        let engine = run.engine, port = run.port
        func render(_ periods: Int) -> [Float] { run.render(periods) }
        _ = render(16)
        // The hand: the fader to CC 40 (−15.9 dB), the send to CC 100 (0 dB).
        port.receive(status: 0xB0, data1: 7, data2: 40, atNanoseconds: MIDIInputPort.now())
        port.receive(status: 0xB0, data1: 8, data2: 100, atNanoseconds: MIDIInputPort.now())
        let moved = MIDIBinding.faderDecibels(controllerValue: 40)
        let want = 0.5 * Decibels.toLinear(moved)
        let before = render(16)
        XCTAssertEqual(Double(before.last ?? 0), want, accuracy: 1e-4, "the controller's move is heard")

        // Nobody has told the session: every edit below hands the engine a spec at 0 dB and −20 dB.
        var edits: [(String, Session)] = []
        var edited = session
        edited.tracks[1].playbackChain = "gain:-3"
        edits.append(("another track's chain", edited))
        edited.tracks[0].regions[0].sourceOffsetFrame = 4800
        edits.append(("its region moved (new material, its old voice the fallback)", edited))
        edited.tracks[0].playbackChain = "gain:0"
        edits.append(("its chain changed (a new strip follows the old)", edited))
        edited.tracks.insert(Track(name: "New", gainDecibels: -6), at: 1)
        edits.append(("a track inserted before another", edited))
        for (what, next) in edits {
            try engine.apply(try GraphSpec(session: next, folder: folder))
            let g = engine.graphs.last!
            let a = g.spec.tracks.firstIndex { $0.name == "A" }!
            XCTAssertEqual(g.strips[a].controls.gain, Float(Decibels.toLinear(moved)), accuracy: 1e-6, "fader after: \(what)")
            XCTAssertEqual(g.routes.sendStates[a][0].controls.level, 1, accuracy: 1e-6, "send level after: \(what)")
            if let n = g.spec.tracks.firstIndex(where: { $0.name == "New" }) {
                XCTAssertEqual(g.strips[n].controls.gain, Float(Decibels.toLinear(-6)), accuracy: 1e-6, "a new track starts at its own fader")
            }
            // Heard once the swap (and a new voice's first read) is done: the controller's
            // fader, never the spec's 0 dB.
            let out = render(64)
            XCTAssertEqual(out.count, 64 * 256)
            let wrong = stride(from: 32 * 256, to: out.count, by: 1).first { abs(Double(out[$0]) - want) > 1e-4 }
            XCTAssertNil(wrong, "heard \(wrong.map { out[$0] } ?? 0) at \(wrong ?? 0) frames after: \(what), not \(want)")
        }
        // A typed change is the one way the control thread moves it.
        let placeOfA = engine.graphs.last!.spec.tracks.firstIndex { $0.name == "A" }!
        engine.set(.gain(strip: placeOfA, decibels: -6))
        XCTAssertEqual(Double(render(16).last ?? 0), 0.5 * Decibels.toLinear(-6), accuracy: 1e-4, "a typed change is heard")
    }

    func testAnEditOfOneParameterLeavesAParameterAControllerMovedAlone() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/p.tapedeck")
        var session = Session()
        session.tracks = [Track(name: "A", playbackChain: "lpf:cutoff=1000,gain:0")]
        session.masterChain = "gain:0,hpf:cutoff=20"
        session.midiBindings = [MIDIBinding(controller: 74, channel: 1, kind: .parameter, track: "A", node: 1, parameter: "cutoff")]
        try folder.create(session)
        let run = try FreewheelRun(session, folder, rate: rate)
        defer { run.close() }
        let engine = run.engine, port = run.port
        func cycle(_ n: Int) { _ = run.render(n) }
        cycle(4)
        port.receive(status: 0xB0, data1: 74, data2: 127, atNanoseconds: MIDIInputPort.now())
        cycle(4)
        func strip() -> ChainInstance { engine.graphs.last!.strips[0].chain! }
        let cutoff = strip().nodes[0].parameters.index(of: "cutoff")!
        XCTAssertEqual(strip().nodes[0].parameters.value(cutoff), 20000, accuracy: 1e-6, "the knob's top is 20 kHz")
        // The other node's level and a bypass change, from a session that has not heard of the knob.
        var edited = session
        edited.tracks[0].playbackChain = "lpf:cutoff=1000,!gain:-3"
        edited.masterChain = "gain:-1,hpf:cutoff=20"
        try engine.apply(try GraphSpec(session: edited, folder: folder))
        cycle(4)
        let chain = strip()
        XCTAssertEqual(chain.nodes[0].parameters.value(cutoff), 20000, accuracy: 1e-6, "the knob's cutoff is kept")
        let level = chain.nodes[1].parameters.index(of: "gain")!
        XCTAssertEqual(chain.nodes[1].parameters.value(level), -3, accuracy: 1e-9, "the edited parameter is written")
        XCTAssertTrue(chain.isBypassed(1), "the bypass is written")
        let master = engine.graphs.last!.masterChain!
        XCTAssertEqual(master.nodes[0].parameters.value(master.nodes[0].parameters.index(of: "gain")!), -1, accuracy: 1e-9)
        // An edit that names the cutoff moves it.
        edited.tracks[0].playbackChain = "lpf:cutoff=500,!gain:-3"
        try engine.apply(try GraphSpec(session: edited, folder: folder))
        XCTAssertEqual(strip().nodes[0].parameters.value(cutoff), 500, accuracy: 1e-6)
    }
}

/// An engine on a freewheeling device playing `session` from 0, a MIDI input attached:
/// period by period as the test asks, so the test, not the machine's load, says when each
/// period renders.
private final class FreewheelRun {
    let device: FreewheelDevice
    let engine: Engine
    let port = MIDIInputPort(name: "surface")

    init(_ session: Session, _ folder: SessionFolder, rate: Int) throws {
        device = FreewheelDevice(sampleRate: rate, playbackChannels: 2, periodFrames: 256)
        engine = Engine(device: device)
        engine.attach(midiInput: port)
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try engine.start()
        engine.play()
    }

    /// The left output of the next `periods` periods.
    func render(_ periods: Int) -> [Float] {
        var out: [Float] = []
        var tries = 0
        while out.count < periods * 256 && tries < periods * 1000 {
            tries += 1
            guard device.cycle() else { usleep(100); continue }
            out += UnsafeBufferPointer(start: device.output[0], count: 256)
        }
        return out
    }

    func close() {
        device.stop()
        engine.close()
    }
}
