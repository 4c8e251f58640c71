import Foundation
import XCTest
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// MIDI through the long-lived engine on a device paced in real time: live notes land where
/// they were played, region notes on their frame, takes keep what was played, controllers
/// move what they are bound to, MMC reaches the control thread.
final class MIDIEngineTests: XCTestCase {
    private let period = 256

    /// A session whose MIDI track plays a one-frame click through the sampler (one-shot).
    private func clickSession(_ dir: String, sequence: MIDISequence?, armed: Bool) throws -> (Session, SessionFolder) {
        var (session, folder) = try MIDIFixture.session(in: dir, chain: "sampler:file=samples/click.wav:mode=oneshot", sequence: sequence)
        try FileManager.default.createDirectory(atPath: folder.samplesFolder, withIntermediateDirectories: true)
        try MIDIFixture.writeClick(folder.samplesFolder + "/click.wav")
        session.tracks[0].armed = armed
        try folder.save(session)
        return (session, folder)
    }

    private func waitFrames(_ engine: Engine, until frame: Int64, timeout: Double = 30) {
        let deadline = Date().addingTimeInterval(timeout)
        while engine.status().deviceFrame < frame && engine.isRunning && Date() < deadline { usleep(2000) }
    }

    /// Root-note clicks at full velocity every 0.1 s for two seconds.
    private func clicksEveryTenthOfASecond() -> MIDISequence {
        var events: [MIDISequence.Event] = []
        for f in stride(from: Int64(0), to: 96_000, by: 4800) {
            events += [.init(frame: f, status: 0x90, data1: 60, data2: 127), .init(frame: f + 10, status: 0x80, data1: 60)]
        }
        return MIDISequence(events: events, lengthFrames: 96_000)
    }

    /// The engine playing `session` from the start on a paced device, with a MIDI input.
    private func playing(_ session: Session, _ folder: SessionFolder, seconds: Double, port name: String) throws
        -> (Engine, PacedRecordingDevice, MIDIInputPort) {
        let device = PacedRecordingDevice(periodFrames: period, seconds: seconds)
        let engine = Engine(device: device)
        let port = MIDIInputPort(name: name)
        engine.attach(midiInput: port)
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        engine.play()
        try engine.start()
        return (engine, device, port)
    }

