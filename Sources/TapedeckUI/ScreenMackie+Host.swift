import Foundation
import TapedeckCore
import TapedeckTransport

// What Ardour's Mackie support does beyond strips and transport, on the screen's surface:
// the handshake, meters, the jog wheel, Flip and the time display's mode.
extension ScreenMackie {
    /// A handshake SysEx from the surface: a Logic Control's challenge is answered (and its
    /// confirmation met with the version request), a Mackie Control's answer to the device
    /// query means it is (back) on, and is sent everything. Each unit (`unit` 0 the main one,
    /// then the extenders) on its own port, as Ardour's `Surface::handle_midi_sysex` does per
    /// surface. UI thread.
    func handshake(device: UInt8, command: UInt8, serial: UInt64, challenge: UInt32, unit: Int = 0, model: ScreenModel) {
        let H = MackieControl.Handshake.self, logic = MackieControl.Device.isLogic(device)
        // Ardour answers every unit in its own header byte from its first message on.
        deviceIDs[unit] = device
        switch command {
        case H.answer where logic:
            send(unit, [MackieControl.connectionReply(device: device, serial: serial, challenge: challenge)])
        case H.answer:
            shown[unit] = nil
        case H.confirmed where logic:
            send(unit, [MackieControl.versionRequest(device: device)])
            shown[unit] = nil
            model.say(unit == 0 ? "surface: Logic Control connected" : "surface: Logic Control XT \(unit) connected")
        case H.denied where logic:
            model.say("surface: the Logic Control refused the connection (its challenge was answered wrongly?)", error: true)
        default:
            break
        }
    }

    /// Flip, SMPTE/Beats and Scrub. UI thread.
    func pressHostButton(_ note: UInt8, model: ScreenModel) {
        let N = MackieControl.Note.self
        switch note {
        case N.flip:
            flipped.toggle()
            // The faders now stand for something else: a gesture in progress ends.
            gestureAt = [:]
            model.say(flipped ? "surface: flip (faders pan, V-pots level)" : "surface: faders level, V-pots pan")
        case N.timecodeBeats:
            timeInBars.toggle()
            timeSentAt = -1
            model.say("surface: time display in \(timeInBars ? "bars and beats" : "timecode at \(model.session.timecodeRate.rawValue) fps")")
        case N.scrub:
            jogShuttles.toggle()
            model.say("surface: jog wheel \(jogShuttles ? "shuttles (speed)" : "scrolls the playhead")")
        default:
            break
        }
    }

    /// The jog wheel: scrolling, a detent moves the playhead one column of the timeline (the
    /// screen's step with snap off); shuttling, a detent is a speed step up or down, as
    /// Ardour's shuttle mode steps varispeed. UI thread.
    func jog(_ steps: Int, model: ScreenModel) {
        guard steps != 0 else { return }
        if jogShuttles {
            ask(.transport(.speed(model.steppedSpeed(up: steps > 0))), model: model)
            return
        }
        let target = max(0, model.playheadFrame + Int64(steps) * model.framesPerColumn)
        guard target != model.playheadFrame else { return }
        ask(.transport(.locate("\(target)f")), model: model)
    }

    /// Flip: fader `strip` moved to `value` sets the track's pan (one undo step a gesture).
    func panByFader(_ strip: Int, value: Int, model: ScreenModel, now: Double) {
        guard let t = track(strip, model), !model.session.tracks[t].isBus else { return }
        let pan = MackieControl.pan(faderValue: value)
        guard pan != model.session.tracks[t].pan else { return }
        gestureEdit("fader \(strip)", model: model, now: now, .pan(strip: t, value: pan))
    }

    /// Flip: V-pot `strip` turned `steps` detents moves the track's level a fine step each.
    func levelByVPot(_ strip: Int, steps: Int, model: ScreenModel, now: Double) {
        guard let t = track(strip, model) else { return }
        let db = Fader.stepped(model.session.tracks[t].gainDecibels, steps: steps, coarse: false)
        guard db != model.session.tracks[t].gainDecibels else { return }
        gestureEdit("level \(strip)", model: model, now: now, .gain(strip: t, decibels: db))
    }

    /// The time display's ten characters: the session's timecode (`HH MMSS FF`) or bars and beats.
    func timeDigits(_ model: ScreenModel) -> String {
        let session = model.session
        guard timeInBars else {
            return MackieControl.timecodeDigits(Timecode(frame: model.playheadFrame, sampleRate: session.sampleRate, rate: session.timecodeRate))
        }
        let p = session.tempoMap.position(ofFrame: model.playheadFrame)
        return MackieControl.bbtDigits(bar: p.bar, beat: p.beat, tick: p.tick, ticksPerBeat: TempoMap.ticksPerBeat)
    }

    /// Meters, as Ardour drives them: switched on (SysEx) when the transport rolls and off
    /// when it stops, and while rolling each strip's peak as channel pressure every 100 ms
    /// (the surface lets a meter fall by itself, so it is sent even when unchanged), with the
    /// overload LED lit past 0 dB (a deflection over 100 %). Every unit its own strips'. UI thread.
    func sendMeters(_ model: ScreenModel, now: Double) {
        let rolling = model.snapshot.state.isMoving
        var out = [[[UInt8]]](repeating: [], count: unitCount)
        let switched = rolling != metering
        metering = rolling
        let due = rolling && now - metersSentAt >= 0.1
        if due { metersSentAt = now }
        let levels = model.snapshot.trackLevels
        for unit in 0..<unitCount {
            if switched {
                for s in 0..<MackieControl.stripCount {
                    out[unit].append(MackieControl.meterModeMessage(device: deviceIDs[unit], strip: s, enabled: rolling))
                }
                if !rolling {
                    for s in 0..<MackieControl.stripCount { out[unit].append(MackieControl.meterMessage(strip: s, decibels: -.infinity)) }
                }
            }
            guard due else { continue }
            for s in 0..<MackieControl.stripCount {
                let g = unit * MackieControl.stripCount + s
                guard let t = track(g, model) else { continue }
                let peak = levels.indices.contains(t) ? levels[t].map(\.peakDecibels).max() ?? -.infinity : -.infinity
                let over = MackieControl.meterDeflection(decibels: peak) > 100
                if over != overloaded[g] {
                    overloaded[g] = over
                    out[unit].append(MackieControl.overloadMessage(strip: s, on: over))
                }
                out[unit].append(MackieControl.meterMessage(strip: s, decibels: peak))
            }
        }
        for unit in 0..<unitCount { send(unit, out[unit]) }
    }
}
