import TapedeckCore
import TapedeckRemote

// MARK: - OSC: what a surface asks for, done as the screen's own keys do it, each edit one
// undoable step through edit(_:_:) (a fader moved in one gesture merges into one step, as a
// MIDI controller's does), and said on the message line with who asked.

extension ScreenModel {
    /// Carries out `command` from `peer` (`osc 127.0.0.1:9000`). `continuing`: the same control
    /// moved a moment ago by the same surface, so the change joins that undo step. Returns the
    /// refusal (also said on the message line), or nil. UI thread.
    @discardableResult
    public func handleOSC(_ command: OSCCommand, from peer: String, continuing: Bool = false) -> String? {
        let who = peer.terminalSafe
        readLink()
        let before = snapshot.state
        let problem: String?
        switch command {
        case .play, .stop, .toggleRoll:
            let start = command == .play || (command == .toggleRoll && before == .stopped)
            if start == (before == .stopped) { perform(.play) }
            if start && snapshot.state == .stopped {
                problem = message?.isError == true ? message!.text : "did not start"
            } else {
                say("\(snapshot.state == .stopped ? "stopped" : "playing") — asked by \(who)")
                problem = nil
            }
        case .gotoStart:
            perform(.home)
            problem = nil
        case .gotoEnd:
            perform(.end)
            problem = nil
        case .locate(let frame, let roll):
            if before.isRecordingPass {
                problem = "/locate: a take is being recorded (a take is never torn in two); stop first"
            } else {
                locate(frame)
                if roll == (snapshot.state == .stopped) { perform(.play) }
                say("moved to \(session.tempoMap.place(ofFrame: frame)) — asked by \(who)")
                problem = nil
            }
        case .recordToggle:
            let recording = before.isRecordingPass
            record(refusingBus: false)
            problem = !recording && !snapshot.state.isRecordingPass ? (message?.isError == true ? message!.text : "recording did not start") : nil
        case .loopToggle:
            perform(.loop)
            problem = message?.isError == true ? message!.text : nil
        case .addMarker(let name):
            problem = addMarker(named: name ?? "")
        case .nextMarker, .previousMarker:
            jumpToMarker(next: command == .nextMarker)
            problem = nil
        case .setSurface, .refresh:
            problem = nil // the service keeps its surfaces
        case .stripGain(let id, let db), .stripFader(let id, let db):
            problem = withStrip(id, doing: { t in
                oscEdit("fader \(session.tracks[t].name)", continuing: continuing, [.gain(strip: t, decibels: db)])
                say("\(session.tracks[t].name) fader \(Fader.text(db)) dB — asked by \(who)")
            })
        case .stripPan(let id, let pan):
            problem = withStrip(id, doing: { t in
                oscEdit("pan \(session.tracks[t].name)", continuing: continuing, [.pan(strip: t, value: pan)])
                say("\(session.tracks[t].name) pan \(Pan.text(pan)) — asked by \(who)")
            })
        case .stripMute(let id, let on), .stripSolo(let id, let on):
            let what = if case .stripMute = command { "mute" } else { "solo" }
            problem = withStrip(id, doing: { t in
                editMixer("\(what) \(session.tracks[t].name)", [what == "mute" ? .mute(strip: t, on: on) : .solo(strip: t, on: on)])
                say("\(session.tracks[t].name) \(what) \(on ? "on" : "off") — asked by \(who)")
            })
        case .stripRecordEnable(let id, let on):
            problem = withStrip(id) { t in
                guard !session.tracks[t].isBus else { return "\(session.tracks[t].name) is a bus: a bus has no input to arm" }
                edit("arm \(session.tracks[t].name)") { $0.tracks[t].armed = on }
                say("\(session.tracks[t].name) \(on ? "armed" : "disarmed") — asked by \(who)")
                return nil
            }
        case .sendGain(let id, let send, let db):
            problem = withStrip(id) { t in
                let strip = session.tracks[t]
                guard strip.sends.indices.contains(send - 1) else {
                    return "\(strip.name) has \(strip.sends.count) send\(strip.sends.count == 1 ? "" : "s"), no send \(send)"
                }
                oscEdit("send \(strip.name) → \(strip.sends[send - 1].bus)", continuing: continuing, [.sendLevel(strip: t, send: send - 1, decibels: db)])
                say("\(strip.name) send to \(strip.sends[send - 1].bus) \(Fader.text(db)) dB — asked by \(who)")
                return nil
            }
        }
        if let problem { say("\(who): \(problem)", error: true) }
        return problem
    }

    /// Runs `body` on strip `id` (1-based) when there is one; its refusal, or why not.
    private func withStrip(_ id: Int, _ body: (Int) -> String?) -> String? {
        guard session.tracks.indices.contains(id - 1) else {
            return "no strip \(id): the session has \(session.tracks.count) (ids are 1-based in track order)"
        }
        return body(id - 1)
    }

    private func withStrip(_ id: Int, doing body: (Int) -> Void) -> String? {
        withStrip(id) { (t: Int) -> String? in body(t); return nil }
    }

    /// A continuous control's edit: one undo step per gesture.
    private func oscEdit(_ name: String, continuing: Bool, _ changes: [MixerChange]) {
        let label = "OSC \(name)"
        let change: (inout Session) -> Void = { s in for c in changes { s.apply(c) } }
        if continuing { document.editMerging(label, change) } else { document.edit(label, change) }
        link.apply(changes)
    }

    /// A marker at the playhead called `name` (`M1`, `M2`… when empty), as the marker key
    /// adds one; the refusal, or nil.
    private func addMarker(named name: String) -> String? {
        if name.isEmpty { addMarker(); return message?.isError == true ? message!.text : nil }
        let at = playheadFrame
        do {
            try document.edit("marker") { (s: inout Session) throws(MarkerEditError) in _ = try s.addMarker(name, atFrame: at) }
        } catch {
            return error.description
        }
        link.update(session: session)
        say("marker \(name.terminalSafe) at \(session.tempoMap.place(ofFrame: at))")
        return nil
    }

    /// The strips as a surface sees them, in track order.
    public var oscStrips: [OSCStrip] {
        session.tracks.map {
            OSCStrip(name: $0.name, gainDecibels: $0.gainDecibels, pan: $0.pan, mute: $0.mute, solo: $0.solo,
                     recordEnabled: $0.isBus ? nil : $0.armed, sendDecibels: $0.sends.map(\.levelDecibels))
        }
    }

    /// Each strip's peak over its channels (dBFS), from the engine's last snapshot.
    public var oscMeters: [Double] {
        session.tracks.indices.map { t in
            t < snapshot.trackLevels.count ? snapshot.trackLevels[t].map(\.peakDecibels).max() ?? -.infinity : -.infinity
        }
    }

    /// The transport as a surface sees it.
    public var oscTransport: OSCTransport {
        OSCTransport(rolling: snapshot.state != .stopped, recording: snapshot.state.isRecordingPass, loop: session.loopEnabled,
                     frame: snapshot.positionFrame, sampleRate: session.sampleRate)
    }
}