    func testANoteSentAtAKnownTimeIsRenderedByTheSamplerAtThatFrameWithinAPeriod() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try clickSession(dir, sequence: nil, armed: true)
        let device = PacedRecordingDevice(periodFrames: period, seconds: 3)
        let engine = Engine(device: device)
        let port = MIDIInputPort(name: "test")
        XCTAssertTrue(engine.attach(midiInput: port))
        try engine.start(try GraphSpec(session: session, folder: folder))
        // Played at these device frames: stamped with their moments and handed over at once,
        // ahead of time (the engine waits for each). A MIDI thread hands a message over the
        // instant it arrives; this test's thread cannot promise that on a busy machine, and
        // where a message handed over after its period was rendered lands (the next period
        // rendered) is not what this test asks.
        let played: [Int64] = [24_000, 48_123, 60_001, 96_200]
        for f in played {
            port.receive(status: 0x90, data1: 60, data2: 127, atNanoseconds: device.nanoseconds(atFrame: f))
            port.receive(status: 0x80, data1: 60, data2: 0, atNanoseconds: device.nanoseconds(atFrame: f + 100))
        }
        waitFrames(engine, until: 120_000)
        let status = engine.status()
        engine.close()
        let onsets = MIDIFixture.onsets(device.played, threshold: 0.5).map(Int64.init)
        XCTAssertEqual(onsets.count, played.count, "\(onsets)")
        for (sent, heard) in zip(played, onsets) {
            // Placed one period late (the period it arrived in had begun), never more.
            XCTAssertEqual(Double(heard - sent), Double(period), accuracy: Double(period) / 2, "sent at \(sent), heard at \(heard)")
        }
        // Jitter-free: the spacing of what was played is the spacing of what is heard.
        for k in 1..<min(onsets.count, played.count) {
            XCTAssertEqual(Double(onsets[k] - onsets[k - 1]), Double(played[k] - played[k - 1]), accuracy: Double(period) / 4)
        }
        XCTAssertEqual(status.xrunCount, 0)
    }

    /// The audio thread woken late, as on a busy machine — once by 40 ms (8 periods: more
    /// than any smoothing of wake-ups lets through), once by 15 ms just before a note is due —
    /// while the device's clock runs on: the notes still sound exactly a period after they
    /// were played, since they are placed by the device's clock, not the thread's wake-ups.
    func testNotesKeepTheirFramesWhenTheAudioThreadWakesLate() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try clickSession(dir, sequence: nil, armed: true)
        // 48_123 is taken by the period from 48_128 (woken 40 ms late); 60_001 by the period
        // from 60_160, which renders straight after the one from 59_648 (woken 15 ms late).
        let device = PacedRecordingDevice(periodFrames: period, seconds: 3,
                                          lateWakeUps: [(frame: 48_128, nanoseconds: 40_000_000), (frame: 59_648, nanoseconds: 15_000_000)])
        let engine = Engine(device: device)
        let port = MIDIInputPort(name: "test")
        XCTAssertTrue(engine.attach(midiInput: port))
        try engine.start(try GraphSpec(session: session, folder: folder))
        let played: [Int64] = [24_000, 48_123, 60_001, 96_200]
        for f in played {
            port.receive(status: 0x90, data1: 60, data2: 127, atNanoseconds: device.nanoseconds(atFrame: f))
            port.receive(status: 0x80, data1: 60, data2: 0, atNanoseconds: device.nanoseconds(atFrame: f + 100))
        }
        waitFrames(engine, until: 120_000)
        engine.close()
        let onsets = MIDIFixture.onsets(device.played, threshold: 0.5).map(Int64.init)
        XCTAssertEqual(onsets.count, played.count, "\(onsets)")
        for (sent, heard) in zip(played, onsets) {
            XCTAssertEqual(heard - sent, Int64(period), "sent at \(sent), heard at \(heard): a period later, to the frame")
        }
    }

    func testRegionNotesSoundOnTheirExactFramesAndStopWhenTheTransportStops() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let notes: [Int64] = [1000, 30_000, 50_123]
        var events: [MIDISequence.Event] = []
        for f in notes { events += [.init(frame: f, status: 0x90, data1: 60, data2: 127), .init(frame: f + 50, status: 0x80, data1: 60)] }
        let (session, folder) = try clickSession(dir, sequence: MIDISequence(events: events, lengthFrames: 60_000), armed: false)
        let (engine, device, _) = try playing(session, folder, seconds: 2, port: "idle")
        waitFrames(engine, until: 70_000)
        engine.close()
        XCTAssertEqual(MIDIFixture.onsets(device.played, threshold: 0.5).map(Int64.init), notes, "sample-exact")
    }

    /// At another speed a MIDI track is played at timeline rate into its instrument and the
    /// sound goes through the mix's time-pitch with the audio tracks: at 2× varispeed the
    /// region's notes sound half their timeline distance apart, at 0.5× stretch twice it.
    func testRegionNotesAtAnotherSpeedSoundWhereTheTransportPutsThem() throws {
        let notes: [Int64] = [4800, 30_000, 50_123]
        var events: [MIDISequence.Event] = []
        for f in notes { events += [.init(frame: f, status: 0x90, data1: 60, data2: 127), .init(frame: f + 50, status: 0x80, data1: 60)] }
        for (settings, tolerance) in [(TimePitchSettings(speed: 2, mode: .varispeed, pitchSemitones: 0), 64.0),
                                      (TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 0), 1024.0)] {
            let dir = try Fixture.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let (session, folder) = try clickSession(dir, sequence: MIDISequence(events: events, lengthFrames: 60_000), armed: false)
            let device = PacedRecordingDevice(periodFrames: period, seconds: 3)
            let engine = Engine(device: device)
            engine.setTimePitch(settings)
            engine.waitForTimePitch()
            try engine.prepare(try GraphSpec(session: session, folder: folder))
            engine.play()
            try engine.start()
            waitFrames(engine, until: Int64(60_000 / settings.speed) + 8000)
            engine.close()
            let onsets = MIDIFixture.onsets(device.played, threshold: 0.3)
            XCTAssertEqual(onsets.count, notes.count, "speed \(settings.speed): \(onsets)")
            guard let first = onsets.first else { continue }
            // The transport holds still while the stretcher primes (a few periods on a paced
            // device), then rolls from frame 0: the notes keep their timeline spacing ÷ speed.
            let start = Double(first) - Double(notes[0]) / settings.speed
            XCTAssertGreaterThanOrEqual(start, -tolerance, "speed \(settings.speed): not before the roll")
            XCTAssertLessThan(start, 24_000, "speed \(settings.speed): rolling within half a second")
            for (note, heard) in zip(notes, onsets) {
                XCTAssertEqual(Double(heard) - start, Double(note) / settings.speed, accuracy: tolerance,
                               "speed \(settings.speed), note at \(note)")
            }
        }
    }

    func testAMIDITakeKeepsWhatWasPlayedWhereItWasPlayed() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try clickSession(dir, sequence: nil, armed: true)
        let device = PacedRecordingDevice(periodFrames: period, seconds: 3)
        let engine = Engine(device: device)
        let port = MIDIInputPort(name: "test")
        engine.attach(midiInput: port)
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try FileManager.default.createDirectory(atPath: folder.midiFolder, withIntermediateDirectories: true)
        let path = folder.midiFolder + "/take.mid"
        // The record point is a second in: what is played before it is not kept.
        let set = try engine.startTakes([], gate: TakeGate(recordPoint: 48_000, latencyFrames: engine.midiLatencyFrames),
                                        midi: [MIDITakeRequest(track: 0, path: path, tempoMap: session.tempoMap, trackName: "Keys")])
        engine.play()
        try engine.start()
        let sent: [(frame: Int64, status: UInt8, note: UInt8, velocity: UInt8)] = [
            (20_000, 0x90, 50, 90), (30_000, 0x80, 50, 0),                  // before the record point
            (52_000, 0x90, 60, 100), (60_000, 0xB0, 64, 127), (70_000, 0x80, 60, 0),
            (80_000, 0x91, 67, 33), (99_000, 0xE0, 0, 80),                   // held when the pass ends
        ]
        // Handed over at once, stamped with their moments (why: see
        // testANoteSentAtAKnownTimeIsRenderedByTheSamplerAtThatFrameWithinAPeriod).
        for s in sent {
            port.receive(status: s.status, data1: s.note, data2: s.velocity, atNanoseconds: device.nanoseconds(atFrame: s.frame))
        }
        waitFrames(engine, until: 110_000)
        engine.endTakes()
        _ = engine.finish(set)
        engine.close()
        let outcome = try XCTUnwrap(set.midiOutcomes.first)
        XCTAssertNil(outcome.error)
        let take = try MIDIRegionFile.read(path: path, sampleRate: 48000)
        XCTAssertEqual(take.lengthFrames, outcome.frameCount)
        XCTAssertGreaterThan(outcome.frameCount, 110_000 - 48_000 - 2 * Int64(period))
        let kept = sent.filter { $0.frame >= 48_000 }
        let notOff = take.events.filter { !($0.isNoteOff && $0.data1 == 67) }
        XCTAssertEqual(notOff.map(\.status), kept.map(\.status))
        XCTAssertEqual(notOff.map(\.data1), kept.map(\.note))
        XCTAssertEqual(notOff.map(\.data2), kept.map(\.velocity))
        for (got, want) in zip(notOff, kept) {
            XCTAssertEqual(Double(got.frame), Double(want.frame - 48_000), accuracy: Double(period) / 2, "played where it was played")
        }
        XCTAssertEqual(take.events.last.map { $0.isNoteOff && $0.data1 == 67 }, true, "the held note ends with the take")
    }

    /// An xrun (the device refuses the period from 48_128 and plays 9_600 more frames unheard
    /// while the thread stalls) with notes played in the frames it lost, and a note handed
    /// over after the period it was played in was rendered: the take keeps each where it was
    /// played, on the device's clock — the frames the xrun lost are in the take — and the
    /// notes played before and after the xrun keep theirs. Heard, they sound as soon as the
    /// engine can: the lost ones at the first frame after the xrun, the late one on arrival.
    func testNotesPlayedInFramesAnXrunLostOrHandedOverLateAreKeptWhereTheyWerePlayed() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try clickSession(dir, sequence: nil, armed: true)
        let lostFrom: Int64 = 48_128, lost: Int64 = 9_600
        let resumed = lostFrom + Int64(period) + lost
        let device = PacedRecordingDevice(periodFrames: period, seconds: 3, xruns: [(frame: lostFrom, lostFrames: lost)])
        let engine = Engine(device: device)
        let port = MIDIInputPort(name: "test")
        engine.attach(midiInput: port)
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try FileManager.default.createDirectory(atPath: folder.midiFolder, withIntermediateDirectories: true)
        let path = folder.midiFolder + "/take.mid"
        let recordPoint: Int64 = 12_000
        let set = try engine.startTakes([], gate: TakeGate(recordPoint: recordPoint, latencyFrames: engine.midiLatencyFrames),
                                        midi: [MIDITakeRequest(track: 0, path: path, tempoMap: session.tempoMap, trackName: "Keys")])
        engine.play()
        try engine.start()
        // Handed over ahead of time, stamped with their moments (why: see
        // testANoteSentAtAKnownTimeIsRenderedByTheSamplerAtThatFrameWithinAPeriod); one note
        // (80_000) is handed over only once the device is well past it.
        let inTime: [Int64] = [24_000, 50_000, 55_555, 60_000, 72_000]
        let late: Int64 = 80_000
        for (k, f) in inTime.enumerated() {
            port.receive(status: 0x90, data1: UInt8(60 + k), data2: 100, atNanoseconds: device.nanoseconds(atFrame: f))
            port.receive(status: 0x80, data1: UInt8(60 + k), data2: 0, atNanoseconds: device.nanoseconds(atFrame: f + 100))
        }
        waitFrames(engine, until: late + 6_000)
        port.receive(status: 0x90, data1: 70, data2: 100, atNanoseconds: device.nanoseconds(atFrame: late))
        port.receive(status: 0x80, data1: 70, data2: 0, atNanoseconds: device.nanoseconds(atFrame: late + 100))
        waitFrames(engine, until: 110_000)
        let status = engine.status()
        engine.endTakes()
        _ = engine.finish(set)
        engine.close()
        XCTAssertEqual(status.xrunCount, 1)

        // The take: every note where it was played.
        let take = try MIDIRegionFile.read(path: path, sampleRate: 48000)
        let ons = take.events.filter(\.isNoteOn)
        let played = inTime + [late]
        XCTAssertEqual(ons.map(\.data1), (0..<played.count).map { UInt8($0 == played.count - 1 ? 70 : 60 + $0) })
        for (got, want) in zip(ons, played) {
            XCTAssertEqual(got.frame, want - recordPoint, "note \(got.data1) played at device frame \(want)")
        }
        // Heard: a period after it was played, or (lost, late) as soon as the engine could.
        let onsets = MIDIFixture.onsets(device.played, threshold: 0.5).map(Int64.init)
        XCTAssertEqual(onsets.count, played.count - 1, "the two notes played in the lost frames sound together: \(onsets)")
        XCTAssertEqual(onsets.first, 24_000 + Int64(period))
        XCTAssertEqual(onsets.dropFirst().first, resumed, "the notes the xrun lost sound at its first frame after")
        XCTAssertEqual(Array(onsets.dropFirst(2).prefix(2)), [60_000 + Int64(period), 72_000 + Int64(period)])
        XCTAssertGreaterThan(onsets.last ?? 0, late + 6_000, "the late note sounds when it arrives")
    }

    func testABoundControllerMovesTheFaderAndIsReportedAndLearningTakesTheNextController() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try clickSession(dir, sequence: clicksEveryTenthOfASecond(), armed: false)
        session.midiBindings = [MIDIBinding(controller: 7, channel: 1, kind: .fader, track: "keys")]
        let (engine, device, port) = try playing(session, folder, seconds: 2.5, port: "test")
        // Fader down (CC 7 = 0: −∞) at 0.5 s, back to 100 (0 dB) at 1 s; CC 7 on channel 2 is not bound.
        MIDIFixture.sleep(until: device.nanoseconds(atFrame: 24_000))
        port.receive(status: 0xB0, data1: 7, data2: 0, atNanoseconds: MIDIInputPort.now())
        MIDIFixture.sleep(until: device.nanoseconds(atFrame: 36_000))
        port.receive(status: 0xB1, data1: 7, data2: 0, atNanoseconds: MIDIInputPort.now())
        MIDIFixture.sleep(until: device.nanoseconds(atFrame: 48_000))
        port.receive(status: 0xB0, data1: 7, data2: 100, atNanoseconds: MIDIInputPort.now())
        MIDIFixture.sleep(until: device.nanoseconds(atFrame: 60_000))
        engine.learnNextController()
        port.receive(status: 0xB3, data1: 74, data2: 99, atNanoseconds: MIDIInputPort.now())
        waitFrames(engine, until: 100_000)
        let moves = engine.drainControllerMoves()
        let learnt = engine.learnedController()
        engine.close()
        let onsets = MIDIFixture.onsets(device.played, threshold: 0.5)
        XCTAssertTrue(onsets.contains { $0 < 24_000 }, "heard before the fader went down")
        XCTAssertFalse(onsets.contains { $0 > 24_000 + 2 * period && $0 < 48_000 }, "silent while the fader is down: \(onsets)")
        XCTAssertTrue(onsets.contains { $0 > 48_000 + 2 * period }, "heard again at 0 dB")
        XCTAssertEqual(moves.map { [$0.binding, $0.value] }, [[0, 100]], "the latest value of each binding moved")
        XCTAssertGreaterThanOrEqual(moves.first?.timelineFrame ?? -1, 48_000, "heard from where it was applied")
        XCTAssertEqual(learnt, LearnedController(channel: 3, controller: 74, value: 99))
    }

    func testMMCAndSurfaceButtonsReachTheControlThreadAndAreNoNotes() throws {
        let port = MIDIInputPort(name: "surface", surface: .mackie)
        let engine = Engine(device: PacedRecordingDevice())
        engine.attach(midiInput: port)
        let play: [UInt8] = [0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7]
        play.withUnsafeBufferPointer { port.receive($0, atNanoseconds: 0) }
        port.receive(status: 0x90, data1: 95, data2: 127, atNanoseconds: 0)   // Mackie record
        port.receive(status: 0x90, data1: 95, data2: 0, atNanoseconds: 0)     // its release
        port.receive(status: 0x90, data1: 60, data2: 100, atNanoseconds: 0)   // a note
        XCTAssertEqual(engine.drainMachineCommands().map(\.command), [.play, .recordStrobe])
        var notes = 0
        while port.messages.pop() != nil { notes += 1 }
        XCTAssertEqual(notes, 1, "only the note goes to the audio thread")
    }

    func testAFrozenTrackPlaysItsRenderWhichIsTheExportOfItsInstrument() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let events: [MIDISequence.Event] = [.init(frame: 4000, status: 0x90, data1: 60, data2: 127), .init(frame: 4100, status: 0x80, data1: 60),
                                            .init(frame: 20_000, status: 0x90, data1: 72, data2: 64), .init(frame: 20_050, status: 0x80, data1: 72)]
        var (session, folder) = try clickSession(dir, sequence: MIDISequence(events: events, lengthFrames: 24_000), armed: false)
        let result = try TrackFreeze.render(session: session, folder: folder, track: 0)
        let frozen = try Fixture.readMono(folder.absolutePath(of: result.frozen.file))
        XCTAssertEqual(MIDIFixture.onsets(frozen, threshold: 0.3), [4000, 20_000])
        XCTAssertEqual(frozen[4000], 1, accuracy: 1e-6, "velocity 127 at the root note: the click at full scale")
        XCTAssertEqual(frozen[20_000], 64.0 / 127, accuracy: 1e-3, "an octave up at velocity 64")
        XCTAssertGreaterThanOrEqual(result.frozen.lengthFrames, 24_000)
        session.tracks[0].frozen = result.frozen
        XCTAssertEqual(AudioFileReaderChannels(folder.absolutePath(of: result.frozen.file)), 2, "an instrument track freezes in stereo")
        // Exported with the freeze (and no instrument), the mix is the render (a stereo track
        // at the centre passes at unity).
        let out = dir + "/mix.wav"
        _ = try Mixdown(.init(session: session, folder: folder, range: FrameRange(startFrame: 0, endFrame: 24_000), outputPath: out,
                              container: .wav, encoding: .float32)).run()
        let mix = try Fixture.readMono(out)
        XCTAssertEqual(MIDIFixture.onsets(mix, threshold: 0.3), [4000, 20_000])
        XCTAssertEqual(mix[4000], 1, accuracy: 1e-6)
        XCTAssertEqual(mix[20_000], 64.0 / 127, accuracy: 1e-3)
    }

    /// Plays `session` for 2.5 s and turns controller 20 (channel 6) to 0 at frame 40,000;
    /// the moves the engine reported and what it played.
    private func turnController20ToZero(_ session: Session, _ folder: SessionFolder) throws -> (moves: [ControllerMove], played: [Float]) {
        let (engine, device, port) = try playing(session, folder, seconds: 2.5, port: "knob")
        MIDIFixture.sleep(until: device.nanoseconds(atFrame: 40_000))
        port.receive(status: 0xB5, data1: 20, data2: 0, atNanoseconds: MIDIInputPort.now())
        waitFrames(engine, until: 100_000)
        let moves = engine.drainControllerMoves()
        engine.close()
        return (moves, device.played)
    }

    func testABoundControllerMovesANodeParameterOnTheAudioThread() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try clickSession(dir, sequence: clicksEveryTenthOfASecond(), armed: false)
        // CC 20 sweeps the sampler's level (node 1): 0 is its bottom, −60 dB.
        session.midiBindings = [MIDIBinding(controller: 20, kind: .parameter, track: "Keys", node: 1, parameter: "level")]
        let (moves, played) = try turnController20ToZero(session, folder)
        let clicks = stride(from: 0, to: 96_000, by: 4800).map { played[$0] }
        XCTAssertEqual(clicks.prefix(8).min() ?? 0, 1, accuracy: 1e-6, "full level before the controller moved")
        for c in clicks.suffix(8) {
            XCTAssertEqual(c, Float(Decibels.toLinear(-60)), accuracy: 1e-5, "the parameter's bottom (−60 dB) after it")
        }
        XCTAssertEqual(moves.map { [$0.binding, $0.value] }, [[0, 0]])
    }

    func testAControllerBoundToAFrozenTracksChainMovesNothing() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try clickSession(dir, sequence: clicksEveryTenthOfASecond(), armed: false)
        session.midiBindings = [MIDIBinding(controller: 20, kind: .parameter, track: "Keys", node: 1, parameter: "level")]
        session.tracks[0].frozen = try TrackFreeze.render(session: session, folder: folder, track: 0).frozen
        // The chain does not run while frozen: the controller is bound to nothing, so no move
        // is reported (a front-end would otherwise change a chain the user cannot change) and
        // the render plays as it was made.
        let (moves, played) = try turnController20ToZero(session, folder)
        XCTAssertEqual(moves.count, 0, "a move on a frozen chain was reported")
        let clicks = stride(from: 0, to: 96_000, by: 4800).map { played[$0] }
        for c in clicks { XCTAssertEqual(c, 1, accuracy: 1e-3, "the render at its level, before and after the move") }
    }

    func testABackendWithItsOwnMIDIPortsHandsMIDIToTheCycleAtExactFramesAndTakesThruBack() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try clickSession(dir, sequence: nil, armed: true)
        // A JACK-like device: its own thread runs cycles and delivers MIDI inside them.
        let device = CallbackMIDIDevice(periodFrames: period, cycles: 40,
                                        deliveries: [5: [(37, [0x90, 60, 127])], 9: [(200, [0x80, 60, 0]), (201, [0x90, 72, 64])],
                                                     12: [(0, [0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7])]])
        let engine = Engine(device: device)
        try engine.start(try GraphSpec(session: session, folder: folder))
        device.waitUntilDone()
        let machine = engine.drainMachineCommands()
        engine.close()
        XCTAssertEqual(MIDIFixture.onsets(device.played, threshold: 0.3), [5 * period + 37, 9 * period + 201], "on the frames delivered")
        XCTAssertEqual(device.thru.map(\.frame), [5 * period + 37, 9 * period + 200, 9 * period + 201], "thru, at the same frames")
        XCTAssertEqual(device.thru.map(\.bytes), [[0x90, 60, 127], [0x80, 60, 0], [0x90, 72, 64]])
        XCTAssertEqual(machine.map(\.command), [.play], "MMC from the device's own MIDI")
    }
}

