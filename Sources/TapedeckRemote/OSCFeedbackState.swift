import TapedeckCore
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

/// A fast wind under way (`/ffwd`, `/rewind`), at `speed` times normal.
public enum OSCWind: Equatable, Sendable {
    case none
    case forward(speed: Double)
    case backward(speed: Double)
}

/// Every message one surface should show now, each under the key of its address (and strip),
/// in the order a surface is best told them (names first). Values and types are Ardour's:
/// buttons and states are floats 0 or 1, silence is −200 dB on a gain and −193 on a meter.
struct OSCFeedbackState {
    let settings: OSCSurfaceSettings
    let view: OSCView
    let wind: OSCWind
    let now: Double
    private(set) var messages: [(key: String, message: OSCMessage)] = []

    init(settings: OSCSurfaceSettings, view: OSCView, wind: OSCWind, now: Double) {
        self.settings = settings
        self.view = view
        self.wind = wind
        self.now = now
    }

    private var bits: OSCSurfaceSettings.Feedback { settings.feedback }

    private mutating func add(_ path: String, _ args: [OSCValue]) {
        messages.append((path, OSCMessage(path, args)))
    }

    /// A strip message: the id as the first argument, or in the address (feedback bit 4).
    private mutating func add(_ path: String, id: Int, _ args: [OSCValue]) {
        let message = bits.contains(.idInAddress) ? OSCMessage("\(path)/\(id)", args) : OSCMessage(path, [.int(Int32(id))] + args)
        messages.append(("\(path) \(id)", message))
    }

    private static func flag(_ on: Bool) -> OSCValue { .float(on ? 1 : 0) }

    /// Ardour's gain in dB: −200 for silence.
    static func gain(_ decibels: Double) -> OSCValue {
        .float(Float(Fader.isSilent(decibels) || decibels <= OSCLaw.silentBelowDecibels ? -200 : decibels))
    }

    /// Ardour's meter: dB (−193 below −120), or `(dB + 94) / 100` with a fader gain mode.
    private func meter(_ peak: Double, silentBelow: Double) -> OSCValue {
        let raw = peak.isFinite && peak >= silentBelow ? peak : -193
        let level = (raw / OSCFeedback.meterStepDecibels).rounded() * OSCFeedback.meterStepDecibels
        return .float(Float(settings.faderMode == 0 ? level : (level + 94) / 100))
    }

    /// Strip slot `id` showing track `t` (nil: an empty slot, cleared as Ardour clears one).
    mutating func strip(_ id: Int, _ t: Int?, selected: Int?) {
        guard let t else {
            if bits.contains(.buttons) {
                add("/strip/name", id: id, [.string(" ")])
                for path in ["/strip/mute", "/strip/solo", "/strip/recenable", "/strip/select"] { add(path, id: id, [.float(0)]) }
            }
            if bits.contains(.values) {
                if settings.sendsDecibels { add("/strip/gain", id: id, [.float(-193)]) }
                if settings.sendsPosition { add("/strip/fader", id: id, [.float(0)]) }
                add("/strip/pan_stereo_position", id: id, [.float(0.5)])
            }
            if bits.contains(.meters) { add("/strip/meter", id: id, [.float(settings.faderMode == 0 ? -193 : 0)]) }
            return
        }
        let track = view.session.tracks[t]
        if bits.contains(.buttons) {
            add("/strip/name", id: id, [.string(track.name)])
            add("/strip/mute", id: id, [Self.flag(track.mute)])
            add("/strip/solo", id: id, [Self.flag(track.solo)])
            if !track.isBus {
                add("/strip/recenable", id: id, [Self.flag(track.armed)])
                // An int, as Ardour's route observer sends it (the select page's is a float).
                add("/strip/monitor_input", id: id, [.int(track.monitoring == .input ? 1 : 0)])
            }
            add("/strip/select", id: id, [Self.flag(selected == t)])
        }
        if bits.contains(.values) {
            if settings.sendsDecibels { add("/strip/gain", id: id, [Self.gain(track.gainDecibels)]) }
            if settings.sendsPosition { add("/strip/fader", id: id, [.float(Float(OSCLaw.position(decibels: track.gainDecibels)))]) }
            add("/strip/trimdB", id: id, [.float(0)])
            add("/strip/pan_stereo_position", id: id, [.float(Float((track.pan + 1) / 2))])
            for (k, send) in track.sends.enumerated() {
                let message = OSCMessage("/strip/send/gain", [.int(Int32(id)), .int(Int32(k + 1)), Self.gain(send.levelDecibels)])
                messages.append(("/strip/send/gain \(id) \(k + 1)", message))
            }
        }
        let peak = t < view.meters.count ? view.meters[t] : -.infinity
        if bits.contains(.meters) { add("/strip/meter", id: id, [meter(peak, silentBelow: -120)]) }
        if bits.contains(.signal) { add("/strip/signal", id: id, [Self.flag(peak >= -40)]) }
    }

