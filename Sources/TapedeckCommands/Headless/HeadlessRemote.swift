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
final class HeadlessRemote: ControlHost {
    /// What the command is doing: `record` (a pass: it ends on stop or record, and never
    /// moves meanwhile), `listen` (`--retro`: stop ends it) or `play` (everything but record).
    let role: ControlRole
    let transport: Transport
    let sessionPath: String?
    /// The range `play --loop` loops over (else the session's loop range).
    var loopRange: FrameRange?
    private let server: ControlServerThread?
    /// Whether news goes out as JSON lines (`--json`) or as text on stderr.
    private let json: Bool
    /// A stop asked for remotely, for a loop that ends on it.
    private(set) var stopRequested = false

    /// Opens the socket; when it cannot be made, says why once (on stderr, or as a JSON
    /// notice) and runs on without it.
    init(role: ControlRole, transport: Transport, sessionPath: String?, json: Bool) {
        self.role = role
        self.transport = transport
        self.sessionPath = sessionPath
        self.json = json
        do { server = try ControlServerThread(session: sessionPath) } catch {
            server = nil
            let text = "remote control is off: \(error)"
            if json { StatusLine.emitLine(["event": "notice", "text": text]) } else { Terminal.err(text + "\n") }
        }
    }

    deinit { server?.close() }

    /// Waits `milliseconds` (instead of sleeping), carrying out what arrives meanwhile.
    func wait(milliseconds: Int) {
        followMachineControl()
        guard let server else {
            usleep(useconds_t(milliseconds * 1000))
            return
        }
        server.wait(milliseconds: milliseconds) { command, _ in handle(command) }
    }

    /// MIDI machine control and a surface's transport buttons, read into the control
    /// socket's commands and answered by the same rules (a `record` take is never moved; a
    /// record strobe during it is not a stop). Nobody waits for the answer, so it is said: a
    /// notice (or a line on stderr) naming the port.
    private func followMachineControl() {
        for request in transport.collectMachineRequests() {
            let command = RemoteCommand(request.command, sampleRate: transport.session.sampleRate)
            let who = "MIDI (\(request.port.terminalSafe))"
            let text = switch handle(command) {
            case .ok(let text): "\(text) — asked by \(who)"
            case .error(let text): "\(who) asked '\(command.line)': \(text)"
            case .json: ""
            }
            if text.isEmpty { continue }
            if json { StatusLine.emitLine(["event": "notice", "text": text]) } else { Terminal.err(text + "\n") }
        }
    }

    /// Closes the socket (the command is finishing).
    func close() { server?.close() }

    /// One command, as ``ControlAnswer`` (the one translation, shared with the screen) turns
    /// it into this command's own controls.
    func handle(_ command: RemoteCommand) -> RemoteReply { ControlAnswer.answer(command, host: self, from: "") }

    // MARK: ControlHost: the transport calls the command's own stop (Ctrl-C) makes.

    var controlRole: ControlRole { role }

    func controlState() -> ControlState {
        ControlState(snapshot: transport.snapshot(), session: transport.session, sessionPath: sessionPath,
                     speed: transport.timePitch.speed, loopEnabled: transport.loopEnabled,
                     loopRange: loopRange ?? transport.session.loopRange)
    }

    func controlStop() {
        stopRequested = true
        transport.stop()
    }

    /// Headless hosts never run a pass alongside playback: ending it ends the command.
    func controlEndPass() { controlStop() }

    func controlLocate(_ frame: Int64) { transport.locate(to: frame) }

    func controlLoop(_ on: Bool) {
        guard let range = loopRange ?? transport.session.loopRange else { return }
        transport.setLoop(range, enabled: on)
    }

    func controlSpeed(_ ratio: Double) {
        var settings = transport.timePitch
        settings.speed = ratio
        transport.setTimePitch(settings)
    }
}
