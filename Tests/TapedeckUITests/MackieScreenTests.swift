import XCTest
import TapedeckCore
@testable import TapedeckUI
import TapedeckTransport

/// A Mackie Control surface that records what the screen sent it and plays what a test says.
final class FakeSurface: MackieSurfaceLink {
    var incoming: [MackieMessage] = []
    var sent: [[UInt8]] = []
    func collectSurfaceMessages() -> [MackieMessage] { defer { incoming = [] }; return incoming }
    func sendToSurface(_ messages: [[UInt8]]) { sent += messages }
    func take() -> [[UInt8]] { defer { sent = [] }; return sent }
}

/// The screen's side of a Mackie surface: its faders, buttons and V-pots edit the session as
/// keys do (one undo step per gesture), and the screen's state comes back as feedback.
final class MackieScreenTests: XCTestCase {
    private var now = 100.0

    private func rig() -> (ScreenModel, FakeSurface, ScreenMackie) {
        let surface = FakeSurface()
        let service = ScreenMackie(surface: surface, clock: { [unowned self] in self.now })
        return (ScreenModelTests.makeModel(), surface, service)
    }

    func testTheSurfaceIsToldTheStripsAtOnceThenOnlyChanges() {
        let (model, surface, service) = rig()
        service.service(model)
        let first = surface.take()
        XCTAssertTrue(first.contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "Drums")))
        XCTAssertTrue(first.contains(MackieControl.scribbleMessage(strip: 2, line: 0, text: "Vocal")))
        XCTAssertTrue(first.contains(MackieControl.faderMessage(strip: 1, value: MackieControl.faderValue(decibels: 0))))
        XCTAssertTrue(first.contains(MackieControl.ledMessage(note: MackieControl.Note.recordArm + 2, on: true)), "Vocal is armed")
        now += 1
        service.service(model)
        XCTAssertEqual(surface.take(), [], "nothing changed, nothing sent")
        // A key on the screen moves the fader: the motor follows.
        model.selectTrack(1)
        model.stepFader(steps: 1, coarse: true)
        now += 1
        service.service(model)
        let after = surface.take()
        XCTAssertTrue(after.contains(MackieControl.faderMessage(strip: 1, value: MackieControl.faderValue(decibels: 3))), "\(after)")
        XCTAssertTrue(after.contains(MackieControl.scribbleMessage(strip: 1, line: 1, text: "+3.0")))
    }

    func testAFaderGestureIsOneUndoStepAndTheMotorLeavesTheHandAlone() {
        let (model, surface, service) = rig()
        service.service(model)
        _ = surface.take()
        surface.incoming = [.touch(strip: 0, touched: true)]
        for db in [-1.0, -3, -6] {
            surface.incoming.append(.fader(strip: 0, position: MackieControl.faderValue(decibels: db)))
        }
        service.service(model)
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -6)
        XCTAssertFalse(surface.take().contains { $0.first == 0xE0 }, "no motor feedback under the hand")
        now += 3
        surface.incoming = [.fader(strip: 0, position: MackieControl.faderValue(decibels: -8))]
        service.service(model)
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -8, "still touched: the same gesture")
        surface.incoming = [.touch(strip: 0, touched: false)]
        service.service(model)
        XCTAssertEqual(model.owner.undo(), "surface fader Drums")
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 0, "one undo step for the whole gesture")
        // Without touch sensors: moves a second apart are separate steps.
        model.owner.redo()
        surface.incoming = [.fader(strip: 0, position: MackieControl.faderValue(decibels: -10))]
        service.service(model)
        now += 2
        surface.incoming = [.fader(strip: 0, position: MackieControl.faderValue(decibels: -12))]
        service.service(model)
        model.owner.undo()
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -10)
        // A move that changes nothing (a jittery fader at rest) is no undo step.
        now += 2
        surface.incoming = [.fader(strip: 0, position: MackieControl.faderValue(decibels: -10))]
        service.service(model)
        model.owner.undo()
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -8, "the step undone is the -10 gesture's")
    }

    func testButtonsVPotsAndBanks() {
        let (model, surface, service) = rig()
        service.service(model)
        _ = surface.take()
        let N = MackieControl.Note.self
        surface.incoming = [.button(note: N.mute + 1, pressed: true), .button(note: N.mute + 1, pressed: false),
                            .button(note: N.solo + 0, pressed: true), .button(note: N.recordArm + 2, pressed: true),
                            .button(note: N.select + 2, pressed: true), .vpot(strip: 1, steps: -4),
                            .button(note: N.mute + 5, pressed: true), .fader(strip: 6, position: 0)]
        service.service(model)
        XCTAssertTrue(model.session.tracks[1].mute)
        XCTAssertTrue(model.session.tracks[0].solo)
        XCTAssertFalse(model.session.tracks[2].armed)
        XCTAssertEqual(model.selectedTrack, 2)
        XCTAssertEqual(model.session.tracks[1].pan, -0.2, accuracy: 1e-9)
        let sent = surface.take()
        XCTAssertTrue(sent.contains(MackieControl.ledMessage(note: N.mute + 1, on: true)))
        XCTAssertTrue(sent.contains(MackieControl.ringMessage(strip: 1, pan: -0.2)))
        // Three tracks: bank right and channel right have nowhere to go.
        surface.incoming = [.button(note: N.bankRight, pressed: true), .button(note: N.channelRight, pressed: true),
                            .button(note: N.bankLeft, pressed: true)]
        now += 1
        service.service(model)
        XCTAssertEqual(service.bankStart, 0)
        XCTAssertFalse(surface.take().contains { $0.count > 6 && $0[5] == 0x12 }, "the strips are not rewritten")
        // Ten tracks: bank right shows tracks 9 and 10 and blanks the rest.
        model.edit("more") { s in for i in 4...10 { s.tracks.append(Track(name: "T\(i)")) } }
        surface.incoming = [.button(note: N.bankRight, pressed: true)]
        now += 1
        service.service(model)
        XCTAssertEqual(service.bankStart, 8)
        let banked = surface.take()
        XCTAssertTrue(banked.contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "T9")))
        XCTAssertTrue(banked.contains(MackieControl.scribbleMessage(strip: 2, line: 0, text: "")))
        surface.incoming = [.fader(strip: 1, position: MackieControl.faderValue(decibels: -6))]
        service.service(model)
        XCTAssertEqual(model.session.tracks[9].gainDecibels, -6)
        // Tracks deleted under the bank: back to the first.
        model.edit("fewer") { $0.tracks.removeLast(7) }
        now += 1
        service.service(model)
        XCTAssertEqual(service.bankStart, 0)
    }

    func testTheSurfaceIsGreetedAndALogicControlsChallengeAnswered() {
        let (model, surface, service) = rig()
        service.service(model)
        let first = surface.take()
        XCTAssertEqual(Array(first.prefix(4)), MackieControl.greeting, "the device queries come first")
        // A Logic Control answers with its challenge, then confirms.
        let serial: UInt64 = 0x41_4243_4445_4647
        surface.incoming = [.handshake(device: 0x10, command: 0x01, serial: serial, challenge: 0x0102_0304)]
        now += 1
        service.service(model)
        XCTAssertEqual(surface.take(), [MackieControl.connectionReply(device: 0x10, serial: serial, challenge: 0x0102_0304)])
        surface.incoming = [.handshake(device: 0x10, command: 0x03, serial: serial, challenge: 0)]
        now += 1
        service.service(model)
        let confirmed = surface.take()
        XCTAssertEqual(confirmed.first, MackieControl.versionRequest(device: 0x10))
        XCTAssertTrue(confirmed.contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "Drums", device: 0x10)),
                      "everything again, in the Logic Control's own header")
        // A Mackie Control's answer to the query: everything again, no reply.
        surface.incoming = [.handshake(device: 0x14, command: 0x01, serial: serial, challenge: 0)]
        now += 1
        service.service(model)
        let ready = surface.take()
        XCTAssertFalse(ready.contains { $0.count > 5 && $0[5] == 0x02 })
        XCTAssertTrue(ready.contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "Drums")))
    }

    func testMetersWhileRolling() {
        let (model, surface, service) = rig()
        service.service(model)
        _ = surface.take()
        now += 1
        service.service(model)
        XCTAssertFalse(surface.take().contains { $0.first == 0xD0 }, "no meters while stopped")
        model.togglePlay()
        service.service(model)
        let rolling = surface.take()
        // The fake's tracks peak at -12 dB: segment 8 of 13 on Ardour's curve.
        XCTAssertTrue(rolling.contains(MackieControl.meterModeMessage(device: 0x14, strip: 0, enabled: true)))
        XCTAssertEqual(rolling.filter { $0.first == 0xD0 }, [[0xD0, 0x08], [0xD0, 0x18], [0xD0, 0x28]])
        now += 0.05
        service.service(model)
        XCTAssertFalse(surface.take().contains { $0.first == 0xD0 }, "at most every 100 ms")
        now += 0.06
        service.service(model)
        XCTAssertEqual(surface.take().filter { $0.first == 0xD0 }.count, 3, "sent again though unchanged: the surface lets meters fall")
        model.togglePlay()
        now += 0.2
        service.service(model)
        let stopped = surface.take()
        XCTAssertTrue(stopped.contains(MackieControl.meterModeMessage(device: 0x14, strip: 0, enabled: false)))
        XCTAssertTrue(stopped.contains([0xD0, 0x00]), "meters down at the stop")
    }

    func testTheJogWheelScrollsOrShuttles() {
        let (model, surface, service) = rig()
        service.service(model)
        _ = surface.take()
        surface.incoming = [.jog(steps: 4)]
        service.service(model)
        XCTAssertEqual(model.playheadFrame, 4 * model.framesPerColumn, "four columns of the timeline")
        surface.incoming = [.jog(steps: -10)]
        service.service(model)
        XCTAssertEqual(model.playheadFrame, 0, "not before the start")
        // Scrub: the wheel shuttles (speed steps), its LED lit.
        surface.incoming = [.button(note: MackieControl.Note.scrub, pressed: true), .jog(steps: 2)]
        now += 1
        service.service(model)
        XCTAssertEqual(model.playheadFrame, 0)
        XCTAssertGreaterThan(model.speed, 1)
        XCTAssertTrue(surface.take().contains(MackieControl.ledMessage(note: MackieControl.Note.scrub, on: true)))
    }

    /// The time display (CC 0x40–0x49, 0x49 the leftmost) as the surface shows it now.
    private func display(_ messages: [[UInt8]], over digits: inout [UInt8]) -> String {
        for m in messages where m.count == 3 && m[0] == 0xB0 && (0x40...0x49).contains(m[1]) {
            digits[9 - Int(m[1] - 0x40)] = m[2] & 0x3F
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// Issue 45: in SMPTE mode the display counts the session's timecode, `HH MMSS FF` as
    /// Ardour's, here at 25 frames a second; a handed change of rate shows at once.
    func testTheTimeDisplayCountsTheSessionsTimecodeRate() {
        var session = ScreenModelTests.makeSession()
        session.timecodeRate = .fps25
        let model = ScreenModel(document: SessionDocument(session: session), folder: nil, link: FakeLink(), hooks: ScreenHooks())
        let surface = FakeSurface()
        let service = ScreenMackie(surface: surface, clock: { [unowned self] in self.now })
        var digits = [UInt8](repeating: 0x20, count: 10)
        service.service(model)
        XCTAssertEqual(display(surface.take(), over: &digits), "00 0000 00")
        // 1:02.5 is frame 12 of the second at 25 (it would be 15 at 30).
        model.locate(62 * 48000 + 24000)
        now += 1
        service.service(model)
        XCTAssertEqual(display(surface.take(), over: &digits), "00 0102 12")
        // Frame 12 starts at sample 12 × 1920 of the second: a sample earlier is frame 11;
        // the second's last frame is 24.
        model.locate(62 * 48000 + 12 * 1920 - 1)
        now += 1
        service.service(model)
        XCTAssertEqual(display(surface.take(), over: &digits), "00 0102 11")
        model.locate(63 * 48000 - 1)
        now += 1
        service.service(model)
        XCTAssertEqual(display(surface.take(), over: &digits), "00 0102 24")
        // At 29.97df the minute after the first starts at frame 02.
        model.owner.edit("timecode rate") { $0.timecodeRate = .fps29_97Drop }
        model.locate(2_882_880)
        now += 1
        service.service(model)
        XCTAssertEqual(display(surface.take(), over: &digits), "00 0100 02")
    }

    func testFlipPutsTheFadersOnPanAndTheVPotsOnLevel() {
        let (model, surface, service) = rig()
        service.service(model)
        _ = surface.take()
        let N = MackieControl.Note.self
        surface.incoming = [.button(note: N.flip, pressed: true), .button(note: N.flip, pressed: false)]
        now += 1
        service.service(model)
        XCTAssertTrue(service.flipped)
        let flipped = surface.take()
        XCTAssertTrue(flipped.contains(MackieControl.ledMessage(note: N.flip, on: true)))
        XCTAssertTrue(flipped.contains(MackieControl.faderMessage(strip: 0, value: MackieControl.faderValue(pan: model.session.tracks[0].pan))),
                      "the motor goes to the pan")
        XCTAssertTrue(flipped.contains(MackieControl.levelRingMessage(strip: 1, position: MackieControl.position(decibels: 0))))
        // The fader pans, the V-pot sets the level; the gain is left alone by the fader.
        surface.incoming = [.fader(strip: 0, position: 16383), .vpot(strip: 1, steps: -2)]
        now += 1
        service.service(model)
        XCTAssertEqual(model.session.tracks[0].pan, 1)
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 0)
        XCTAssertEqual(model.session.tracks[1].gainDecibels, -1)
        // Flip again: the faders are levels once more.
        surface.incoming = [.button(note: N.flip, pressed: true)]
        now += 2
        service.service(model)
        XCTAssertTrue(surface.take().contains(MackieControl.faderMessage(strip: 1, value: MackieControl.faderValue(decibels: -1))))
        // SMPTE/Beats: the BEATS LED, and the time display in bars and beats.
        surface.incoming = [.button(note: N.timecodeBeats, pressed: true)]
        now += 1
        service.service(model)
        let beats = surface.take()
        XCTAssertTrue(beats.contains(MackieControl.ledMessage(note: N.beatsLED, on: true)))
        XCTAssertTrue(beats.contains(MackieControl.timeDigitMessage(index: 2, character: "1", dot: true)), "bar 1: 001 01 00000\(beats)")
    }
}