    /// `/bank_up` and `/bank_down`: 1 while there is a bank that way (a banked surface only).
    mutating func bankButtons(bank: Int, total: Int) {
        let size = settings.bankSize
        guard size > 0, !bits.intersection([.buttons, .values, .master]).isEmpty else { return }
        add("/bank_up", [.int(total <= size || bank > total - size ? 0 : 1)])
        add("/bank_down", [.int(bank > 1 ? 1 : 0)])
    }

    /// The master strip (feedback bit 16); its meter with the meters.
    mutating func master() {
        if bits.contains(.master) {
            let db = view.session.masterGainDecibels
            add("/master/name", [.string("Master")])
            if settings.sendsPosition { add("/master/fader", [.float(Float(OSCLaw.position(decibels: db)))]) }
            if settings.sendsDecibels { add("/master/gain", [Self.gain(db)]) }
            // Tapedeck's master has no mute and no trim: always off and 0 dB.
            add("/master/mute", [.float(0)])
            add("/master/trimdB", [.float(0)])
        }
        if bits.contains(.meters) { add("/master/meter", [meter(view.masterMeter, silentBelow: -94)]) }
        if bits.contains(.signal) { add("/master/signal", [Self.flag(view.masterMeter >= -40)]) }
    }

    /// The transport's states, the session (feedback bit 16), the playhead (bits 32, 64,
    /// 1024, 2048) and the heartbeat (bit 8).
    mutating func transport() {
        let t = view.transport
        let session = view.session
        if bits.contains(.master) {
            let winding = wind != .none
            add("/loop_toggle", [Self.flag(t.loop)])
            add("/transport_play", [Self.flag(t.rolling && !winding)])
            add("/toggle_roll", [Self.flag(t.rolling && !winding)])
            add("/transport_stop", [Self.flag(!t.rolling && !winding)])
            add("/rewind", [Self.flag({ if case .backward = wind { true } else { false } }())])
            add("/ffwd", [Self.flag({ if case .forward = wind { true } else { false } }())])
            add("/rec_enable_toggle", [Self.flag(t.recording)])
            add("/record_tally", [Self.flag(t.recording || session.tracks.contains { !$0.isBus && $0.armed })])
            add("/cancel_all_solos", [Self.flag(session.tracks.contains(where: \.solo))])
            add("/session_name", [.string(view.sessionName)])
            add("/marker", [.string(OSCFeedbackState.marker(session, at: t.frame))])
        }
        if bits.contains(.barsBeats) {
            let p = session.tempoMap.position(ofFrame: t.frame)
            add("/position/bbt", [.string("\(Self.padded(p.bar, 3))|\(Self.padded(p.beat, 2))|\(Self.padded(p.tick, 4))")])
        }
        if bits.contains(.timecode) { add("/position/smpte", [.string(OSCFeedbackState.timecode(t.frame, t.sampleRate))]) }
        // Strings, as Ardour sends them: a frame count outgrows an OSC int.
        if bits.contains(.samples) { add("/position/samples", [.string(String(t.frame))]) }
        if bits.contains(.time) { add("/position/time", [.string(OSCFeedbackState.time(t.frame, t.sampleRate))]) }
        if bits.contains(.heartbeat) { add("/heartbeat", [.float(Int(now.rounded(.down)) % 2 == 0 ? 1 : 0)]) }
    }

    /// The select page (feedback bit 8192): the surface's selected strip, or cleared.
    mutating func selectPage(_ selected: Int?) {
        guard bits.contains(.select) else { return }
        guard let t = selected, view.session.tracks.indices.contains(t) else {
            add("/select/name", [.string(" ")])
            for path in ["/select/mute", "/select/solo", "/select/recenable", "/select/monitor_input", "/select/trimdB", "/select/n_inputs",
                         "/select/n_outputs"] {
                add(path, [.float(0)])
            }
            if settings.sendsPosition { add("/select/fader", [.float(0)]) }
            if settings.sendsDecibels { add("/select/gain", [.float(-193)]) }
            add("/select/pan_stereo_position", [.float(0.5)])
            return
        }
        let track = view.session.tracks[t]
        add("/select/name", [.string(track.name)])
        add("/select/mute", [Self.flag(track.mute)])
        add("/select/solo", [Self.flag(track.solo)])
        add("/select/recenable", [Self.flag(!track.isBus && track.armed)])
        add("/select/monitor_input", [Self.flag(!track.isBus && track.monitoring == .input)])
        add("/select/trimdB", [.float(0)])
        add("/select/n_inputs", [.float(Float(track.isBus ? track.busChannels ?? 2 : track.inputChannels.count))])
        add("/select/n_outputs", [.float(2)])
        if settings.sendsPosition { add("/select/fader", [.float(Float(OSCLaw.position(decibels: track.gainDecibels)))]) }
        if settings.sendsDecibels { add("/select/gain", [Self.gain(track.gainDecibels)]) }
        add("/select/pan_stereo_position", [.float(Float((track.pan + 1) / 2))])
        for (k, send) in track.sends.enumerated() {
            if settings.sendsPosition { add("/select/send_fader", id: k + 1, [.float(Float(OSCLaw.position(decibels: send.levelDecibels)))]) }
            if settings.sendsDecibels { add("/select/send_gain", id: k + 1, [Self.gain(send.levelDecibels)]) }
            add("/select/send_name", id: k + 1, [.string(send.bus)])
        }
    }

