import XCTest
@testable import TapedeckRemote
import TapedeckCore
import TapedeckTransport

/// The one translation of the control socket (``ControlAnswer``), against a host that only
/// records which verbs it was asked for: every command for every kind of host (screen, play,
/// record, listen), its reply word for word and the verbs it did (or did not) call. The
/// screen and headless `play`/`record` answer `tapedeck ctl` through this alone.
final class ControlAnswerTests: XCTestCase {
    /// A host whose transport is a state, a position and a speed, and which logs each verb.
    final class FakeHost: ControlHost {
        let controlRole: ControlRole
        var state: TransportState
        var positionFrame: Int64 = 0
        var speed = 1.0
        var loopEnabled = false
        var loopRange: FrameRange?
        var loopKeys: (start: String, end: String)?
        /// What the screen says when play or record does not start (nil: it says nothing).
        var refusal: String?
        /// Whether play and record start (a device gone, no armed track: they do not).
        var starts = true
        /// The engine's problem line, as the snapshot carries it.
        var lastError: String?
        /// The problem a device that fails at once reports, seen only by the next look at
        /// the state (not yet when play or record returns).
        var failsAtOnce: String?
        var calls: [String] = []

        init(_ role: ControlRole, _ state: TransportState = .stopped) {
            controlRole = role
            self.state = state
            if role == .screen { loopKeys = ("[", "]") }
        }

        func controlState() -> ControlState {
            var session = Session(sampleRate: 48000)
            session.loopRange = loopRange
            var snapshot = TransportSnapshot(state: state, positionFrame: positionFrame)
            snapshot.lastError = lastError
            return ControlState(snapshot: snapshot, session: session,
                                sessionPath: "/music/song.tapedeck", speed: speed, loopEnabled: loopEnabled,
                                loopRange: loopRange, loopKeys: loopKeys)
        }

        func controlPlay() -> String? {
            calls.append("play")
            if starts { state = .playing } else if let failsAtOnce { lastError = failsAtOnce }
            return refusal
        }

        func controlStop() {
            calls.append("stop")
            state = .stopped
        }

        func controlRecord() -> String? {
            calls.append("record")
            if state.isRecordingPass { state = .stopped } else if starts { state = .recording } else if let failsAtOnce { lastError = failsAtOnce }
            return refusal
        }

        func controlEndPass() {
            calls.append("end pass")
            state = .playing
        }

        func controlLocate(_ frame: Int64) {
            calls.append("locate \(frame)")
            positionFrame = frame
        }

        func controlLoop(_ on: Bool) {
            calls.append("loop \(on)")
            loopEnabled = on
        }

        func controlSpeed(_ ratio: Double) {
            calls.append("speed \(ratio)")
            speed = ratio
        }

        /// Why a save fails (a full disk), or nil.
        var saveProblem: String?
        func controlSave() -> String? {
            calls.append("save")
            return saveProblem
        }

        func controlCommand(_ command: TypedCommand, from peer: String) -> RemoteReply {
            calls.append("cmd \(command.name) \(command.value) in \(command.workingFolder) from \(peer)")
            return .json("{\"status\":0}")
        }
    }

    static let listening = "error: listening for retroactive capture: only stop and status apply (kill -USR1 keeps a take)"

    /// Asks `host` for `line` (parsed as `tapedeck ctl` sends it); the reply's line.
    func ask(_ host: FakeHost, _ line: String, file: StaticString = #filePath, line number: UInt = #line) -> String {
        guard case .success(let command) = RemoteCommand.parse(line) else {
            XCTFail("'\(line)' does not parse", file: file, line: number)
            return ""
        }
        return ControlAnswer.answer(command, host: host, from: "tapedeck ctl (pid 7)").line
    }

