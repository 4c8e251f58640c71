import XCTest
import TapedeckCore
import TapedeckEngine
@testable import TapedeckUI

/// The screen answers MIDI machine control and a surface's transport buttons as it answers
/// `tapedeck ctl`: through the one translation, with the keys' verbs, naming the port on the
/// message line. (Before, the transport acted on them itself: a second record strobe was
/// ignored but a locate moved a take, and the screen's own record path was bypassed.)
final class ScreenMachineControlTests: XCTestCase {
    private func press(_ model: ScreenModel, _ link: FakeLink, _ commands: MachineCommand...) {
        link.machine = commands.map { MachineRequest(command: $0, port: "mmc") }
        model.tick(nowSeconds: 0)
    }

    func testARecordStrobeRecordsAsRDoesAndASecondIsNotAStop() {
        let link = FakeLink()
        link.canRecord = true
        let model = ScreenModelTests.makeModel(link: link)
        press(model, link, .recordStrobe)
        XCTAssertEqual(model.snapshot.state, .recording)
        XCTAssertEqual(model.message?.text, "recording — asked by MIDI (mmc)")
        press(model, link, .recordStrobe)
        XCTAssertEqual(model.snapshot.state, .recording, "a second strobe leaves the take alone")
        press(model, link, .locate(microseconds: 10_000_000))
        XCTAssertEqual(model.snapshot.positionFrame, 0, "a take is never torn in two")
        XCTAssertEqual(model.message?.isError, true)
        XCTAssertEqual(model.message?.text,
                       "MIDI (mmc) asked 'locate 480000f': recording: locate 480000f is refused while a take runs (a take is never torn in two); stop first")
        press(model, link, .recordExit)
        XCTAssertEqual(model.snapshot.state, .playing, "record exit ends the pass and rolls on")
        XCTAssertEqual(link.calls.filter { $0 == "stop recording" }.count, 1)
        press(model, link, .stop)
        XCTAssertEqual(model.snapshot.state, .stopped)
    }

    func testPlayLocateAndTheWindButtonsMoveAsTheKeysDo() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        press(model, link, .locate(microseconds: 10_000_000), .play)
        XCTAssertEqual(link.calls.filter { $0.hasPrefix("play") }, ["play 480000"], "located, then played from there")
        XCTAssertEqual(model.snapshot.state, .playing)
        let bar = Int64(model.session.tempoMap.framesPerBar(atFrame: 480_000).rounded())
        press(model, link, .fastForward)
        XCTAssertEqual(model.snapshot.positionFrame, 480_000 + bar)
        press(model, link, .rewind, .rewind)
        XCTAssertEqual(model.snapshot.positionFrame, 480_000 - bar)
        press(model, link, .pause)
        XCTAssertEqual(model.snapshot.state, .stopped)
        XCTAssertEqual(model.message?.text, "stopped — asked by MIDI (mmc)")
    }

    func testTheCycleButtonSwitchesTheSessionsLoopAsOneUndoStep() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        press(model, link, .toggleLoop)
        XCTAssertEqual(model.message?.isError, true, "no loop range yet")
        XCTAssertFalse(model.session.loopEnabled)
        model.handle(.char("["))
        model.handle(.named(.right))
        model.handle(.char("]"))
        XCTAssertNotNil(model.session.loopRange)
        let wasEnabled = model.session.loopEnabled
        press(model, link, .toggleLoop)
        XCTAssertEqual(model.session.loopEnabled, !wasEnabled)
        model.handle(.char("u"))
        XCTAssertEqual(model.session.loopEnabled, wasEnabled, "undone as the l key's step is")
    }
}
