import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckRemote
import TapedeckTransport

/// `record` and `play` answering their control socket (`tapedeck ctl`) from their own loop,
/// with the transport calls their own stop (Ctrl-C) makes: no second thread touches the
/// transport. The socket's I/O runs on the server's own thread (``ControlServerThread``): the
/// loop only answers requests already read, a bounded number per pass, so clients that flood
/// or never read cannot delay the status line, a stop or the take.
final class HeadlessRemote {
    /// What the command is doing.
    enum Role: String {
        /// Recording a pass: it ends on stop (or record), and never moves meanwhile.
        case record
        /// Listening with `--retro`: stop ends it.
        case listen
        /// Playing: everything but record.
        case play
    }

    let role: Role
    let transport: Transport
    let sessionPath: String?
    /// The range `play --loop` loops over (else the session's loop range).
    var loopRange: FrameRange?
    private let server: ControlServerThread?
    /// A stop asked for remotely, for a loop that ends on it.
    private(set) var stopRequested = false

    /// Opens the socket; when it cannot be made, says why once (on stderr, or as a JSON
    /// notice) and runs on without it.
    init(role: Role, transport: Transport, sessionPath: String?, json: Bool) {
        self.role = role
        self.transport = transport
        self.sessionPath = sessionPath
        do { server = try ControlServerThread(session: sessionPath) } catch {
            server = nil
            let text = "remote control is off: \(error)"
            if json { StatusLine.emitLine(["event": "notice", "text": text]) } else { Terminal.err(text + "\n") }
        }
    }

    deinit { server?.close() }

    /// Waits `milliseconds` (instead of sleeping), carrying out what arrives meanwhile.
    func wait(milliseconds: Int) {
        guard let server else {
            usleep(useconds_t(milliseconds * 1000))
            return
        }
        server.wait(milliseconds: milliseconds) { command, _ in handle(command) }
    }

    /// Closes the socket (the command is finishing).
    func close() { server?.close() }

    /// One command, as this command's own controls would do it.
    func handle(_ command: RemoteCommand) -> RemoteReply {
        let snap = transport.snapshot()
        switch (role, command) {
        case (_, .status):
            return .json(RemoteStatus(frontEnd: role == .play ? "play" : "record", sessionPath: sessionPath, snapshot: snap,
                                      session: transport.session, speed: transport.timePitch.speed,
                                      loopEnabled: transport.loopEnabled).json)
        case (_, .stop), (.record, .record):
            stopRequested = true
            transport.stop()
            return .ok(role == .play ? "stopped" : "stopping: the takes are being finished")
        case (.play, .play), (.record, .play):
            return snap.state.isMoving ? .ok("already rolling") : .error("not rolling")
        case (_, .commandLine(let words, _)):
            return .error("\(role == .play ? "tapedeck play" : "tapedeck record") has the session open and takes no edits while it runs: '\(words.first ?? "")' waits until it stops")
        case (.record, _):
            return .error("recording: \(command.line) is refused while a take runs (a take is never torn in two); stop first")
        case (.listen, _):
            return .error("listening for retroactive capture: only stop and status apply (kill -USR1 keeps a take)")
        case (.play, .record):
            return .error("'tapedeck play' does not record: use 'tapedeck record' or the screen")
        case (.play, .rewind):
            transport.locate(to: 0)
            return .ok("rewound to " + place(0))
        case (.play, .locate(let text)):
            let frame: Int64
            do { frame = try TimeText.frames(from: text, tempoMap: transport.session.tempoMap) } catch {
                return .error("\(error)")
            }
            transport.locate(to: frame)
            return .ok("moved to " + place(frame))
        case (.play, .loop(let on)):
            guard let range = loopRange ?? transport.session.loopRange else {
                return .error("no loop range: set one with 'tapedeck loop' or play with --loop")
            }
            transport.setLoop(range, enabled: on)
            return .ok("loop \(on ? "on" : "off")")
        case (.play, .speed(let ratio)):
            var settings = transport.timePitch
            settings.speed = ratio
            transport.setTimePitch(settings)
            return .ok("speed \(TimePitchSettings.speedText(ratio))")  // as the screen answers
        }
    }

    private func place(_ frame: Int64) -> String { transport.session.tempoMap.place(ofFrame: frame) }
}
