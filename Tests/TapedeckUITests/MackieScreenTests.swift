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
        XCTAssertEqual(model.document.undo(), "surface fader Drums")
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 0, "one undo step for the whole gesture")
        // Without touch sensors: moves a second apart are separate steps.
        model.document.redo()
        surface.incoming = [.fader(strip: 0, position: MackieControl.faderValue(decibels: -10))]
        service.service(model)
        now += 2
        surface.incoming = [.fader(strip: 0, position: MackieControl.faderValue(decibels: -12))]
        service.service(model)
        model.document.undo()
        XCTAssertEqual(model.session.tracks[0].gainDecibels, -10)
        // A move that changes nothing (a jittery fader at rest) is no undo step.
        now += 2
        surface.incoming = [.fader(strip: 0, position: MackieControl.faderValue(decibels: -10))]
        service.service(model)
        model.document.undo()
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
}