    /// The select page's plugin page (feedback bit 8192): node `plugin` of the selected
    /// strip's playback chain, its name, whether it is in (not bypassed), and each parameter's
    /// name and value as 0…1 of its range; slots past its parameters cleared. Returns the
    /// slots shown; `plugin` is kept within the chain.
    mutating func pluginPage(_ selected: Int?, plugin: inout Int, shown: Int) -> Int {
        guard bits.contains(.select) else { return shown }
        var parameters: [Chain.ParameterState] = []
        if let t = selected, view.session.tracks.indices.contains(t),
           let chain = try? Chain(parsing: view.session.tracks[t].playbackChain), !chain.entries.isEmpty {
            plugin = min(max(1, plugin), chain.entries.count)
            let entry = chain.entries[plugin - 1]
            add("/select/plugin/name", [.string(entry.node)])
            add("/select/plugin/activate", [Self.flag(!entry.bypassed)])
            parameters = chain.parameters(of: plugin - 1, registry: .standard)
        } else {
            add("/select/plugin/name", [.string(" ")])
            add("/select/plugin/activate", [.float(0)])
        }
        for (i, p) in parameters.enumerated() {
            add("/select/plugin/parameter/name", id: i + 1, [.string(p.definition.name)])
            add("/select/plugin/parameter", id: i + 1, [.float(Float(OSCFeedbackState.position(p)))])
        }
        if shown > parameters.count {
            for id in (parameters.count + 1)...shown {
                add("/select/plugin/parameter/name", id: id, [.string(" ")])
                add("/select/plugin/parameter", id: id, [.float(0)])
            }
        }
        return max(shown, parameters.count)
    }

    /// A parameter's value as 0…1 of its range (a note value: 0).
    static func position(_ p: Chain.ParameterState) -> Double {
        guard case .number(let v) = p.value, p.definition.maximum > p.definition.minimum else { return 0 }
        return min(1, max(0, (v - p.definition.minimum) / (p.definition.maximum - p.definition.minimum)))
    }

    private static func padded(_ v: Int, _ width: Int) -> String {
        let text = String(v)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// Ardour's `/marker`: the marker at the playhead, `A <-> B` between two, `-> A` before
    /// the first, `A <-` after the last (with the session's start and end among them), as
    /// `mark_update` does.
    static func marker(_ session: Session, at frame: Int64) -> String {
        // The session's start and end count only where no marker of the user's stands.
        var marks = session.markers.map { (label: $0.name, at: $0.frame) }
        for (label, at) in [("start", Int64(0)), ("end", session.endFrame)] where !marks.contains(where: { $0.at == at }) {
            marks.append((label, at))
        }
        marks.sort { $0.at < $1.at }
        guard let first = marks.first, let last = marks.last else { return "No Marks" }
        if frame > last.at { return "\(last.label) <-" }
        if frame < first.at { return "-> \(first.label)" }
        if let here = marks.first(where: { $0.at == frame }) { return here.label }
        let previous = marks.last { $0.at < frame }!, next = marks.first { $0.at > frame }!
        return "\(previous.label) <-> \(next.label)"
    }

    /// `HH:MM:SS:FF` at 30 frames a second (Ardour's default timecode; Tapedeck has no
    /// timecode setting of its own).
    static func timecode(_ frame: Int64, _ rate: Int) -> String {
        guard rate > 0 else { return "00:00:00:00" }
        let seconds = frame / Int64(rate)
        let frames = (frame % Int64(rate)) * 30 / Int64(rate)
        return "\(padded(Int(seconds / 3600), 2)):\(padded(Int(seconds / 60 % 60), 2)):\(padded(Int(seconds % 60), 2)):\(padded(Int(frames), 2))"
    }

    /// `HH:MM:SS.mmm`, Ardour's `/position/time`.
    static func time(_ frame: Int64, _ rate: Int) -> String {
        let ms = rate > 0 ? frame * 1000 / Int64(rate) : 0
        return "\(padded(Int(ms / 3_600_000), 2)):\(padded(Int(ms / 60_000 % 60), 2)):\(padded(Int(ms / 1000 % 60), 2)).\(padded(Int(ms % 1000), 3))"
    }
}
