import TapedeckCore
import TapedeckRemote

extension ScreenModel {
    /// Carries out a command from the control socket exactly as the matching key does (play
    /// and stop as space, record as r, rewind as home, loop as l, speed as < and >), and says
    /// on the message line who asked (a refusal too, unless `sayingRefusal` is false: OSC
    /// says its refusals its own way). UI thread.
    public func handleRemote(_ command: RemoteCommand, from peer: String, sayingRefusal: Bool = true) -> RemoteReply {
        let who = peer.terminalSafe
        readLink()
        let before = snapshot.state
        var reply: RemoteReply
        switch command {
        case .status:
            return .json(RemoteStatus(frontEnd: "screen", sessionPath: folder?.path, snapshot: snapshot, session: session,
                                      speed: speed, loopEnabled: session.loopEnabled).json)
        case .play:
            if before == .stopped { perform(.play) }
            reply = snapshot.state == .stopped ? .error(message?.text ?? "did not start") : .ok(before == .stopped ? "playing" : "already rolling")
        case .stop:
            if before != .stopped { perform(.play) }
            reply = .ok(before == .stopped ? "already stopped" : "stopped")
        case .record:
            let recording = before.isRecordingPass
            record(refusingBus: false)
            if !recording && !snapshot.state.isRecordingPass {
                reply = .error(message?.isError == true ? message!.text : "recording did not start")
            } else {
                reply = .ok(recording ? "recording stopped" : "recording")
            }
        case .rewind:
            perform(.home)
            reply = .ok("rewound to \(place(0))")
        case .locate where before.isRecordingPass:
            // The transport would not move (a take is never torn in two): say so, not "moved".
            reply = .error("a take is being recorded (a take is never torn in two); stop first")
        case .locate(let text):
            do {
                let frame = try TimeText.frames(from: text, tempoMap: session.tempoMap)
                locate(frame)
                // The playhead gets there a period or so later (on JACK, once the shared
                // transport has moved): the reply names where it was sent.
                reply = .ok("moved to \(place(frame))")
            } catch {
                reply = .error("\(error)")
            }
        case .loop(let on):
            guard session.loopRange != nil else {
                reply = .error("no loop range: set it with \(keyName(.loopStart)) and \(keyName(.loopEnd)) on the screen")
                break
            }
            if session.loopEnabled != on { perform(.loop) }
            reply = .ok("loop \(on ? "on" : "off")")
        case .speed(let ratio):
            speed = ratio
            link.setSpeed(ratio)
            reply = .ok("speed \(TransportBarView.speedText(ratio))")
        case .commandLine(let words, let folder):
            return handleCommandLine(words, workingFolder: folder, from: who)
        }
        switch reply {
        case .ok(let text): say("\(text) — asked by \(who)")
        case .error(let text): if sayingRefusal { say("\(who) asked '\(command.line)': \(text)", error: true) }
        case .json: break
        }
        return reply
    }

    /// As ``handleRemote(_:from:)``, answering through `answer`: at once, or for a command
    /// line with a slow part (an import: ``ScreenHooks/commandLineWork``) once that has run
    /// on a worker and landed, while the screen goes on drawing and answering. UI thread.
    public func handleRemote(_ command: RemoteCommand, from peer: String, answer: @escaping (RemoteReply) -> Void) {
        if case .commandLine(let words, let workingFolder) = command, folder != nil,
           let work = hooks.commandLineWork?(words, workingFolder, session.sampleRate) {
            handOver(work, words: words, workingFolder: workingFolder, from: peer.terminalSafe, answer: answer)
            return
        }
        answer(handleRemote(command, from: peer))
    }

    /// Saves as Ctrl-S does, because `manager` asked (a session manager); nil when saved,
    /// else why not. UI thread.
    public func save(askedBy manager: String) -> String? {
        guard folder != nil else { return "the session has no folder yet" }
        guard save() else { return message?.text ?? "cannot save" }
        say("saved — asked by \(manager.terminalSafe)")
        return nil
    }

    /// `00:12.000 (7|1|0)`.
    private func place(_ frame: Int64) -> String { session.tempoMap.place(ofFrame: frame) }
}
