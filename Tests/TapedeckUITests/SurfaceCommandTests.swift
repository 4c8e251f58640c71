import XCTest
import TapedeckCore
import TapedeckRemote
@testable import TapedeckUI

/// Every control surface is a front-end of one typed vocabulary (``SurfaceCommand``) that the
/// screen carries out in one place: a Mackie Control and an OSC layout asking for the same
/// thing get the same edit, the same undo step and the same refusal (issue 45 item 3). Before,
/// each surface held edit code of its own: the Mackie armed a bus-less track with its own
/// closure, and refused a bus with its own words.
final class SurfaceCommandTests: XCTestCase {
    private var now = 100.0

    private func rig() -> (ScreenModel, FakeSurface, ScreenMackie) {
        let surface = FakeSurface()
        let service = ScreenMackie(surface: surface, clock: { [unowned self] in self.now })
        let model = ScreenModelTests.makeModel()
        // A fourth strip, a bus.
        model.edit("add bus") { s in
            var bus = Track(name: "Verb")
            bus.bus = true
            s.tracks.append(bus)
        }
        service.service(model)
        _ = surface.take()
        return (model, surface, service)
    }

    func testAMackieButtonAndTheSameOSCCommandMakeTheSameEditAndUndoStep() {
        let N = MackieControl.Note.self
        // Mute Bass, then arm Drums, from the Mackie.
        let (mackie, surface, service) = rig()
        surface.incoming = [.button(note: N.mute + 1, pressed: true), .button(note: N.recordArm + 0, pressed: true)]
        service.service(mackie)
        // The same from OSC, on a screen of its own.
        let (osc, _, _) = rig()
        XCTAssertNil(osc.perform(.mixer(.mute(strip: 1, on: true)), from: .osc("127.0.0.1:9000"), continuing: false))
        XCTAssertNil(osc.perform(.arm(strip: 0, on: true), from: .osc("127.0.0.1:9000"), continuing: false))
        XCTAssertEqual(mackie.session, osc.session, "the same session")
        XCTAssertTrue(mackie.session.tracks[1].mute)
        XCTAssertTrue(mackie.session.tracks[0].armed)
        XCTAssertEqual(mackie.owner.undo(), osc.owner.undo(), "the same undo step")
        XCTAssertEqual(mackie.owner.undo(), osc.owner.undo())
        XCTAssertEqual(mackie.session, osc.session)
        XCTAssertFalse(mackie.session.tracks[1].mute)
    }

    func testABusIsRefusedArmingWithTheSameLineFromEitherSurface() {
        let N = MackieControl.Note.self
        let (model, surface, service) = rig()
        let refusal = model.perform(.arm(strip: 3, on: true), from: .osc("127.0.0.1:9000"), continuing: false)
        XCTAssertEqual(refusal, "Verb is a bus: a bus has no input to arm")
        surface.incoming = [.button(note: N.recordArm + 3, pressed: true)]
        service.service(model)
        XCTAssertEqual(model.message?.text, "surface: Verb is a bus: a bus has no input to arm")
        XCTAssertEqual(model.message?.isError, true)
        XCTAssertFalse(model.session.tracks[3].armed == true)
        XCTAssertEqual(SurfaceCommand.arm(strip: 3, on: true).refusal(in: model.session), refusal, "one check for every host")
    }

    func testTheSharedCheckRefusesWhatNoHostCanDo() {
        let (model, _, _) = rig()
        let session = model.session
        XCTAssertEqual(SurfaceCommand.monitor(strip: 3, mode: .input).refusal(in: session), "Verb is a bus: a bus has no input to hear")
        XCTAssertEqual(SurfaceCommand.arm(strip: 9, on: true).refusal(in: session), "no strip 10 (the session has 4)")
        XCTAssertEqual(SurfaceCommand.mixer(.sendLevel(strip: 0, send: 1, decibels: -6)).refusal(in: session), "Drums has 0 sends, no send 2")
        XCTAssertEqual(SurfaceCommand.mixer(.gain(strip: -1, decibels: 0)).refusal(in: session), "no such strip")
        XCTAssertNil(SurfaceCommand.mixer(.gain(strip: 0, decibels: -6)).refusal(in: session))
        XCTAssertNil(SurfaceCommand.mixer(.masterGain(decibels: 3)).refusal(in: session))
        XCTAssertNil(SurfaceCommand.transport(.play).refusal(in: session))
        // The screen refuses through it too, and changes nothing.
        XCTAssertEqual(model.perform(.arm(strip: 9, on: true), from: .mackie, continuing: false), "no strip 10 (the session has 4)")
        XCTAssertEqual(model.session, session)
    }
}
