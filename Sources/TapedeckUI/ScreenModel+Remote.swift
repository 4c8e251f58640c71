import TapedeckCore
import TapedeckRemote

extension ScreenModel: ControlHost {
    /// Carries out a control-socket command as ``ControlAnswer`` (the one translation, shared
    /// with headless `play` and `record`) turns it into this screen's verbs: the same path
    /// the screen's own transport keys take (space is play or stop, r record, home rewind, l
    /// loop toggle, < and > speed; ScreenModel+Keys), and says on the message line who
    /// asked (a refusal too, unless `sayingRefusal` is false: OSC says its refusals its own
    /// way; what was done too, unless `announcing` is false: a key's verb, which the
    /// transport bar shows). UI thread.
    public func handleRemote(_ command: RemoteCommand, from peer: String, sayingRefusal: Bool = true,
                             announcing: Bool = true) -> RemoteReply {
        let who = peer.terminalSafe
        let reply = ControlAnswer.answer(command, host: self, from: peer)
        switch command {
        case .status, .typed: return reply  // a handed-over edit says what it did itself
        default: break
        }
        switch reply {
        case .ok(let text): if announcing { say("\(text) — asked by \(who)") }
        case .error(let text): if sayingRefusal { say("\(who) asked '\(command.line)': \(text)", error: true) }
        case .json: break
        }
        return reply
    }

    /// MIDI machine control and a surface's transport buttons, read into the control
    /// socket's commands and answered as `tapedeck ctl`'s are: the same rules (a take is never
    /// torn in two, a record strobe during a take is not a stop), the keys' verbs, and the
    /// message line naming the port that asked. UI thread.
    func followMachineControl() {
        for request in link.collectMachineRequests() {
            _ = handleRemote(RemoteCommand(request.command, sampleRate: session.sampleRate), from: "MIDI (\(request.port))")
        }
    }

    // MARK: ControlHost: the screen's verbs. Every front-end reaches them through
    // ControlAnswer, the screen's own keys too (as `.transport` ``SurfaceCommand``s). UI thread.

    public var controlRole: ControlRole { .screen }

    public func controlState() -> ControlState {
        readLink()
        return ControlState(snapshot: snapshot, session: session, sessionPath: folder?.path, speed: speed,
                            loopEnabled: session.loopEnabled, loopRange: session.loopRange,
                            loopKeys: (keyName(.loopStart), keyName(.loopEnd)))
    }

    public func controlPlay() -> String? {
        if snapshot.state == .stopped { togglePlay() }
        return message?.isError == true ? message?.text : nil
    }

    public func controlStop() {
        if snapshot.state != .stopped { togglePlay() }
    }

    /// A remote's record never looks at the selection (a bus selected still records the
    /// armed tracks).
    public func controlRecord() -> String? {
        record()
        return message?.isError == true ? message?.text : nil
    }

    public func controlEndPass() {
        link.stopRecording()
        readLink()
    }

    public func controlLocate(_ frame: Int64) { locate(frame) }

    public func controlLoop(_ on: Bool) {
        if session.loopEnabled != on { toggleLoop() }
    }

    public func controlSpeed(_ ratio: Double) {
        speed = ratio
        link.setSpeed(ratio)
    }

    /// Saves as the save key does where the session has a folder; a session without one is
    /// refused (only the user names where it goes: the save key asks).
    public func controlSave() -> String? {
        guard folder != nil else { return "the session has no folder yet: \(keyName(.save)) on the screen asks where to save it" }
        guard save() else { return message?.text ?? "cannot save" }
        return nil
    }

    public func controlCommand(_ command: TypedCommand, from peer: String) -> RemoteReply {
        handleCommand(command, from: peer.terminalSafe)
    }

    /// As ``handleRemote(_:from:)``, answering through `answer`: at once, or for a command
    /// command with a slow part (an import: ``ScreenHooks/commandWork``) once that has run
    /// on a worker and landed, while the screen goes on drawing and answering. UI thread.
    public func handleRemote(_ command: RemoteCommand, from peer: String, answer: @escaping (RemoteReply) -> Void) {
        if case .typed(let typed) = command, folder != nil,
           let work = hooks.commandWork?(typed, session.sampleRate) {
            handOver(work, command: typed, from: peer.terminalSafe, answer: answer)
            return
        }
        answer(handleRemote(command, from: peer))
    }
}