    func testStatusNamesTheFrontEndOfEachHost() throws {
        for (role, word) in [(ControlRole.screen, "screen"), (.play, "play"), (.record, "record"), (.listen, "record")] {
            let host = FakeHost(role, .playing)
            host.positionFrame = 96000
            host.speed = 0.75
            let reply = ask(host, "status")
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], reply)
            XCTAssertEqual(object["front_end"] as? String, word, "\(role)")
            XCTAssertEqual(object["state"] as? String, "playing")
            XCTAssertEqual(object["position_frame"] as? Int, 96000)
            XCTAssertEqual(object["speed"] as? Double, 0.75)
            XCTAssertEqual(object["session"] as? String, "/music/song.tapedeck")
            XCTAssertEqual(host.calls, [], "status changes nothing")
        }
    }

    func testTheScreenPlaysStopsAndSaysWhyPlayDidNotStart() {
        let host = FakeHost(.screen)
        XCTAssertEqual(ask(host, "stop"), "ok: already stopped")
        XCTAssertEqual(ask(host, "play"), "ok: playing")
        XCTAssertEqual(ask(host, "play"), "ok: already rolling")
        XCTAssertEqual(ask(host, "stop"), "ok: stopped")
        XCTAssertEqual(host.calls, ["play", "stop"])

        host.starts = false
        XCTAssertEqual(ask(host, "play"), "error: did not start")
        host.refusal = "the device is gone: hw:9"
        XCTAssertEqual(ask(host, "play"), "error: the device is gone: hw:9")
    }

    func testADeviceThatFailsAtOnceIsTheReasonNotABareDidNotStart() {
        let host = FakeHost(.screen)
        host.starts = false
        host.lastError = "audio device 'hw:1': an earlier problem"
        host.failsAtOnce = "audio device 'filetap:OUT=/dev/full': write failed: No space left on device"
        XCTAssertEqual(ask(host, "play"), "error: audio device 'filetap:OUT=/dev/full': write failed: No space left on device")
        XCTAssertEqual(ask(host, "play"), "error: did not start", "an old problem is not the reason for a new refusal")
        host.failsAtOnce = "audio device 'hw:2': gone"
        XCTAssertEqual(ask(host, "record"), "error: audio device 'hw:2': gone")
    }

    func testTheScreenTogglesRecordingAndSaysWhyATakeDidNotStart() {
        let host = FakeHost(.screen)
        XCTAssertEqual(ask(host, "record"), "ok: recording")
        XCTAssertEqual(ask(host, "record"), "ok: recording stopped")
        XCTAssertEqual(host.calls, ["record", "record"])
        host.starts = false
        XCTAssertEqual(ask(host, "record"), "error: recording did not start")
        host.refusal = "no armed track: arm one with a first"
        XCTAssertEqual(ask(host, "record"), "error: no armed track: arm one with a first")
    }

    func testTheScreenMovesLoopsAndChangesSpeed() {
        let host = FakeHost(.screen, .playing)
        XCTAssertEqual(ask(host, "locate 3.1.1"), "ok: moved to 00:04.000 (3|1|0)")
        XCTAssertEqual(ask(host, "rewind"), "ok: rewound to 00:00.000 (1|1|0)")
        XCTAssertEqual(ask(host, "locate soon").hasPrefix("error: "), true)
        XCTAssertEqual(ask(host, "loop on"), "error: no loop range: set it with [ and ] on the screen")
        host.loopRange = FrameRange(startFrame: 0, endFrame: 48000)
        XCTAssertEqual(ask(host, "loop on"), "ok: loop on")
        XCTAssertEqual(ask(host, "loop off"), "ok: loop off")
        XCTAssertEqual(ask(host, "speed 3/4"), "ok: speed 0.75x")
        XCTAssertEqual(host.calls, ["locate 192000", "locate 0", "loop true", "loop false", "speed 0.75"])
    }

    /// During a pass the screen never moves the playhead (a take is never torn in two), but
    /// loops and changes speed as its keys do.
    func testTheScreenNeverMovesDuringATake() {
        for state in [TransportState.countIn, .preRoll, .recording] {
            let host = FakeHost(.screen, state)
            host.loopRange = FrameRange(startFrame: 0, endFrame: 48000)
            XCTAssertEqual(ask(host, "locate 2"), "error: recording: locate 2 is refused while a take runs (a take is never torn in two); stop first")
            XCTAssertEqual(ask(host, "rewind"), "error: recording: rewind is refused while a take runs (a take is never torn in two); stop first")
            XCTAssertEqual(ask(host, "play"), "ok: already rolling")
            XCTAssertEqual(ask(host, "loop on"), "ok: loop on")
            XCTAssertEqual(ask(host, "speed 1"), "ok: speed 1.00x")
            XCTAssertEqual(host.calls, ["loop true", "speed 1.0"], "\(state)")
        }
    }

    func testTheScreenRunsAHandedOverEdit() {
        let host = FakeHost(.screen)
        let typed = TypedCommand(name: "track", value: "{\"folder\":\"/s.tapedeck\",\"gain\":-6,\"target\":\"1\"}",
                                 workingFolder: "/home/me", label: "track 1 --gain -6")
        let reply = ControlAnswer.answer(.typed(typed), host: host, from: "tapedeck track")
        XCTAssertEqual(reply, .json("{\"status\":0}"))
        XCTAssertEqual(host.calls, ["cmd track {\"folder\":\"/s.tapedeck\",\"gain\":-6,\"target\":\"1\"} in /home/me from tapedeck track"])
        // What the socket carries is that typed value, read back whole.
        XCTAssertEqual(RemoteCommand.parse(RemoteCommand.typed(typed).line), .success(.typed(typed)))
    }

    /// A handed-over command travels typed (`cmd {…}`): the old argv form (`cli`) and a
    /// `cmd` that is not a typed command are refused in one line.
    func testOnlyTypedCommandsAreHandedOver() {
        let refusal = "cmd needs a JSON object: the command's name (command), its value (value, an object), the folder it was typed in (cwd) and how it was typed (label)"
        for line in ["cmd {\"command\":\"track\",\"cwd\":\"/\"}", "cmd {\"command\":\"track\",\"cwd\":\"rel\",\"value\":{}}",
                     "cmd [\"track\",\"/s.tapedeck\"]", "cmd {\"cwd\":\"/\",\"value\":{}}"] {
            XCTAssertEqual(RemoteCommand.parse(line), .failure(RemoteError(refusal)), line)
        }
        guard case .failure(let e) = RemoteCommand.parse("cli {\"args\":[\"track\",\"/s.tapedeck\"],\"cwd\":\"/\"}") else {
            return XCTFail("an argv command line is no longer taken")
        }
        XCTAssertTrue(e.description.hasPrefix("unknown command 'cli'"), e.description)
        // Booleans, numbers and nesting come through the socket's line as they went in.
        let value = "{\"a\":true,\"b\":false,\"c\":-6.5,\"d\":{\"add\":{\"name\":\"Chorus \\\"1\\\"\",\"time\":\"1:00\"}},\"e\":[1,2]}"
        let typed = TypedCommand(name: "x", value: value, workingFolder: "/w", label: "x")
        XCTAssertEqual(RemoteCommand.parse(RemoteCommand.typed(typed).line), .success(.typed(typed)))
    }

    /// Headless `play` follows play (it cannot start again: stopping ends it), never records,
    /// and takes no edits.
    func testHeadlessPlay() {
        let host = FakeHost(.play, .playing)
        XCTAssertEqual(ask(host, "play"), "ok: already rolling")
        XCTAssertEqual(ask(host, "record"), "error: 'tapedeck play' does not record: use 'tapedeck record' or the screen")
        XCTAssertEqual(ask(host, "locate 1:00"), "ok: moved to 01:00.000 (31|1|0)")
        XCTAssertEqual(ask(host, "rewind"), "ok: rewound to 00:00.000 (1|1|0)")
        XCTAssertEqual(ask(host, "loop on"), "error: no loop range: set one with 'tapedeck loop' or play with --loop")
        host.loopRange = FrameRange(startFrame: 0, endFrame: 48000)
        XCTAssertEqual(ask(host, "loop on"), "ok: loop on")
        XCTAssertEqual(ask(host, "speed 75%"), "ok: speed 0.75x")
        XCTAssertEqual(ask(host, "cmd {\"command\":\"track\",\"cwd\":\"/\",\"value\":{\"folder\":\"/s.tapedeck\"}}"),
                       "error: tapedeck play has the session open and takes no edits while it runs: 'track' waits until it stops")
        XCTAssertEqual(ask(host, "stop"), "ok: stopped")
        XCTAssertEqual(ask(host, "play"), "error: not rolling")
        XCTAssertEqual(ask(host, "stop"), "ok: stopped", "a stop asked again still ends the command")
        XCTAssertEqual(host.calls, ["locate 2880000", "locate 0", "loop true", "speed 0.75", "stop", "stop"])
    }

    /// Headless `record` ends its take on stop or record and refuses every move while it runs.
    func testHeadlessRecord() {
        let host = FakeHost(.record, .recording)
        host.loopRange = FrameRange(startFrame: 0, endFrame: 48000)
        XCTAssertEqual(ask(host, "play"), "ok: already rolling")
        for line in ["locate 2", "rewind", "loop on", "speed 0.5"] {
            XCTAssertEqual(ask(host, line), "error: recording: \(line) is refused while a take runs (a take is never torn in two); stop first")
        }
        XCTAssertEqual(ask(host, "cmd {\"command\":\"mix\",\"cwd\":\"/\",\"value\":{}}"),
                       "error: tapedeck record has the session open and takes no edits while it runs: 'mix' waits until it stops")
        XCTAssertEqual(host.calls, [])
        XCTAssertEqual(ask(host, "record"), "ok: stopping: the takes are being finished")
        XCTAssertEqual(ask(host, "play"), "error: not rolling")
        XCTAssertEqual(ask(host, "stop"), "ok: stopping: the takes are being finished")
        XCTAssertEqual(host.calls, ["stop", "stop"])
    }

    /// `save` (the save key's, NSM's, OSC's `/save_state`) saves on the screen and says why
    /// not; headless hosts have nothing of their own to save, and say so without failing a
    /// script that asks every host.
    func testSaveIsTheScreensAndHeadlessHostsHaveNothingToSave() {
        XCTAssertEqual(RemoteCommand.parse("save"), .success(.save))
        XCTAssertEqual(RemoteCommand.parse("save now"), .failure(RemoteError("'save' takes nothing after it")))
        XCTAssertEqual(OSCCommand.parse(OSCMessage("/save_state")), .success(.saveState))
        XCTAssertEqual(OSCCommand.parse(OSCMessage("/save_state", [.float(0)])), .success(.ignored), "a release")
        let screen = FakeHost(.screen, .playing)
        XCTAssertEqual(ask(screen, "save"), "ok: saved")
        screen.saveProblem = "cannot save: No space left on device"
        XCTAssertEqual(ask(screen, "save"), "error: cannot save: No space left on device")
        XCTAssertEqual(screen.calls, ["save", "save"])
        for role in [ControlRole.play, .record, .listen] {
            let host = FakeHost(role, .playing)
            XCTAssertTrue(ask(host, "save").hasPrefix("ok: nothing to save: "), "\(role)")
            XCTAssertEqual(host.calls, [], "\(role)")
        }
    }

    /// `record --retro` listening: only stop and status apply.
    func testHeadlessListen() {
        let host = FakeHost(.listen, .playing)
        host.loopRange = FrameRange(startFrame: 0, endFrame: 48000)
        for line in ["play", "record", "rewind", "locate 2", "loop off", "speed 2"] {
            XCTAssertEqual(ask(host, line), ControlAnswerTests.listening, line)
        }
        XCTAssertEqual(ask(host, "cmd {\"command\":\"mix\",\"cwd\":\"/\",\"value\":{}}"),
                       "error: tapedeck record has the session open and takes no edits while it runs: 'mix' waits until it stops")
        XCTAssertEqual(host.calls, [])
        XCTAssertEqual(ask(host, "stop"), "ok: stopping: the takes are being finished")
        XCTAssertEqual(host.calls, ["stop"])
    }
}
