import TapedeckCore
import TapedeckDSP

/// The one place a control-socket command (``RemoteCommand``) becomes a host's verbs
/// (``ControlHost``) and a reply: the screen and headless `play`/`record` answer `tapedeck ctl`
/// (and OSC's transport requests, which are these commands) with the same rules and words.
///
/// - `status`: the state as one JSON line.
/// - `play`: the screen starts from its playhead; headless hosts follow play and only report.
/// - `stop`: the screen stops; headless hosts end their command (the takes kept).
/// - `record`: the screen toggles a pass; `record` ends its take as stop does; `play` refuses.
///   `record on` only starts a pass and `record off` only ends one (the screen rolls on).
/// - `rewind`, `back`, `forward`, `locate`, `loop`, `speed`: refused while a take runs (a
///   take is never torn in two), and by a listening `record --retro`.
/// - `save`: the screen saves (the save key, NSM's save); headless hosts have nothing to save.
/// - `cmd …` (a handed-over edit or read, typed): the screen runs it; headless hosts refuse it.
///
/// MIDI machine control and a surface's transport buttons come here too, read into these
/// commands (``RemoteCommand/init(_:sampleRate:)``), so they obey the same rules.
public enum ControlAnswer {
    /// Carries out `command` on `host` and answers it; `peer` names who asked (the screen
    /// says it beside what a handed-over edit did). The host's own thread.
    public static func answer(_ command: RemoteCommand, host: ControlHost, from peer: String) -> RemoteReply {
        let role = host.controlRole
        let state = host.controlState()
        let moving = state.snapshot.state.isMoving
        let taking = role == .record || (role == .screen && state.snapshot.state.isRecordingPass)
        let listening = "listening for retroactive capture: only stop and status apply (kill -USR1 keeps a take)"
        func place(_ frame: Int64) -> String { state.session.tempoMap.place(ofFrame: frame) }
        /// Why `rewind`, `locate`, `loop` or `speed` is refused now, if it is: a listening
        /// `record --retro` takes none; during a take the screen may still loop or change
        /// speed (as its keys may) but never moves the playhead, and headless `record` takes none.
        func barred() -> RemoteReply? {
            if role == .listen { return .error(listening) }
            let moves: Bool = switch command { case .rewind, .locate, .bars: true; default: false }
            guard taking && (moves || role == .record) else { return nil }
            return .error("recording: \(command.line) is refused while a take runs (a take is never torn in two); stop first")
        }

        switch command {
        case .status:
            return .json(RemoteStatus(frontEnd: role.frontEnd, sessionPath: state.sessionPath, snapshot: state.snapshot,
                                      session: state.session, speed: state.speed, loopEnabled: state.loopEnabled).json)
        case .typed(let typed):
            guard role == .screen else {
                return .error("\(role.commandName) has the session open and takes no edits while it runs: "
                              + "'\(typed.name)' waits until it stops")
            }
            return host.controlCommand(typed, from: peer)
        case .stop:
            switch role {
            case .screen:
                guard moving else { return .ok("already stopped") }
                host.controlStop()
                return .ok("stopped")
            case .play:
                host.controlStop()
                return .ok("stopped")
            case .record, .listen:
                host.controlStop()
                return .ok("stopping: the takes are being finished")
            }
        case .play:
            if role == .listen { return .error(listening) }
            if moving { return .ok("already rolling") }
            guard role == .screen else { return .error("not rolling") }
            let errorBefore = host.controlState().snapshot.lastError
            let why = host.controlPlay()
            let after = host.controlState().snapshot
            // A device that failed at once may say so only in this last look: its line is the
            // reason, never a bare "did not start" said over it.
            guard after.state.isMoving else { return .error(why ?? after.newError(since: errorBefore) ?? "did not start") }
            return .ok("playing")
        case .record:
            switch role {
            case .listen: return .error(listening)
            case .play: return .error("'tapedeck play' does not record: use 'tapedeck record' or the screen")
            case .record:
                host.controlStop()
                return .ok("stopping: the takes are being finished")
            case .screen:
                let errorBefore = host.controlState().snapshot.lastError
                let why = host.controlRecord()
                if taking { return .ok("recording stopped") }
                let after = host.controlState().snapshot
                guard after.state.isRecordingPass else { return .error(why ?? after.newError(since: errorBefore) ?? "recording did not start") }
                return .ok("recording")
            }
        case .recordOn:
            // A take running is left alone; otherwise it is `record`, refusals and all.
            if role == .record || (role == .screen && taking) { return .ok("already recording") }
            return answer(.record, host: host, from: peer)
        case .recordOff:
            switch role {
            case .play: return .ok("not recording")
            case .record, .listen: return answer(.record, host: host, from: peer)
            case .screen:
                guard taking else { return .ok("not recording") }
                host.controlEndPass()
                // Playback rolls on from there as play would (to the end of the material).
                return .ok("recording stopped")
            }
        case .bars(let count):
            if let refusal = barred() { return refusal }
            let now = state.snapshot.positionFrame
            let bar = state.session.tempoMap.framesPerBar(atFrame: now)
            let moved = Double(now) + Double(count) * (bar.isFinite ? bar : 0)
            let frame = Int64(min(max(moved.rounded(), 0), Double(SessionLimits.maximumTimelineFrames)))
            host.controlLocate(frame)
            return .ok("moved to \(place(frame))")
        case .loopToggle:
            return answer(.loop(!state.loopEnabled), host: host, from: peer)
        case .rewind:
            if let refusal = barred() { return refusal }
            host.controlLocate(0)
            return .ok("rewound to \(place(0))")
        case .locate(let text):
            if let refusal = barred() { return refusal }
            let frame: Int64
            do { frame = try TimeText.frames(from: text, tempoMap: state.session.tempoMap) } catch {
                return .error("\(error)")
            }
            host.controlLocate(frame)
            // The playhead gets there a period or so later (on JACK, once the shared
            // transport has moved): the reply names where it was sent.
            return .ok("moved to \(place(frame))")
        case .loop(let on):
            if let refusal = barred() { return refusal }
            guard state.loopRange != nil else {
                if let keys = state.loopKeys {
                    return .error("no loop range: set it with \(keys.start) and \(keys.end) on the screen")
                }
                return .error("no loop range: set one with 'tapedeck loop' or play with --loop")
            }
            host.controlLoop(on)
            return .ok("loop \(on ? "on" : "off")")
        case .save:
            switch role {
            case .screen:
                if let why = host.controlSave() { return .error(why) }
                return .ok("saved")
            case .play: return .ok("nothing to save: 'tapedeck play' changes nothing")
            case .record, .listen: return .ok("nothing to save: 'tapedeck record' writes its takes into the session as it ends")
            }
        case .speed(let ratio):
            if let refusal = barred() { return refusal }
            host.controlSpeed(ratio)
            return .ok("speed \(TimePitchSettings.speedText(ratio))")
        }
    }
}
