import TapedeckCore
import TapedeckDSP
import TapedeckRemote

// MARK: - Control surfaces: the screen as the host of every surface's ``SurfaceCommand``s,
// OSC (``OSCSurfaces``) and Mackie Control (``ScreenMackie``) alike. What a surface asks for
// is done as the screen's own keys and control socket do it, each edit one undoable step
// through edit(_:_:) (a control moved in one gesture merges into one step, as a MIDI
// controller's does), and said on the message line, naming who asked when it was not the
// user's own hand.

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

    /// Carries out one surface's command: checked first as every host checks it
    /// (``SurfaceCommand/refusal(in:)``), then done as the screen's keys do it. UI thread.
    public func perform(_ command: SurfaceCommand, from source: SurfaceSource, continuing: Bool) -> String? {
        if let why = command.refusal(in: session) { return why }
        let asked = source.peer.map { " — asked by \($0.terminalSafe)" } ?? ""
        switch command {
        case .transport(let verb):
            // As the control socket's command (said on the message line when done, unless a
            // key asked: the transport bar shows what a key did).
            let reply = handleRemote(verb, from: source.peer ?? source.label, sayingRefusal: false, announcing: source != .keys)
            if case .error(let text) = reply { return text }
        case .mixer(let change):
            return mix(change, source: source, asked: asked, continuing: continuing)
        case .arm(let t, let on):
            if let why = trackChange(.arm(strip: t, on: on)) { return why }
            say("\(session.tracks[t].name) \(on ? "armed" : "disarmed")\(asked)")
        case .monitor(let t, let mode):
            // As the monitoring key sets it, one undoable edit.
            guard session.tracks[t].monitoring != mode else { return nil }
            if let why = trackChange(.monitoring(strip: t, mode)) { return why }
            let track = session.tracks[t]
            say("\(track.name): monitoring \(ScreenModel.monitoringWords(mode))\(track.armed ? "" : " (once armed)")\(asked)")
        case .chain(let change):
            return chainValue(change, source: source, asked: asked, continuing: continuing)
        case .addMarker(let name):
            return marker(named: name, asked: asked)
        }
        return nil
    }

    /// On the message line. UI thread.
    public func refuse(_ text: String) { say(text, error: true) }

    /// One mixer change, its undo step named for the surface (`OSC fader Drums`, `surface
    /// fader Drums`); a continuous control's moves in one gesture are one step. UI thread.
    private func mix(_ change: MixerChange, source: SurfaceSource, asked: String, continuing: Bool) -> String? {
        if case .masterGain(let db) = change {
            editMixer(source.undoName("master fader"), merging: continuing, heard: source.alreadyHeard, [change])
            say("master fader \(Fader.text(db)) dB\(asked)")
            return nil
        }
        guard let strip = change.strip else { return "no such strip" }
        let name = session.tracks[strip].name
        switch change {
        case .gain(_, let db):
            editMixer(source.undoName("fader \(name)"), merging: continuing, heard: source.alreadyHeard, [change])
            say("\(name) fader \(Fader.text(db)) dB\(asked)")
        case .pan(_, let pan):
            editMixer(source.undoName("pan \(name)"), merging: continuing, heard: source.alreadyHeard, [change])
            say("\(name) pan \(Pan.text(pan))\(asked)")
        case .mute(_, let on), .solo(_, let on):
            let what = if case .mute = change { "mute" } else { "solo" }
            editMixer("\(what) \(name)", heard: source.alreadyHeard, [change])
            say("\(name) \(what) \(on ? "on" : "off")\(asked)")
        case .sendLevel(_, let send, _):
            let bus = session.tracks[strip].sends[send].bus
            editMixer(source.undoName("send level \(name) to \(bus)"), merging: continuing, heard: source.alreadyHeard, [change])
            say("send \(describeSend(strip: strip, send: send))\(asked)")
        case .sendPan, .masterGain:
            return "not a strip value a surface sets"
        }
        return nil
    }

    /// A value of a node of a chain (a track's playback or input chain, the master's), as the
    /// chain panel moves one: one undoable step (a gesture's moves merged into one), the value
    /// written to the playing node (unless it is there already: a learnt controller's). UI
    /// thread.
    private func chainValue(_ change: ChainValueChange, source: SurfaceSource, asked: String, continuing: Bool) -> String? {
        let name: String
        switch change.place {
        case .master: name = "master"
        case .input(let t): name = "\(session.tracks[t].name) input"
        case .playback(let t):
            name = session.tracks[t].name
            guard session.tracks[t].frozen == nil else { return "\(name) is frozen: unfreeze it to change its chain" }
        }
        let label = source.undoName("chain \(name)")
        owner.editChainValue(label, merging: continuing, heard: source.alreadyHeard, change, chains: &chains)
        switch change.value {
        case .parameter(let id, .number(let v)): say("\(name) node \(change.node + 1) \(id) \(v.formatted())\(asked)")
        case .bypass(let on): say("\(name) node \(change.node + 1) \(on ? "bypassed" : "back in")\(asked)")
        default: break
        }
        return nil
    }

    /// A marker at the playhead called `name` (`M1`, `M2`… when nil or empty), as the marker
    /// key adds one. UI thread.
    private func marker(named name: String?, asked: String) -> String? {
        guard let name, !name.isEmpty else { addMarker(); return message?.isError == true ? message!.text : nil }
        let at = playheadFrame
        do {
            try owner.change { try $0.apply(MarkerChange.add(name: name, atFrame: at)) }
        } catch {
            return "\(error)"
        }
        say("marker \(name.terminalSafe) at \(session.tempoMap.place(ofFrame: at))\(asked)")
        return nil
    }
}
