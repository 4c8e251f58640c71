import XCTest
@testable import TapedeckRemote
import TapedeckCore
import TapedeckTransport

/// MIDI machine control and a surface's transport buttons speak the control socket's one
/// vocabulary (``RemoteCommand``) and are answered by its one translation (``ControlAnswer``):
/// a record strobe only starts a pass (a second is not a stop), record exit only ends one,
/// rewind and forward move a bar, and nothing from MIDI moves a take.
final class MachineControlAnswerTests: XCTestCase {
    private typealias FakeHost = ControlAnswerTests.FakeHost

    private func answer(_ host: FakeHost, _ machine: MachineCommand) -> String {
        ControlAnswer.answer(RemoteCommand(machine, sampleRate: 48000), host: host, from: "MIDI (mmc)").line
    }

    func testEachMachineCommandReadsAsTheSocketsCommand() {
        XCTAssertEqual(RemoteCommand(.play, sampleRate: 48000), .play)
        XCTAssertEqual(RemoteCommand(.stop, sampleRate: 48000), .stop)
        XCTAssertEqual(RemoteCommand(.pause, sampleRate: 48000), .stop)
        XCTAssertEqual(RemoteCommand(.recordStrobe, sampleRate: 48000), .recordOn)
        XCTAssertEqual(RemoteCommand(.recordExit, sampleRate: 48000), .recordOff)
        XCTAssertEqual(RemoteCommand(.rewind, sampleRate: 48000), .bars(-1))
        XCTAssertEqual(RemoteCommand(.fastForward, sampleRate: 48000), .bars(1))
        XCTAssertEqual(RemoteCommand(.toggleLoop, sampleRate: 48000), .loopToggle)
        XCTAssertEqual(RemoteCommand(.locate(microseconds: 10_000_000), sampleRate: 48000), .locate("480000f"))
        XCTAssertEqual(RemoteCommand(.locate(microseconds: 10_000_000), sampleRate: 44100), .locate("441000f"))
        // The largest and smallest times MMC can name stay on the timeline.
        XCTAssertEqual(RemoteCommand(.locate(microseconds: -5), sampleRate: 48000), .locate("0f"))
        XCTAssertEqual(RemoteCommand(.locate(microseconds: .max), sampleRate: 384_000),
                       .locate("\(SessionLimits.maximumTimelineFrames)f"))
        // Each is a line `tapedeck ctl` sends, read back the same.
        for command in [RemoteCommand.recordOn, .recordOff, .bars(-1), .bars(1), .bars(-4), .bars(16), .loopToggle, .locate("480000f")] {
            XCTAssertEqual(RemoteCommand.parse(command.line), .success(command), command.line)
        }
        XCTAssertEqual(RemoteCommand.parse("record toggle"), .success(.record))
        XCTAssertEqual(RemoteCommand.parse("record maybe"), .failure(RemoteError("record takes nothing, on, off or toggle")))
        XCTAssertEqual(RemoteCommand.parse("back 0"), .failure(RemoteError("back takes a number of bars from 1 to 9999 (or nothing: one bar)")))
        XCTAssertEqual(RemoteCommand.parse("forward 99999999999999999999"),
                       .failure(RemoteError("forward takes a number of bars from 1 to 9999 (or nothing: one bar)")))
    }

    /// The strobe starts a pass; pressed again during the take it leaves it alone (ctl's
    /// `record` would end it); record exit ends the pass and rolls on.
    func testOnTheScreenARecordStrobeOnlyStartsAndRecordExitOnlyEnds() {
        let host = FakeHost(.screen)
        XCTAssertEqual(answer(host, .recordExit), "ok: not recording")
        XCTAssertEqual(answer(host, .recordStrobe), "ok: recording")
        XCTAssertEqual(answer(host, .recordStrobe), "ok: already recording")
        XCTAssertEqual(answer(host, .recordExit), "ok: recording stopped")
        XCTAssertEqual(host.calls, ["record", "end pass"])
        XCTAssertEqual(host.state, .playing)
        host.starts = false
        host.state = .stopped
        host.refusal = "no armed track: arm one with a first"
        XCTAssertEqual(answer(host, .recordStrobe), "error: no armed track: arm one with a first")
    }

    /// MMC locate, rewind and forward move the playhead, never a take (the transport used to
    /// act on them itself, and moved it).
    func testNothingFromMIDIMovesATake() {
        let host = FakeHost(.screen, .recording)
        host.loopRange = FrameRange(startFrame: 0, endFrame: 48000)
        XCTAssertEqual(answer(host, .locate(microseconds: 10_000_000)),
                       "error: recording: locate 480000f is refused while a take runs (a take is never torn in two); stop first")
        XCTAssertEqual(answer(host, .rewind), "error: recording: back is refused while a take runs (a take is never torn in two); stop first")
        XCTAssertEqual(answer(host, .fastForward), "error: recording: forward is refused while a take runs (a take is never torn in two); stop first")
        XCTAssertEqual(answer(host, .toggleLoop), "ok: loop on", "the loop switches during a take, as its key does")
        XCTAssertEqual(host.calls, ["loop true"])
        let record = FakeHost(.record, .recording)
        XCTAssertEqual(answer(record, .recordStrobe), "ok: already recording")
        XCTAssertEqual(answer(record, .fastForward),
                       "error: recording: forward is refused while a take runs (a take is never torn in two); stop first")
        XCTAssertEqual(answer(record, .recordExit), "ok: stopping: the takes are being finished")
        XCTAssertEqual(record.calls, ["stop"])
    }

    /// Rewind and forward move one bar of the tempo map where the playhead is (120 bpm, 4/4:
    /// two seconds), never before the start; loop toggles.
    func testStoppedOrPlayingTheButtonsMoveABarAndToggleTheLoop() {
        let host = FakeHost(.screen, .playing)
        host.positionFrame = 48000
        XCTAssertEqual(answer(host, .fastForward), "ok: moved to 00:03.000 (2|3|0)")
        XCTAssertEqual(answer(host, .rewind), "ok: moved to 00:01.000 (1|3|0)")
        XCTAssertEqual(answer(host, .rewind), "ok: moved to 00:00.000 (1|1|0)", "not before the start")
        XCTAssertEqual(answer(host, .toggleLoop), "error: no loop range: set it with [ and ] on the screen")
        host.loopRange = FrameRange(startFrame: 0, endFrame: 48000)
        XCTAssertEqual(answer(host, .toggleLoop), "ok: loop on")
        XCTAssertEqual(answer(host, .toggleLoop), "ok: loop off")
        XCTAssertEqual(answer(host, .pause), "ok: stopped")
        XCTAssertEqual(host.calls, ["locate 144000", "locate 48000", "locate 0", "loop true", "loop false", "stop"])
        let play = FakeHost(.play, .playing)
        XCTAssertEqual(answer(play, .recordStrobe), "error: 'tapedeck play' does not record: use 'tapedeck record' or the screen")
        XCTAssertEqual(answer(play, .recordExit), "ok: not recording")
    }
}
