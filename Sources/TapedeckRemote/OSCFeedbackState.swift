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

    /// Which meter a value is for: Ardour sends each its own way (osc_route_observer.cc,
    /// osc_select_observer.cc, osc_global_observer.cc).
    enum MeterPlace { case strip, select, master }

    /// Ardour's meter for `peak` (dBFS): with feedback bit 128, dB (−193 below `silentBelow`)
    /// or `(dB + 94) / 100` with a fader gain mode; else with bit 256 its LED strip
    /// (``ledBits(_:width:)``): an int on a strip, a float on the select page and the master
    /// (whose bits are 32 wide), as Ardour sends them. Nil without either bit.
    func meter(_ peak: Double, silentBelow: Double, _ place: MeterPlace) -> OSCValue? {
        let raw = peak.isFinite && peak >= silentBelow ? peak : -193
        if bits.contains(.meters) {
            let level = (raw / OSCFeedback.meterStepDecibels).rounded() * OSCFeedback.meterStepDecibels
            return .float(Float(settings.faderMode == 0 ? level : (level + 94) / 100))
        }
        guard bits.contains(.ledMeters) else { return nil }
        let led = Self.ledBits(raw, width: place == .master ? 32 : 16)
        return place == .strip ? .int(Int32(led)) : .float(Float(led))
    }

    /// A meter with nothing to show (an empty slot, no strip selected): Ardour's 0, or −193 dB.
    var clearedMeter: OSCValue? {
        if bits.contains(.meters) { return .float(settings.faderMode == 0 ? -193 : 0) }
        return bits.contains(.ledMeters) ? .float(0) : nil
    }

    /// Ardour's LED strip for a level (dB): `lit = (uint32_t)((dB + 54) / 3.75 - 1)` and
    /// `~(0xfff << lit)` kept to `width` bits, so from −50.25 dB one more bit is lit every
    /// 3.75 dB (13 at 0 dB, 16 from +6.75 dB). Ardour's 12-bit `0xfff` leaves bits 12…15 lit
    /// too below four lit (−35.25 dB): kept, as a layout made for Ardour sees it. At −54 dB
    /// and below Ardour's cast of a negative number is undefined (an x86-64 build lights
    /// everything, 65535, even for silence): no LED lit here.
    static func ledBits(_ decibels: Double, width: Int) -> UInt32 {
        let level = (Double(Float(decibels)) + 54) / 3.75 - 1
        guard level > -1 else { return 0 } // also NaN
        let lit = level >= 32 ? 32 : Int(level) // truncated toward zero, as C's cast
        let shifted: UInt32 = lit >= 32 ? 0 : UInt32(truncatingIfNeeded: UInt64(0xfff) << UInt64(lit))
        let bits = ~shifted
        return width >= 32 ? bits : bits & ((1 << UInt32(width)) - 1)
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
            if let cleared = clearedMeter { add("/strip/meter", id: id, [cleared]) }
            if bits.contains(.signal) { add("/strip/signal", id: id, [.float(0)]) }
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
        if let m = meter(peak, silentBelow: -120, .strip) { add("/strip/meter", id: id, [m]) }
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
        // Ardour's master meter and signal come from its global observer, which a surface
        // has with one of feedback bits 8, 16, 32 and 64 only.
        guard !bits.intersection([.heartbeat, .master, .barsBeats, .timecode]).isEmpty else { return }
        if let m = meter(view.masterMeter, silentBelow: -94, .master) { add("/master/meter", [m]) }
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
        if bits.contains(.timecode) { add("/position/smpte", [.string(Timecode(frame: t.frame, sampleRate: t.sampleRate, rate: session.timecodeRate).text)]) }
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
            if let cleared = clearedMeter { add("/select/meter", [cleared]) }
            if bits.contains(.signal) { add("/select/signal", [.float(0)]) }
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
        let peak = t < view.meters.count ? view.meters[t] : -.infinity
        if let m = meter(peak, silentBelow: -120, .select) { add("/select/meter", [m]) }
        if bits.contains(.signal) { add("/select/signal", [Self.flag(peak >= -40)]) }
        for (k, send) in track.sends.enumerated() {
            if settings.sendsPosition { add("/select/send_fader", id: k + 1, [.float(Float(OSCLaw.position(decibels: send.levelDecibels)))]) }
            if settings.sendsDecibels { add("/select/send_gain", id: k + 1, [Self.gain(send.levelDecibels)]) }
            add("/select/send_name", id: k + 1, [.string(send.bus)])
        }
    }

    /// The select page's plugin page (feedback bit 8192), as Ardour's `plugin_init`: node
    /// `plugin` of the selected strip's playback chain, its name (an LV2 plugin's own),
    /// whether it is in (not bypassed), and from parameter `page` on (a page of the surface's
    /// `plugin_page_size`, or all) each parameter's name and its value along its travel, 0…1
    /// (``OSCParameterLaw``); slots past its parameters cleared. Returns the slots shown;
    /// `plugin` and `page` are kept within the chain and its parameters.
    mutating func pluginPage(_ selected: Int?, plugin: inout Int, page: inout Int, shown: Int) -> Int {
        guard bits.contains(.select) else { return shown }
        var parameters: [Chain.ParameterState] = []
        if let t = selected, let chain = view.playbackChain(t), !chain.entries.isEmpty {
            plugin = min(max(1, plugin), chain.entries.count)
            let entry = chain.entries[plugin - 1]
            let registry = NodeRegistry.standard
            let name = registry.type(named: entry.node) == nil ? registry.descriptor(named: entry.node)?.displayName : nil
            add("/select/plugin/name", [.string(name ?? entry.node)])
            add("/select/plugin/activate", [Self.flag(!entry.bypassed)])
            parameters = chain.parameters(of: plugin - 1, registry: registry)
        } else {
            add("/select/plugin/name", [.string(" ")])
            add("/select/plugin/activate", [.float(0)])
        }
        page = min(max(1, page), max(1, parameters.count))
        let size = settings.pluginPageSize > 0 ? settings.pluginPageSize : parameters.count
        let slots = Array(parameters.dropFirst(page - 1).prefix(size))
        for (i, p) in slots.enumerated() {
            add("/select/plugin/parameter/name", id: i + 1, [.string(p.definition.name)])
            add("/select/plugin/parameter", id: i + 1, [.float(Float(OSCFeedbackState.position(p)))])
        }
        let shownNow = max(slots.count, settings.pluginPageSize)
        if max(shown, shownNow) > slots.count {
            for id in (slots.count + 1)...max(shown, shownNow) {
                add("/select/plugin/parameter/name", id: id, [.string(" ")])
                add("/select/plugin/parameter", id: id, [.float(0)])
            }
        }
        return max(shown, shownNow)
    }

    /// A parameter's value as 0…1 along its travel (a note value: 0).
    static func position(_ p: Chain.ParameterState) -> Double {
        guard case .number(let v) = p.value else { return 0 }
        return OSCParameterLaw.position(p.definition, value: v)
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

    /// `HH:MM:SS.mmm`, Ardour's `/position/time`.
    static func time(_ frame: Int64, _ rate: Int) -> String {
        let ms = rate > 0 ? frame * 1000 / Int64(rate) : 0
        return "\(padded(Int(ms / 3_600_000), 2)):\(padded(Int(ms / 60_000 % 60), 2)):\(padded(Int(ms / 1000 % 60), 2)).\(padded(Int(ms % 1000), 3))"
    }
}
