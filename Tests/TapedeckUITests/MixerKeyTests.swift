import XCTest
import TapedeckCore
import TapedeckDSP
@testable import TapedeckUI
import TapedeckSession
import TapedeckTransport

/// The mixer from the keyboard: track list keys, the mixer view, names and inputs.
final class MixerKeyTests: XCTestCase {
    private func type(_ text: String, into model: ScreenModel) { for c in text { model.handle(.char(c)) } }

    func testFaderAndPanKeysStepFineAndCoarseResetAndAreUndoneExactly() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        let before = model.session
        model.handle(.char("9"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -0.5)
        model.handle(.char(")"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 0, "a coarse step lands on the 3 dB grid")
        model.handle(.char(")"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 3)
        model.handle(.char("7")); model.handle(.char("&"))
        XCTAssertEqual(model.session.tracks[0].pan, -0.25, accuracy: 1e-12)
        XCTAssertEqual(link.session.tracks[0].gainDecibels, 3, "the engine hears the change at once")
        for _ in 0..<30 { model.handle(.char("(")) }
        XCTAssertEqual(model.session.tracks[0].gainDecibels, Fader.silentDecibels, "the bottom is -inf")
        let row = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode).text(row: 4)
        XCTAssertTrue(row.contains(" -infdB L25"), row)
        model.handle(.char("z")); model.handle(.char("Z"))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 0)
        XCTAssertEqual(model.session.tracks[0].pan, 0)
        while model.document.undoName != nil { model.handle(.char("u")) }
        XCTAssertEqual(model.session, before, "every mixer edit undoes exactly")
    }

    func testMixerKeysHandTheTransportTheOneValueTheyMovedNotTheSession() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        let updates = link.updates
        model.handle(.char("9"))
        model.handle(.char("8"))
        model.handle(.char("m"))
        model.handle(.char("s"))
        model.handle(.named(.down))
        model.handle(.char("9"))
        XCTAssertEqual(link.mixerChanges, [.gain(strip: 0, decibels: -0.5), .pan(strip: 0, value: 0.05), .mute(strip: 0, on: true),
                                           .solo(strip: 0, on: true), .gain(strip: 1, decibels: -0.5)])
        XCTAssertEqual(link.updates, updates, "no whole session is handed over for a mixer value")
        XCTAssertEqual(link.session, model.session, "the link's session and the screen's agree")
        // An undo replaces the session whole: handed over as such.
        model.handle(.char("u"))
        XCTAssertEqual(link.updates, updates + 1)
        XCTAssertEqual(link.session, model.session)
    }

    func testTheMixerViewDrawsStripsAndItsArrowsMoveStripsAndFaders() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("v"))
        XCTAssertTrue(model.showsMixer)
        model.handle(.named(.up)); model.handle(.named(.up))
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 1)
        model.handle(.named(.right))
        XCTAssertEqual(model.selectedTrack, 1)
        model.handle(.named(.right)); model.handle(.named(.right))
        XCTAssertTrue(model.masterStripSelected, "after the last track comes the master")
        model.handle(.named(.pgdn))
        XCTAssertEqual(model.session.masterGainDecibels, -3)
        model.handle(.char("7"))
        XCTAssertEqual(model.message?.text, "the master has no pan")
        model.tick(nowSeconds: 1)
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        let text = canvas.text
        for needle in ["Drums", "Bass", "Vocal", "Master", "in 1-2", "+1.0dB", "-3.0dB", "pan C", "+12", "-60"] {
            XCTAssertTrue(text.contains(needle), "mixer lacks \(needle):\n\(text)")
        }
        // The fake link's meters read -15 dBFS RMS: the Drums meter is lit past the -18 mark.
        let scaleRow = (0..<30).first { canvas.text(row: $0).hasPrefix(" -18") }!
        XCTAssertEqual(canvas.cell(scaleRow, MixerView.scaleWidth + 3).character, "█", canvas.text)
        XCTAssertEqual(canvas.cell(scaleRow - 3, MixerView.scaleWidth + 3).character, "·", "nothing lit above the level")
        model.handle(.char("v"))
        XCTAssertFalse(model.showsMixer)
    }

    func testClipLightsComeFromTheEngineAndTheResetKeyPutsThemOut() {
        let link = ClippingLink()
        let model = ScreenModel(document: SessionDocument(session: ScreenModelTests.makeSession()), folder: nil, link: link)
        model.tick(nowSeconds: 1)
        XCTAssertTrue(model.meters[1][0].clipped, "the engine's clip light shows")
        XCTAssertEqual(model.meters[1][0].holdDecibels, -1, "and its peak hold")
        XCTAssertTrue(model.masterMeters[0].clipped)
        link.clipped = false
        model.handle(.char("X"))
        XCTAssertTrue(link.wasReset)
        model.tick(nowSeconds: 2)
        XCTAssertFalse(model.meters[1][0].clipped)
        XCTAssertFalse(model.masterMeters[0].clipped)
    }

    func testRenameRefusesEmptyAndDuplicateNamesAndInputTakesMonoOrAPair() {
        let model = ScreenModelTests.makeModel()
        model.handle(.function(2))
        for _ in 0..<10 { model.handle(.named(.backspace)) }
        type("bass", into: model)
        model.handle(.named(.enter))
        guard case .text(let input) = model.overlay else { return XCTFail("the dialog stays open") }
        XCTAssertEqual(input.problem, "track 2 is already called Bass (names are matched ignoring case)")
        for _ in 0..<4 { model.handle(.named(.backspace)) }
        type("Kit", into: model)
        model.handle(.named(.enter))
        XCTAssertEqual(model.session.tracks[0].name, "Kit")
        model.handle(.char("w"))
        for _ in 0..<5 { model.handle(.named(.backspace)) }
        type("3-3", into: model)
        model.handle(.named(.enter))
        guard case .text(let bad) = model.overlay else { return XCTFail("a bad input is refused") }
        XCTAssertEqual(bad.problem, "a pair names two different channels")
        for _ in 0..<3 { model.handle(.named(.backspace)) }
        type("3-4", into: model)
        model.handle(.named(.enter))
        XCTAssertEqual(model.session.tracks[0].inputChannels, [3, 4])
    }
}

/// A link whose meters report a clipped channel on track 2 and on the master until reset.
final class ClippingLink: TransportLink {
    var clipped = true
    var wasReset = false
    func update(session: Session) {}
    func apply(_ changes: [MixerChange]) {}
    func apply(_ changes: [ChainValueChange]) {}
    func play(fromFrame: Int64) {}
    func stop() {}
    func record(fromFrame: Int64) -> String? { "no" }
    func locate(frame: Int64) {}
    func setSpeed(_ ratio: Double) {}
    func setMode(_ mode: PlaybackMode) {}
    func setPitch(semitones: Double) {}
    func setLoop(_ range: FrameRange?, enabled: Bool) {}
    func setPunch(_ range: FrameRange?, enabled: Bool) {}
    func snapshot() -> TransportSnapshot {
        let level = ChannelLevel(peakDecibels: -20, rmsDecibels: -23, holdDecibels: -1, clipped: clipped)
        var s = TransportSnapshot(trackLevels: [[.silent, .silent], [level], [.silent]], isOffline: false)
        s.masterLevels = [level, level]
        return s
    }
    func devices() -> [String] { [] }
    func selectDevice(_ name: String) -> String? { nil }
    func resetMeters() { wasReset = true }
}
