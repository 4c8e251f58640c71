import TapedeckCore
import TapedeckRemote

// MARK: - The keys as a front-end: a key that changes the session or moves the transport
// becomes the command every other front-end sends (``SurfaceCommand``, its transport verbs
// ``RemoteCommand``s) and is carried out by the one `perform(_:from:continuing:)`, checked,
// refused and undone as OSC's, a Mackie's, MIDI machine control's and `tapedeck ctl`'s are
// (issue 42 item 1). What is left to the keys is what only a screen has: the selection, the
// view, dialogs, and the value a step lands on (read from the selected strip, the snap grid,
// the automation heard). A key's transport verb is not said on the message line (the
// transport bar shows it); its refusal is.

extension ScreenModel {
    /// Carries out a key's command; a refusal is said. Whether it was done. UI thread.
    @discardableResult
    func keyCommand(_ command: SurfaceCommand) -> Bool {
        if let why = perform(command, from: .keys, continuing: false) {
            say(why, error: true)
            return false
        }
        return true
    }

    /// The play key: play from the playhead when stopped, stop when rolling (a pass too).
    func keyPlay() {
        keyCommand(.transport(snapshot.state == .stopped ? .play : .stop))
    }

    /// The record key: a pass over the armed tracks, or the end of the one running. With a bus
    /// selected, where the user thinks of recording onto it, says why that cannot be (a
    /// remote's record, which never looks at the selection, records the armed tracks).
    func keyRecord() {
        if !snapshot.state.isRecordingPass && isBus(selectedTrack) && !actsOnMaster,
           requireNonBus("input to record") == nil { return }
        keyCommand(.transport(.record))
    }

    /// A key that moves the playhead (home, end, the arrows): `rewind` or `locate` to that
    /// frame, refused while a take runs (a take is never torn in two) as every other
    /// front-end's is; the refusal names the place, not the frame count the command carries.
    func keyLocate(_ frame: Int64) {
        let verb: RemoteCommand = frame == 0 ? .rewind : .locate("\(frame)f")
        guard let why = perform(.transport(verb), from: .keys, continuing: false) else { return }
        say(frame == 0 ? why : why.replacingOccurrences(of: verb.line, with: "moving to \(session.tempoMap.place(ofFrame: frame))"), error: true)
    }

    /// The speed keys: one step along ``speedSteps``, said with the new speed.
    func keyStepSpeed(up: Bool) {
        if keyCommand(.transport(.speed(steppedSpeed(up: up)))) { say("speed \(TransportBarView.speedText(speed))") }
    }

    /// The speed one step up or down ``speedSteps`` from the speed now (a key's, a jog
    /// wheel's shuttle).
    func steppedSpeed(up: Bool) -> Double {
        let steps = ScreenModel.speedSteps
        let i = steps.firstIndex { $0 >= speed - 1e-9 } ?? steps.count - 1
        return steps[min(steps.count - 1, max(0, i + (up ? 1 : -1)))]
    }

    /// The mute and solo keys: the selected strip's switch flipped.
    func keyToggle(mute: Bool) {
        guard let t = requireTrack() else { return }
        let track = session.tracks[t]
        keyCommand(.mixer(mute ? .mute(strip: t, on: !track.mute) : .solo(strip: t, on: !track.solo)))
    }

    /// The arm key: the selected track armed or disarmed (a bus has no input to arm).
    func keyToggleArm() {
        guard let t = requireNonBus("input to arm") else { return }
        keyCommand(.arm(strip: t, on: !session.tracks[t].armed))
    }
}
