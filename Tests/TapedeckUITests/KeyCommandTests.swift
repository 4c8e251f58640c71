import XCTest
import TapedeckCore
import TapedeckRemote
import TapedeckIO
@testable import TapedeckUI

/// The screen's keys are a front-end of the one command vocabulary (``SurfaceCommand``, its
/// transport verbs ``RemoteCommand``s): a key that edits the session or moves the transport is
/// carried out by the same `perform(_:from:continuing:)` as OSC's and a Mackie's requests, and
/// its transport verbs are answered by ``ControlAnswer`` as `tapedeck ctl`'s are (issue 42 item
/// 1). Before, each key held its own edit code beside the surfaces': the home key during a take
/// did nothing and said nothing, where `ctl rewind` was refused with the reason.
final class KeyCommandTests: XCTestCase {
    /// Drums (strip 0) has a send to a bus, so every mixer key has something to move.
    private func model(_ link: FakeLink = FakeLink()) -> ScreenModel {
        let model = ScreenModelTests.makeModel(link: link)
        model.edit("add bus") { s in
            var bus = Track(name: "Verb")
            bus.bus = true
            s.tracks.append(bus)
            s.tracks[0].sends = [Send(bus: "Verb")]
        }
        return model
    }

    func testEveryMixerKeyMakesTheEditAndUndoStepOfTheSameCommandFromASurface() {
        let keys = model(), osc = model()
        // Mute, solo, arm, fader up, pan left and monitoring, by key.
        for key: Key in [.char("m"), .char("s"), .char("a"), .char("0"), .char("7"), .char("o")] { keys.handle(key) }
        // The same commands from an OSC surface.
        let asked: [SurfaceCommand] = [.mixer(.mute(strip: 0, on: true)), .mixer(.solo(strip: 0, on: true)),
                                       .arm(strip: 0, on: true), .mixer(.gain(strip: 0, decibels: 0.5)),
                                       .mixer(.pan(strip: 0, value: Pan.stepped(0, steps: -1, coarse: false))), .monitor(strip: 0, mode: .off)]
        for command in asked { XCTAssertNil(osc.perform(command, from: .osc("127.0.0.1:9000"), continuing: false)) }
        XCTAssertEqual(keys.session, osc.session, "the same session")
        XCTAssertTrue(keys.session.tracks[0].mute && keys.session.tracks[0].solo && keys.session.tracks[0].armed)
        XCTAssertEqual(keys.session.tracks[0].gainDecibels, 0.5)
        XCTAssertEqual(keys.session.tracks[0].monitoring, .off, "auto → off")
        // The same undo steps, the surface's named for it.
        var keySteps: [String] = [], oscSteps: [String] = []
        while let step = keys.owner.undo() { keySteps.append(step) }
        while let step = osc.owner.undo() { oscSteps.append(step) }
        XCTAssertEqual(Array(keySteps.prefix(6)), ["monitoring Drums", "pan Drums", "fader Drums", "arm Drums", "solo Drums", "mute Drums"])
        XCTAssertEqual(Array(oscSteps.prefix(6)), ["monitoring Drums", "OSC pan Drums", "OSC fader Drums", "arm Drums", "solo Drums", "mute Drums"])
    }

    func testASurfaceSaysWhatTheKeysSay() {
        // The monitoring words name an unarmed track's "(once armed)", whoever asked.
        let keys = model(), osc = model()
        keys.handle(.char("o"))
        XCTAssertNil(osc.perform(.monitor(strip: 0, mode: .off), from: .osc("127.0.0.1:9000"), continuing: false))
        XCTAssertEqual(keys.message?.text, "Drums: monitoring off: the disk only, the input never heard (once armed)")
        XCTAssertEqual(osc.message?.text, "Drums: monitoring off: the disk only, the input never heard (once armed) — asked by 127.0.0.1:9000")
        // A send level: the same line and the same undo step as the send keys'.
        XCTAssertNil(osc.perform(.mixer(.sendLevel(strip: 0, send: 0, decibels: -6)), from: .osc("127.0.0.1:9000"), continuing: false))
        XCTAssertEqual(osc.message?.text.hasPrefix("send Drums → Verb -6.0 dB post-fader"), true, osc.message?.text ?? "")
        XCTAssertEqual(osc.document.undoName, "OSC send level Drums to Verb")
    }

    func testTheTransportKeysObeyTheRulesEveryFrontEndObeys() {
        let link = FakeLink()
        link.canRecord = true
        let model = model(link)
        model.handle(.named(.right))
        model.handle(.named(.right))
        let end = link.position
        XCTAssertGreaterThan(end, 0, "the arrow moved the playhead")
        model.handle(.char("r"))
        XCTAssertEqual(model.snapshot.state, .recording)
        XCTAssertNil(model.message, "a key's verb is shown by the transport bar, not said")
        // During a take the playhead stays, and the key says why, in ctl's words.
        model.handle(.named(.home))
        XCTAssertEqual(model.message?.text, "recording: rewind is refused while a take runs (a take is never torn in two); stop first")
        XCTAssertEqual(model.message?.isError, true)
        XCTAssertEqual(link.position, end)
        model.handle(.named(.left))
        XCTAssertEqual(model.message?.text, "recording: moving to \(model.session.tempoMap.place(ofFrame: model.stepFrame(from: end, steps: -1))) is refused while a take runs (a take is never torn in two); stop first")
        XCTAssertEqual(link.position, end, "an arrow is a locate: refused too")
        // Stop, then home moves as ctl's rewind does.
        model.handle(.named(.space))
        XCTAssertEqual(model.snapshot.state, .stopped)
        model.handle(.named(.home))
        XCTAssertEqual(link.position, 0)
        XCTAssertNotEqual(model.message?.isError, true)
        // The loop key with no range is refused in the control socket's words.
        model.handle(.char("l"))
        XCTAssertEqual(model.message?.text, "no loop range: set it with [ and ] on the screen")
        // The speed keys step the speed, and say it.
        model.handle(.char(">"))
        XCTAssertGreaterThan(model.speed, 1)
        XCTAssertTrue(link.calls.contains("speed \(model.speed)"), "\(link.calls)")
        XCTAssertEqual(model.message?.text.hasPrefix("speed "), true)
    }

