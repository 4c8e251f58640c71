import TapedeckCore
import TapedeckDSP
import TapedeckRemote

// MARK: - OSC: the screen as a host of ``OSCSurfaces``. What a surface asks for is done as the
// screen's own keys and control socket do it, each edit one undoable step through
// edit(_:_:) (a fader moved in one gesture merges into one step, as a MIDI controller's
// does), and said on the message line with who asked.

extension ScreenModel: OSCHost {
    /// The session, transport and meters as surfaces see them. UI thread.
    public var oscView: OSCView {
        OSCView(session: session,
                transport: OSCTransport(rolling: snapshot.state != .stopped, recording: snapshot.state.isRecordingPass,
                                        loop: session.loopEnabled, frame: snapshot.positionFrame, sampleRate: session.sampleRate),
                meters: OSCView.meters(snapshot.trackLevels, trackCount: session.tracks.count),
                endFrame: session.endFrame, stopEnds: false, masterMeter: OSCView.peak(snapshot.masterLevels),
                sessionName: OSCView.sessionName(path: folder?.path), speed: speed, chains: keptChains())
    }

    /// As the control socket's command (said on the message line when done). UI thread.
    public func perform(_ command: RemoteCommand, from peer: String) -> String? {
        if case .error(let text) = handleRemote(command, from: peer, sayingRefusal: false) { return text }
        return nil
    }

    /// UI thread.
    public func apply(_ change: MixerChange, from peer: String, continuing: Bool) -> String? {
        let who = peer.terminalSafe
        if case .masterGain(let db) = change {
            oscEdit("master fader", continuing: continuing, [change])
            say("master fader \(Fader.text(db)) dB — asked by \(who)")
            return nil
        }
        guard let strip = change.strip, session.tracks.indices.contains(strip) else { return "no such strip" }
        let name = session.tracks[strip].name
        switch change {
        case .gain(_, let db):
            oscEdit("fader \(name)", continuing: continuing, [change])
            say("\(name) fader \(Fader.text(db)) dB — asked by \(who)")
        case .pan(_, let pan):
            oscEdit("pan \(name)", continuing: continuing, [change])
            say("\(name) pan \(Pan.text(pan)) — asked by \(who)")
        case .mute(_, let on), .solo(_, let on):
            let what = if case .mute = change { "mute" } else { "solo" }
            editMixer("\(what) \(name)", [change])
            say("\(name) \(what) \(on ? "on" : "off") — asked by \(who)")
        case .sendLevel(_, let send, let db):
            let bus = session.tracks[strip].sends[send].bus
            oscEdit("send \(name) → \(bus)", continuing: continuing, [change])
            say("\(name) send to \(bus) \(Fader.text(db)) dB — asked by \(who)")
        case .sendPan, .masterGain:
            return "not a strip value OSC sets"
        }
        return nil
    }

    /// UI thread.
    public func arm(strip t: Int, on: Bool, from peer: String) -> String? {
        edit("arm \(session.tracks[t].name)") { $0.tracks[t].armed = on }
        say("\(session.tracks[t].name) \(on ? "armed" : "disarmed") — asked by \(peer.terminalSafe)")
        return nil
    }

    /// As the monitoring key sets it, one undoable edit. UI thread.
    public func monitor(strip t: Int, mode: MonitoringMode, from peer: String) -> String? {
        guard session.tracks[t].monitoring != mode else { return nil }
        edit("monitoring \(session.tracks[t].name)") { $0.tracks[t].monitoring = mode }
        say("\(session.tracks[t].name): monitoring \(ScreenModel.monitoringWords(mode)) — asked by \(peer.terminalSafe)")
        return nil
    }

    /// A value of a node of a playback chain, as the chain panel moves one: one undoable
    /// step (a gesture's moves merged into one), the value written to the playing node. UI
    /// thread.
    public func applyChain(_ change: ChainValueChange, from peer: String, continuing: Bool) -> String? {
        guard case .playback(let t) = change.place, session.tracks.indices.contains(t) else { return "not a playback chain" }
        let name = session.tracks[t].name
        guard session.tracks[t].frozen == nil else { return "\(name) is frozen: unfreeze it to change its chain" }
        // A parameter moved in one gesture is one undo step, as a fader's.
        if continuing { document.editMerging("OSC chain \(name)") { $0.apply(change, chains: &chains) } } else { document.edit("OSC chain \(name)") { $0.apply(change, chains: &chains) } }
        link.apply([change])
        switch change.value {
        case .parameter(let id, .number(let v)): say("\(name) node \(change.node + 1) \(id) \(v.formatted()) — asked by \(peer.terminalSafe)")
        case .bypass(let on): say("\(name) node \(change.node + 1) \(on ? "bypassed" : "back in") — asked by \(peer.terminalSafe)")
        default: break
        }
        return nil
    }

    /// A marker at the playhead called `name` (`M1`, `M2`… when nil or empty), as the marker
    /// key adds one. UI thread.
    public func addMarker(named name: String?, from peer: String) -> String? {
        guard let name, !name.isEmpty else { addMarker(); return message?.isError == true ? message!.text : nil }
        let at = playheadFrame
        do {
            try document.edit("marker") { (s: inout Session) throws(MarkerEditError) in _ = try s.addMarker(name, atFrame: at) }
        } catch {
            return error.description
        }
        link.update(session: session)
        say("marker \(name.terminalSafe) at \(session.tempoMap.place(ofFrame: at)) — asked by \(peer.terminalSafe)")
        return nil
    }

    /// On the message line. UI thread.
    public func refuse(_ text: String) { say(text, error: true) }

    /// A continuous control's edit: one undo step per gesture.
    private func oscEdit(_ name: String, continuing: Bool, _ changes: [MixerChange]) {
        let label = "OSC \(name)"
        let change: (inout Session) -> Void = { s in for c in changes { s.apply(c) } }
        if continuing { document.editMerging(label, change) } else { document.edit(label, change) }
        link.apply(changes)
    }
}
