import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// Automation written by hand: a learnt controller swept over a fader lane in touch mode is
/// heard instead of the lane while it moves, and the lane written from its moves plays back
/// the curve that was heard, frame for frame.
final class AutomationWriteTests: XCTestCase {
    private let rate = 48000

    /// A session with one mono track of a steady 0.5 hard left (so the left output is 0.5 ×
    /// the fader) and a fader lane at −20 dB in `mode`, CC 7 learnt to its fader.
    private func session(_ dir: String, lane: AutomationLane) throws -> (Session, SessionFolder) {
        let folder = SessionFolder(path: dir + "/w.tapedeck")
        try folder.create(Session())
        var session = Session()
        var track = try Fixture.steadyTrack(in: folder, seconds: 4, sampleRate: rate)
        track.automation = [lane]
        session.tracks = [track]
        session.midiBindings = [MIDIBinding(controller: 7, channel: 1, kind: .fader, track: "A")]
        try folder.save(session)
        return (session, folder)
    }

    /// Plays `session` from 0 on a paced device for `seconds`; `during` runs while it plays.
    private func play(_ session: Session, _ folder: SessionFolder, seconds: Double,
                      during: (Engine, PacedRecordingDevice, MIDIInputPort) -> Void = { _, _, _ in }) throws -> [Float] {
        let device = PacedRecordingDevice(periodFrames: 256, seconds: seconds)
        let engine = Engine(device: device)
        let port = MIDIInputPort(name: "fader")
        engine.attach(midiInput: port)
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        engine.play()
        try engine.start()
        during(engine, device, port)
        let deadline = Date().addingTimeInterval(30)
        while device.framesWritten.load(ordering: .acquiring) < device.capacityFrames && engine.isRunning && Date() < deadline {
            usleep(5000)
        }
        engine.close()
        return device.played
    }

    func testATouchWrittenFromAControllerSweepPlaysBackTheCurveTheSweepMade() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let lane = AutomationLane(parameter: .gain, mode: .touch,
                                  points: [AutomationPoint(frame: 0, value: -20), AutomationPoint(frame: 192_000, value: -20)])
        let (session, folder) = try self.session(dir, lane: lane)
        var moves: [ControllerMove] = []
        var releasedAt: Int64 = 0
        // Pass one: CC 7 sweeps up from 0.5 s, one step every 10 ms for 0.8 s (a hand on a
        // fader), then rests; the hand lets go at 2 s.
        let heard = try play(session, folder, seconds: 2.6) { engine, device, port in
            for k in 0..<80 {
                MIDIFixture.sleep(until: device.nanoseconds(atFrame: 24_000 + Int64(k) * 480))
                port.receive(status: 0xB0, data1: 7, data2: UInt8(40 + k), atNanoseconds: MIDIInputPort.now())
            }
            MIDIFixture.sleep(until: device.nanoseconds(atFrame: 96_000))
            engine.releaseTouch(track: 0, parameter: .gain)
            releasedAt = engine.status().positionFrame
            moves = engine.drainControllerMoves(everyMove: true)
        }
        XCTAssertEqual(moves.count, 80, "every move is handed over, not just the last")
        XCTAssertTrue(moves.allSatisfy { $0.timelineFrame >= 24_000 && $0.timelineFrame < 96_000 }, "each with where it was heard")
        XCTAssertEqual(moves.map(\.timelineFrame), moves.map(\.timelineFrame).sorted())

        // Touched: the sweep is heard, not the lane.
        let lastDecibels = MIDIBinding.faderDecibels(controllerValue: 119)
        XCTAssertEqual(Double(heard[12_000]), 0.5 * Decibels.toLinear(-20), accuracy: 1e-4, "the lane plays before the hand moves")
        XCTAssertEqual(Double(heard[80_000]), 0.5 * Decibels.toLinear(lastDecibels), accuracy: 1e-4, "the hand's value while held")
        XCTAssertEqual(Double(heard[110_000]), 0.5 * Decibels.toLinear(-20), accuracy: 1e-4, "let go: the lane plays again")

