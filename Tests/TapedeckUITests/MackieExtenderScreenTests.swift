import XCTest
import TapedeckCore
@testable import TapedeckUI

/// A Mackie Control with extenders (XT), each on ports of its own: records what the screen
/// sent each unit and plays what a test says each did.
final class FakeSurfaceUnits: MackieSurfaceLink {
    /// Per unit: 0 the main one, then the extenders.
    var incoming: [[MackieMessage]]
    var sent: [[[UInt8]]]
    init(extenders: Int) {
        incoming = Array(repeating: [], count: 1 + extenders)
        sent = Array(repeating: [], count: 1 + extenders)
    }
    func collectSurfaceMessages() -> [MackieMessage] { defer { incoming[0] = [] }; return incoming[0] }
    func sendToSurface(_ messages: [[UInt8]]) { sent[0] += messages }
    var surfaceExtenderCount: Int { incoming.count - 1 }
    func collectExtenderMessages(_ index: Int) -> [MackieMessage] { defer { incoming[index + 1] = [] }; return incoming[index + 1] }
    func sendToExtender(_ index: Int, _ messages: [[UInt8]]) { sent[index + 1] += messages }
    func take(_ unit: Int) -> [[UInt8]] { defer { sent[unit] = [] }; return sent[unit] }
}

/// Extenders on the screen's surface, as Ardour's "Mackie Control with One Extender": the
/// XT's strips are the bank's 9–16, in its own SysEx header, and a bank is all 16.
final class MackieExtenderScreenTests: XCTestCase {
    private var now = 100.0

    /// Twenty tracks (Drums, Bass, Vocal, T4 … T20) on a Mackie Control with one XT.
    private func rig() -> (ScreenModel, FakeSurfaceUnits, ScreenMackie) {
        let surface = FakeSurfaceUnits(extenders: 1)
        let service = ScreenMackie(surface: surface, clock: { [unowned self] in self.now })
        let model = ScreenModelTests.makeModel()
        model.edit("more") { s in for i in 4...20 { s.tracks.append(Track(name: "T\(i)")) } }
        return (model, surface, service)
    }

