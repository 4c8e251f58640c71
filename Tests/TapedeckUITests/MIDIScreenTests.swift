import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckUI
import TapedeckTransport

/// MIDI on the screen: regions drawn as notes, quantise, MIDI tracks, freeze, MIDI learn and
/// controllers followed in the session.
final class MIDIScreenTests: XCTestCase {
    /// A saved session whose MIDI track holds one region: a low note (48) from 0.1 s for
    /// 0.4 s, a high note (72) from 1.1 s for 0.4 s.
    private func makeModel(link: FakeLink = FakeLink(), hooks: ScreenHooks = ScreenHooks()) throws -> ScreenModel {
        let dir = NSTemporaryDirectory() + "td-midi-screen-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 48000, tempoBPM: 120)
        try folder.create(session)
        let notes = MIDISequence(events: [.init(frame: 4800, status: 0x90, data1: 48, data2: 100), .init(frame: 24_000, status: 0x80, data1: 48),
                                          .init(frame: 52_800, status: 0x90, data1: 72, data2: 100), .init(frame: 72_000, status: 0x80, data1: 72)],
                                 lengthFrames: 96_000)
        let file = try MIDIRegionFile.writeNew(notes, base: "keys", name: "Keys", folder: folder, tempoMap: session.tempoMap)
        session.tracks = [Track(name: "Keys", playbackChain: "sampler",
                                regions: [Region(file: file, timelineStartFrame: 0, lengthFrames: 96_000, isMIDI: true)], isMIDI: true)]
        try folder.save(session)
        return ScreenModel(document: SessionDocument(session: session), folder: folder, link: link, hooks: hooks)
    }