        // Written as the front-end writes it, then played: the curve heard, frame for frame.
        var writer = AutomationWriter(glideFrames: Engine.faderGlideFrames)
        for m in moves {
            XCTAssertTrue(writer.move(track: "A", lane: lane, value: Fader.stored(MIDIBinding.faderDecibels(controllerValue: m.value)),
                                      at: m.timelineFrame, nanoseconds: 0).isEmpty)
        }
        let writes = writer.releaseIdle(at: 1_000_000_000_000, frame: releasedAt)
        XCTAssertEqual(writes.count, 1)
        var written = session
        for w in writes { written.tracks[0].automation[0].apply(w) }
        XCTAssertEqual(written.tracks[0].automation[0].mode, .touch, "the lane keeps its mode")
        let played = try play(written, folder, seconds: 2.6)

        var worst = 0.0, worstAt = 0
        for k in 0..<min(heard.count, played.count) {
            // Where the hand let go, the engine glided back from the period after the release
            // was asked; the writer drew it from the playhead the control thread read.
            if k >= Int(releasedAt) - 1024 && k < Int(releasedAt) + 1024 { continue }
            let a = Decibels.fromLinear(Double(max(heard[k], 1e-9))), b = Decibels.fromLinear(Double(max(played[k], 1e-9)))
            if abs(a - b) > worst { (worst, worstAt) = (abs(a - b), k) }
        }
        XCTAssertLessThan(worst, 0.001, "the lane plays the curve the sweep made (worst \(worst) dB at frame \(worstAt))")
        XCTAssertEqual(Double(played[80_000]), 0.5 * Decibels.toLinear(lastDecibels), accuracy: 1e-4)
    }

    func testALatchHoldsItsLastValueToTheStopAndAWriteReplacesThePass() {
        let flat = [AutomationPoint(frame: 0, value: -20), AutomationPoint(frame: 480_000, value: -20)]
        var writer = AutomationWriter(glideFrames: 256)
        let latch = AutomationLane(parameter: .gain, mode: .latch, points: flat)
        _ = writer.move(track: "A", lane: latch, value: -6, at: 48_000, nanoseconds: 0)
        XCTAssertTrue(writer.releaseIdle(at: 10_000_000_000, frame: 60_000).isEmpty, "a latch does not let go when idle")
        let latched = writer.stop(at: 240_000)
        XCTAssertEqual(latched.count, 1)
        var lane = latch
        lane.apply(latched[0])
        XCTAssertEqual(lane.value(at: 47_999) ?? .nan, -20, accuracy: 1e-9, "from the lane's value where the hand took it")
        XCTAssertEqual(lane.value(at: 48_255) ?? .nan, -6, accuracy: 1e-9, "over one glide (the engine's last frame of it arrives)")
        XCTAssertEqual(lane.value(at: 240_000) ?? .nan, -6, accuracy: 1e-9, "held to the stop")
        XCTAssertEqual(lane.value(at: 480_000) ?? .nan, -20, accuracy: 1e-9, "the lane after the pass is left as it was")

        let write = AutomationLane(parameter: .pan, mode: .write, points: [AutomationPoint(frame: 96_000, value: 1)])
        writer.begin(track: "B", lane: write, value: -0.5, at: 0, nanoseconds: 0)
        _ = writer.move(track: "B", lane: write, value: 0.5, at: 48_000, nanoseconds: 0)
        let passes = writer.stop(at: 144_000)
        var pan = write
        pan.apply(passes[0])
        XCTAssertEqual(pan.value(at: 0) ?? .nan, -0.5, accuracy: 1e-9)
        XCTAssertEqual(pan.value(at: 96_000) ?? .nan, 0.5, accuracy: 1e-9, "the point inside the pass is written over")
        XCTAssertEqual(pan.value(at: 144_000) ?? .nan, 0.5, accuracy: 1e-9)
        XCTAssertFalse(writer.isWriting)
    }

    func testAMoveBackAlongTheTimelineEndsThePassAndANodeParameterStepsAsSet() {
        var writer = AutomationWriter(glideFrames: 256)
        let cutoff = AutomationLane(parameter: .node("lpf", "cutoff"), mode: .touch, points: [AutomationPoint(frame: 0, value: 1000)])
        _ = writer.move(track: "A", lane: cutoff, value: 2000, at: 96_000, nanoseconds: 0)
        _ = writer.move(track: "A", lane: cutoff, value: 4000, at: 97_024, nanoseconds: 0)
        // The loop wrapped: the pass before it is finished, a new one begins.
        let wrapped = writer.move(track: "A", lane: cutoff, value: 500, at: 48_000, nanoseconds: 0)
        XCTAssertEqual(wrapped.count, 1)
        var lane = cutoff
        lane.apply(wrapped[0])
        XCTAssertEqual(lane.value(at: 96_000) ?? .nan, 2000, accuracy: 1e-9, "a parameter is written where it was set")
        XCTAssertEqual(lane.value(at: 97_024) ?? .nan, 4000, accuracy: 1e-9)
        XCTAssertEqual(lane.value(at: 200_000) ?? .nan, 1000, accuracy: 1e-9, "and returns to the lane after the touch")
        XCTAssertTrue(writer.isWriting(track: "a", parameter: .node("lpf", "cutoff")), "the new pass runs on")
    }

    /// A send's level lane in touch: held by hand, the send's own level is heard (gliding from
    /// the lane's where the hand takes hold, no step), and let go, the lane again (gliding back).
    func testASendHeldByHandIsHeardInsteadOfItsLaneAndGlidesBothWays() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let lane = AutomationLane(parameter: .send("FX"), mode: .touch, points: [AutomationPoint(frame: 0, value: -30)])
        var (session, folder) = try self.session(dir, lane: lane)
        // Only the send is heard: the track's fader shut, a pre-fader send to a bus hard left.
        session.tracks[0].gainDecibels = Fader.silentDecibels
        session.tracks[0].sends = [Send(bus: "FX", levelDecibels: -30, preFader: true)]
        var fx = Track.makeBus(name: "FX")
        fx.pan = -1
        session.tracks.append(fx)
        try folder.save(session)
        var tookAt: Int64 = 0, letGoAt: Int64 = 0
        let heard = try play(session, folder, seconds: 2.2) { engine, device, _ in
            MIDIFixture.sleep(until: device.nanoseconds(atFrame: 24_000))
            engine.touch(track: 0, parameter: .send("FX"))
            engine.setSend(track: 0, index: 0, levelDecibels: -6, pan: 0)
            tookAt = engine.status().positionFrame
            MIDIFixture.sleep(until: device.nanoseconds(atFrame: 72_000))
            engine.releaseTouch(track: 0, parameter: .send("FX"))
            letGoAt = engine.status().positionFrame
        }
        let centre = PanLaw.mono(pan: 0).left
        func level(_ f: Int) -> Double { Decibels.fromLinear(Double(heard[f]) / (0.5 * centre)) }
        XCTAssertEqual(level(12_000), -30, accuracy: 0.01, "the lane before the hand")
        XCTAssertEqual(level(Int(tookAt) + 12_000), -6, accuracy: 0.01, "the hand's level while held")
        XCTAssertEqual(level(Int(letGoAt) + 12_000), -30, accuracy: 0.01, "the lane once let go")
        // Each change a glide of 256 frames: no step between two frames bigger than a glide's.
        let glideStep = 0.5 * centre * (Decibels.toLinear(-6) - Decibels.toLinear(-30)) / 256
        var worst = 0.0
        for f in 1..<min(heard.count, Int(letGoAt) + 6000) { worst = max(worst, abs(Double(heard[f] - heard[f - 1]))) }
        XCTAssertLessThan(worst, glideStep * 1.01, "taking hold and letting go glide (worst step \(worst))")
    }
}