    func testTheExtendersStripsAreTracksNineToSixteenInItsOwnHeader() {
        let (model, surface, service) = rig()
        service.service(model)
        let main = surface.take(0), xt = surface.take(1)
        XCTAssertEqual(Array(xt.prefix(4)), MackieControl.greeting, "the device queries on the XT's port too")
        XCTAssertTrue(xt.contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "T9", device: 0x15)), "\(xt)")
        XCTAssertTrue(xt.contains(MackieControl.scribbleMessage(strip: 7, line: 0, text: "T16", device: 0x15)))
        XCTAssertTrue(xt.contains(MackieControl.faderMessage(strip: 0, value: MackieControl.faderValue(decibels: 0))))
        XCTAssertFalse(main.contains { $0.count > 7 && $0[5] == 0x12 && $0[7] == UInt8(ascii: "T") && $0[8] == UInt8(ascii: "9") })
        XCTAssertTrue(main.contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "Drums")))
        // The master, the transport and the displays are the main unit's only.
        XCTAssertFalse(xt.contains { $0.first == 0xE8 }, "no master fader on an XT")
        XCTAssertFalse(xt.contains { $0.count == 3 && $0[0] == 0xB0 && $0[1] >= 0x40 }, "no time or assignment display on an XT")
        XCTAssertFalse(xt.contains(MackieControl.ledMessage(note: MackieControl.Note.stop, on: true)))
        XCTAssertTrue(main.contains(MackieControl.ledMessage(note: MackieControl.Note.stop, on: true)))

        // The XT's fader 1 (Ardour's law), mute 2, select 1, V-pot 3; its "master" is none.
        let N = MackieControl.Note.self
        surface.incoming[1] = [.fader(strip: 0, position: MackieControl.faderValue(decibels: -6)),
                               .button(note: N.mute + 1, pressed: true), .button(note: N.select + 0, pressed: true),
                               .vpot(strip: 2, steps: 3), .fader(strip: 8, position: 0), .button(note: N.play, pressed: true)]
        now += 1
        service.service(model)
        XCTAssertEqual(model.session.tracks[8].gainDecibels, -6)
        XCTAssertEqual(model.session.tracks[0].gainDecibels, 0, "the main unit's strip 1 is untouched")
        XCTAssertTrue(model.session.tracks[9].mute)
        XCTAssertEqual(model.selectedTrack, 8)
        XCTAssertEqual(model.session.tracks[10].pan, 0.15, accuracy: 1e-9)
        XCTAssertEqual(model.session.masterGainDecibels, 0, "an XT has no master fader")
        XCTAssertEqual(model.snapshot.state, .stopped, "an XT has no transport")
        let lit = surface.take(1)
        XCTAssertTrue(lit.contains(MackieControl.ledMessage(note: N.mute + 1, on: true)), "\(lit)")
        XCTAssertTrue(lit.contains(MackieControl.ledMessage(note: N.select + 0, on: true)))
        XCTAssertFalse(surface.take(0).contains(MackieControl.ledMessage(note: N.mute + 1, on: true)))

        // Track 9 moved on the screen: the XT's motor follows.
        model.stepFader(steps: 1, coarse: true)
        now += 1
        service.service(model)
        XCTAssertTrue(surface.take(1).contains(MackieControl.faderMessage(strip: 0, value: MackieControl.faderValue(decibels: -3))))

        // A bank is both units: 16 strips. Twenty tracks: one step right, then nowhere.
        surface.incoming[0] = [.button(note: N.bankRight, pressed: true)]
        now += 1
        service.service(model)
        XCTAssertEqual(service.bankStart, 16)
        XCTAssertTrue(surface.take(0).contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "T17")))
        XCTAssertTrue(surface.take(1).contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "", device: 0x15)))
        surface.incoming[0] = [.button(note: N.bankRight, pressed: true)]
        service.service(model)
        XCTAssertEqual(service.bankStart, 16)
        _ = surface.take(0)
        surface.incoming[0] = [.button(note: N.channelLeft, pressed: true)]
        service.service(model)
        XCTAssertEqual(service.bankStart, 15)
        XCTAssertTrue(surface.take(0).contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "T16")))
    }

    func testTheExtenderHasMetersAndItsOwnHandshake() {
        let (model, surface, service) = rig()
        service.service(model)
        _ = surface.take(0); _ = surface.take(1)
        // A Logic Control XT answers on its own port: answered there, in its header.
        let serial: UInt64 = 0x41_4243_4445_4647
        surface.incoming[1] = [.handshake(device: 0x11, command: 0x01, serial: serial, challenge: 0x0102_0304)]
        now += 1
        service.service(model)
        XCTAssertEqual(surface.take(1), [MackieControl.connectionReply(device: 0x11, serial: serial, challenge: 0x0102_0304)])
        XCTAssertEqual(surface.take(0), [], "the main unit is told nothing")
        surface.incoming[1] = [.handshake(device: 0x11, command: 0x03, serial: serial, challenge: 0)]
        now += 1
        service.service(model)
        let confirmed = surface.take(1)
        XCTAssertEqual(confirmed.first, MackieControl.versionRequest(device: 0x11))
        XCTAssertTrue(confirmed.contains(MackieControl.scribbleMessage(strip: 0, line: 0, text: "T9", device: 0x11)))
        // Rolling: each unit's meters on its own port, the XT's in its header.
        model.togglePlay()
        now += 1
        service.service(model)
        let xt = surface.take(1), main = surface.take(0)
        XCTAssertTrue(xt.contains(MackieControl.meterModeMessage(device: 0x11, strip: 7, enabled: true)))
        XCTAssertTrue(main.contains(MackieControl.meterModeMessage(device: 0x14, strip: 0, enabled: true)))
        XCTAssertEqual(xt.filter { $0.first == 0xD0 }.count, 8, "eight strips' meters on the XT: \(xt.filter { $0.first == 0xD0 })")
    }
}