    func testAMIDIRegionIsDrawnAsANoteViewLowNotesLowHighNotesHigh() throws {
        let model = try makeModel()
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        let text = (0..<30).map { canvas.text(row: $0) }
        // Two rows a lane, two pitch bands a row: 48 is the lowest band, 72 the highest.
        let low = text.indices.first { text[$0].contains("▄") }, high = text.indices.first { text[$0].contains("▀") }
        let lowRow = try XCTUnwrap(low), highRow = try XCTUnwrap(high)
        XCTAssertEqual(highRow + 1, lowRow, "the high note on the lane's top row, the low note on its bottom row")
        let lowColumn = try XCTUnwrap(Array(text[lowRow]).firstIndex(of: "▄"))
        let highColumn = try XCTUnwrap(Array(text[highRow]).firstIndex(of: "▀"))
        // 6000 frames a column: the low note from column 0 (4800), the high from column 8 (52800).
        XCTAssertEqual(highColumn - lowColumn, 8, "each note where it plays")
        XCTAssertTrue(model.peaks.problems.isEmpty, "no waveform is looked for in a MIDI file: \(model.peaks.problems)")
        XCTAssertTrue(text.joined().contains("MIDI"), "the track list says the track's input is MIDI")
        let ascii = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .ascii)
        XCTAssertTrue(ascii.text.allSatisfy(\.isASCII), "ASCII terminals get ASCII notes")
    }

    func testQuantiseMovesTheNotesIntoANewFileAndUndoBringsTheOldOneBack() throws {
        let link = FakeLink()
        let model = try makeModel(link: link)
        let before = model.session
        model.handle(.char("Q"))
        guard case .text(let input)? = model.overlay, case .quantize(let ref) = input.purpose else { return XCTFail("asks for the grid") }
        XCTAssertNotNil(model.applyQuantize("1/0", to: ref), "a wrong grid is refused")
        XCTAssertNil(model.applyQuantize("1/4 100%", to: ref))
        model.handle(.named(.esc))
        let region = model.session.tracks[0].regions[0]
        XCTAssertNotEqual(region.file, before.tracks[0].regions[0].file, "a new file")
        let notes = try MIDIRegionFile.sequence(of: region, folder: XCTUnwrap(model.folder), sampleRate: 48000).notes
        XCTAssertEqual(notes.map(\.startFrame), [0, 48_000], "onto the quarter notes")
        XCTAssertEqual(notes.map { $0.endFrame - $0.startFrame }, [19_200, 19_200], "lengths kept")
        XCTAssertEqual(link.session, model.session, "the engine follows")
        model.handle(.char("u"))
        XCTAssertEqual(model.session, before)
    }

    func testNewMIDITrackLearnCyclesAndControllerMovesBecomeOneUndoableStep() throws {
        let link = FakeLink()
        let model = try makeModel(link: link)
        model.handle(.char("N"))
        XCTAssertEqual(model.session.tracks.last?.isMIDI, true)
        XCTAssertEqual(model.session.tracks.last?.playbackChain, "gm")
        model.handle(.char("u"))
        // Each press names the next target: fader, pan, mute, then off.
        for kind in [MIDIBinding.Kind.fader, .pan, .mute] {
            model.handle(.ctrl("l"))
            XCTAssertEqual(link.learnTarget, MIDIBinding(controller: 0, kind: kind, track: "Keys"))
        }
        model.handle(.ctrl("l"))
        XCTAssertNil(link.learnTarget)
        model.handle(.ctrl("l"))
        model.handle(.ctrl("l"))
        // A controller arrives: the binding joins the session.
        link.midiChanges.learned = MIDIBinding(controller: 10, channel: 1, kind: .pan, track: "Keys")
        model.tick(nowSeconds: 0)
        XCTAssertEqual(model.session.midiBindings, [MIDIBinding(controller: 10, channel: 1, kind: .pan, track: "Keys")])
        XCTAssertNil(model.learning)
        // The knob turns: every value reaches the session, as one step to undo.
        let learnt = model.session.midiBindings[0]
        let steps = model.document.undoName
        for v in [0, 20, 127] {
            link.midiChanges.moves = [(learnt, v)]
            model.tick(nowSeconds: 0)
        }
        XCTAssertEqual(model.session.tracks[0].pan, 1)
        XCTAssertNotEqual(model.document.undoName, steps)
        model.handle(.char("u"))
        XCTAssertEqual(model.session.tracks[0].pan, 0, "one undo takes the whole turn back")
        // In the chain panel, learn names the selected parameter.
        model.handle(.named(.tab)); model.handle(.named(.tab))
        XCTAssertEqual(model.focus, .chain)
        model.handle(.ctrl("l"))
        XCTAssertEqual(link.learnTarget, MIDIBinding(controller: 0, kind: .parameter, track: "Keys", node: 1, parameter: "level"))
    }

    func testFreezeRendersInTheBackgroundThenTheChainIsLockedUntilUnfrozen() throws {
        let rendered = FrozenAudio(file: "audio/freeze-Keys.wav", lengthFrames: 100_000)
        let hooks = ScreenHooks(freeze: { _, _, track, progress in
            progress(0.5)
            usleep(50_000)
            return (rendered, "froze track \(track + 1)")
        })
        let model = try makeModel(hooks: hooks)
        model.handle(.ctrl("f"))
        XCTAssertTrue(model.message?.text.hasPrefix("freezing Keys") == true)
        let deadline = Date().addingTimeInterval(5)
        while model.session.tracks[0].frozen == nil && Date() < deadline {
            model.tick(nowSeconds: 0)
            usleep(5000)
        }
        XCTAssertEqual(model.session.tracks[0].frozen, rendered)
        XCTAssertEqual(model.message?.text, "froze track 1")
        model.applyChain(try Chain(parsing: "gain:-3"), track: 0)
        XCTAssertEqual(model.session.tracks[0].playbackChain, "sampler", "a frozen track's chain stays as rendered")
        XCTAssertEqual(model.message?.isError, true)
        model.handle(.ctrl("f"))
        XCTAssertNil(model.session.tracks[0].frozen)
        model.handle(.char("u"))
        XCTAssertEqual(model.session.tracks[0].frozen, rendered, "unfreezing is undoable (the render stays on disk)")
    }
}
