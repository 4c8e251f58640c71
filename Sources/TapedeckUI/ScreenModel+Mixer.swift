import TapedeckCore

// MARK: - Mixer: faders, pan, resets (each a ``SurfaceCommand``, as a surface's), names,
// inputs, the mixer view, clip lights

extension ScreenModel {
    /// Whether the fader keys act on the master (the mixer view's master strip is selected).
    var actsOnMaster: Bool { showsMixer && masterStripSelected }

    /// Moves the selected track's fader (or the master's) by fine or coarse steps.
    func stepFader(steps: Int, coarse: Bool) {
        if actsOnMaster {
            keyCommand(.mixer(.masterGain(decibels: Fader.stepped(session.masterGainDecibels, steps: steps, coarse: coarse))))
            return
        }
        guard let t = requireTrack() else { return }
        let next = Fader.stepped(handBase(t, .gain, own: session.tracks[t].gainDecibels), steps: steps, coarse: coarse)
        keyCommand(.mixer(.gain(strip: t, decibels: next)))
    }

    /// Moves the selected track's pan by fine or coarse steps.
    func stepPan(steps: Int, coarse: Bool) {
        guard !actsOnMaster else { say("the master has no pan", error: true); return }
        guard let t = requireTrack() else { return }
        keyCommand(.mixer(.pan(strip: t, value: Pan.stepped(handBase(t, .pan, own: session.tracks[t].pan), steps: steps, coarse: coarse))))
    }

    /// The fader back to 0 dB.
    func resetFader() {
        if actsOnMaster { keyCommand(.mixer(.masterGain(decibels: 0))); return }
        guard let t = requireTrack() else { return }
        keyCommand(.mixer(.gain(strip: t, decibels: 0)))
    }

    /// The pan back to the centre.
    func resetPan() {
        guard !actsOnMaster else { say("the master has no pan", error: true); return }
        guard let t = requireTrack() else { return }
        keyCommand(.mixer(.pan(strip: t, value: 0)))
    }

    /// The selected track's index, or nil after saying there is none (or that the mixer's
    /// master strip, which has a fader and a chain only, is selected).
    func requireTrack() -> Int? {
        guard !actsOnMaster else {
            say("the master strip has a fader (\(keyName(.faderDown)) \(keyName(.faderUp)) \(keyName(.resetFader))) and a chain (\(keyName(.chain)))", error: true)
            return nil
        }
        guard session.tracks.indices.contains(selectedTrack) else {
            say("no track selected (\(keyName(.newTrack)) makes one)", error: true)
            return nil
        }
        return selectedTrack
    }

    /// Asks for the selected track's new name.
    func openRename() {
        guard let t = requireTrack() else { return }
        let what = session.tracks[t].isBus ? "bus" : "track"
        overlay = .text(TextInput(purpose: .renameTrack(t), prompt: "Name of \(what) \(t + 1):", text: session.tracks[t].name, offered: true))
    }

    /// Asks for the selected track's input channels.
    func openInput() {
        guard let t = requireNonBus("input") else { return }
        let current = InputChannels.text(session.tracks[t].inputChannels).dropFirst(3)
        overlay = .text(TextInput(purpose: .input(t), prompt: "Input of \(session.tracks[t].name): one channel (3) or a pair (3-4):",
                                  text: String(current), offered: true))
    }

    /// Why `name` cannot be track `index`'s name, or nil when it can: names are how tracks
    /// are found (ignoring case), so two tracks may not share one.
    /// (Buses share the names with tracks: sends and outputs find a bus by its name.)
    func trackNameProblem(_ name: String, index: Int, forBus: Bool = false) -> String? {
        session.stripNameProblem(name, index: index, bus: forBus || isBus(index))
    }

    /// The mixer view on or off.
    func toggleMixer() {
        showsMixer.toggle()
        masterStripSelected = false
        say(showsMixer ? "mixer: left/right strip, up/down fader (pgup/pgdn coarse); \(keyName(.mixer)) closes"
                       : "mixer closed")
    }

    /// Keys the mixer view takes before the key map: arrows choose strips and move faders.
    /// Returns whether the key was used.
    func handleMixerKey(_ key: Key) -> Bool {
        switch key {
        case .named(.left):
            if masterStripSelected { masterStripSelected = false; selectTrack(session.tracks.count - 1) } else { selectTrack(selectedTrack - 1) }
        case .named(.right):
            if selectedTrack >= session.tracks.count - 1 { masterStripSelected = true } else { selectTrack(selectedTrack + 1) }
        case .named(.up), .named(.down): stepFader(steps: key == .named(.up) ? 1 : -1, coarse: false)
        case .named(.pgup), .named(.pgdn): stepFader(steps: key == .named(.pgup) ? 1 : -1, coarse: true)
        default: return false
        }
        return true
    }
}