    func testTheRecordKeyStillRefusesABusSelectedWhereARemoteRecordsTheArmedTracks() {
        let link = FakeLink()
        link.canRecord = true
        let model = model(link)
        model.selectTrack(3)
        model.handle(.char("r"))
        XCTAssertEqual(model.message?.text, "Verb is a bus: a bus has no input to record")
        XCTAssertEqual(model.snapshot.state, .stopped)
        XCTAssertEqual(model.handleRemote(.record, from: "ctl"), .ok("recording"))
        XCTAssertEqual(model.snapshot.state, .recording)
        // During the take the record key ends it, whatever is selected.
        model.handle(.char("r"))
        XCTAssertEqual(model.snapshot.state, .stopped)
    }

    /// The save key, a session manager's save and `ctl save` are one command: each saves the
    /// session as it stands on the screen; with no folder yet, only the key asks where.
    func testTheSaveKeyNSMAndCtlSaveAreOneCommand() throws {
        let unsaved = model()
        XCTAssertEqual(unsaved.handleRemote(.save, from: "nsm"),
                       .error("the session has no folder yet: ctrl-s on the screen asks where to save it"))
        unsaved.handle(.ctrl("s"))
        guard case .text(let input)? = unsaved.overlay, input.purpose == .saveAs else { return XCTFail("the key asks where to save") }

        let dir = NSTemporaryDirectory() + "td-key-save-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        try folder.create(ScreenModelTests.makeSession())
        let model = ScreenModel(document: SessionDocument(session: ScreenModelTests.makeSession()), folder: folder, link: FakeLink(),
                                hooks: ScreenHooks())
        model.handle(.char("m"))
        XCTAssertTrue(model.document.isDirty)
        XCTAssertEqual(model.handleRemote(.save, from: "nsmd"), .ok("saved"))
        XCTAssertEqual(model.message?.text, "saved — asked by nsmd")
        XCTAssertFalse(model.document.isDirty)
        XCTAssertTrue(try folder.load().tracks[0].mute, "the file holds what the screen held")
        model.handle(.char("m"))
        model.handle(.ctrl("s"))
        XCTAssertEqual(model.message?.text, "saved \(folder.path)", "the key says what its save said")
        XCTAssertFalse(try folder.load().tracks[0].mute)
    }

    /// MIDI learn is a front-end of the same vocabulary: a learnt controller's move is the
    /// command a surface sends for that control, carried out by the same perform (one undo step
    /// a turn, said on the message line), never handed back to the engine, which applied it
    /// as it came. Before, the screen mirrored the move into its document with code of its own.
    func testALearntControllersMoveIsTheSurfacesCommandAndIsNotHandedBack() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        let fader = MIDIBinding(controller: 7, channel: 1, kind: .fader, track: "Bass")
        model.edit("learn") { $0.bind(fader) }
        for value in [0, 64, 100] {
            link.midiChanges.moves = [(fader, value)]
            model.tick(nowSeconds: 0)
        }
        let level = Fader.stored(MIDIBinding.faderDecibels(controllerValue: 100))
        XCTAssertEqual(model.session.tracks[1].gainDecibels, level)
        XCTAssertEqual(model.command(for: fader, controllerValue: 100), .mixer(.gain(strip: 1, decibels: level)))
        XCTAssertEqual(model.document.undoName, "MIDI fader Bass")
        XCTAssertEqual(model.message?.text, "Bass fader \(Fader.text(level)) dB")
        XCTAssertEqual(link.mixerChanges, [], "the engine has the value: nothing handed back to step it back")
        model.handle(.char("u"))
        XCTAssertEqual(model.session.tracks[1].gainDecibels, 0, "one turn, one undo step")
        // A binding whose track is gone names nothing.
        let before = model.session
        link.midiChanges.moves = [(MIDIBinding(controller: 8, kind: .pan, track: "Gone"), 127)]
        model.tick(nowSeconds: 0)
        XCTAssertEqual(model.session, before)
        // An input chain's parameter is a chain value like the panel's.
        model.edit("chain") { $0.tracks[0].inputChain = "gain:gain=0" }
        let gain = MIDIBinding(controller: 9, kind: .parameter, track: "Drums", node: 1, parameter: "gain", inputChain: true)
        link.midiChanges.moves = [(gain, 127)]
        model.tick(nowSeconds: 0)
        XCTAssertNotEqual(model.session.tracks[0].inputChain, "gain:gain=0")
        XCTAssertEqual(model.document.undoName, "MIDI chain Drums input")
        XCTAssertEqual(link.chainChanges, [])
    }
}