/// A backend that owns its thread and has MIDI ports of its own, as JACK does: each cycle it
/// hands the engine that cycle's MIDI (``AudioDeviceMIDIClient``), renders, and keeps what
/// the engine sends on.
private final class CallbackMIDIDevice: AudioDevice, @unchecked Sendable {
    let configuration: DeviceConfiguration
    private let cycles: Int
    private let deliveries: [Int: [(Int, [UInt8])]]
    private(set) var played: [Float] = []
    private(set) var thru: [(frame: Int, bytes: [UInt8])] = []
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)

    init(periodFrames: Int, cycles: Int, deliveries: [Int: [(Int, [UInt8])]]) {
        configuration = DeviceConfiguration(name: "callback", sampleRate: 48000, captureChannels: 0, playbackChannels: 2,
                                            periodFrames: periodFrames, periodCount: 2, bufferFrames: 2 * periodFrames,
                                            captureFormat: nil, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: Int64(periodFrames), linked: true)
        self.cycles = cycles
        self.deliveries = deliveries
    }

    func start(client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError) {
        let n = configuration.periodFrames
        nonisolated(unsafe) let client = client
        let t = Thread { [self] in
            let out = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: n) }
            let input = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
            let output = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
            output[0] = out[0]; output[1] = out[1]
            client.audioThreadBegins(realtime: false)
            for cycle in 0..<cycles {
                _ = client.beginCycle()
                if let midi = client as? AudioDeviceMIDIClient {
                    for (offset, bytes) in deliveries[cycle] ?? [] {
                        bytes.withUnsafeBufferPointer { midi.receiveMIDI($0, frameOffset: offset) }
                    }
                }
                client.renderCycle(input: input, output: output, frameCount: n)
                if let midi = client as? AudioDeviceMIDIClient {
                    midi.sendMIDI { bytes, offset in thru.append((cycle * n + offset, Array(bytes))) }
                }
                played += Array(UnsafeBufferPointer(start: out[0], count: n))
                usleep(1000)
            }
            client.audioThreadEnds()
            out.forEach { $0.deallocate() }
            input.deallocate()
            output.deallocate()
            done.signal()
        }
        thread = t
        t.start()
    }

    func waitUntilDone() { done.wait(); done.signal() }
    func stop() {}
}

/// Channels of the audio file at `path`.
private func AudioFileReaderChannels(_ path: String) -> Int { (try? AudioFileReader(path: path))?.channelCount ?? 0 }
