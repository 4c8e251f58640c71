import Foundation
import TapedeckTransport
import TapedeckCore
import TapedeckDSP

/// The two transport rows: state, position, tempo, speed, loop/punch, engine health.
public enum TransportBarView {
    /// `h:mm:ss.mmm` of a frame position.
    public static func clockText(_ frame: Int64, sampleRate: Int) -> String {
        let ms = max(0, frame) * 1000 / Int64(max(1, sampleRate))
        let h = ms / 3_600_000, m = (ms / 60_000) % 60, s = (ms / 1000) % 60, milli = ms % 1000
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let three = milli < 10 ? "00\(milli)" : milli < 100 ? "0\(milli)" : "\(milli)"
        return "\(h):\(two(m)):\(two(s)).\(three)"
    }

    /// `1.00x` style speed.
    public static func speedText(_ speed: Double) -> String { TimePitchSettings.speedText(speed) }

    /// Seconds left as `160h`, `1h23m`, `12m05s` or `40s`: past ten hours in hours only, so a
    /// disk that others write to does not redraw the screen every minute of its change.
    public static func durationText(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        let s = Int(min(seconds, 1e9))
        if s >= 36000 { return "\(s / 3600)h" }
        if s >= 3600 { return "\(s / 3600)h\(s % 3600 / 60 < 10 ? "0" : "")\(s % 3600 / 60)m" }
        if s >= 60 { return "\(s / 60)m\(s % 60 < 10 ? "0" : "")\(s % 60)s" }
        return "\(s)s"
    }

    /// The state word with its symbol, and its role.
    public static func stateText(_ state: TransportState, glyphs: Glyphs) -> (String, Role) {
        switch state {
        case .stopped: (glyphs == .ascii ? "[] STOPPED" : "■ STOPPED", .stopped)
        case .playing: (glyphs == .ascii ? "> PLAYING" : "▶ PLAYING", .playing)
        case .countIn: ("COUNT-IN", .notice)
        case .preRoll: ("PRE-ROLL", .notice)
        case .recording: ("\(glyphs.recordDot) REC", .recording)
        }
    }

    /// Draws rows `y` and `y+1`.
    public static func draw(_ model: ScreenModel, into canvas: inout Canvas, y: Int, glyphs: Glyphs) {
        let s = model.session, snap = model.snapshot
        let (word, role) = stateText(snap.state, glyphs: glyphs)
        // The tempo and meter where the playhead is (the map's, with changes).
        let map = s.tempoMap
        // "…" while the stretcher is being built (heard at 1× until then).
        let pending = snap.timePitchPending ? "…" : ""
        var fields: [(text: String, role: Role, gap: Int)] = [
            (" \(word) ", role, 0),
            (clockText(snap.positionFrame, sampleRate: s.sampleRate), .value, 1),
            (map.barsBeatsTicks(ofFrame: snap.positionFrame), .value, 2),
            ("\(tempoText(map.tempo(atFrame: snap.positionFrame))) BPM", .label, 2),
            (map.signature(atFrame: snap.positionFrame).description, .label, 2),
            ("\(speedText(model.speed)) \(model.mode == .varispeed ? "vari" : "stretch")\(pending)", model.speed == 1 ? .label : .notice, 2),
        ]
        if model.pitchSemitones != 0 {
            fields.append(("pitch \(model.pitchSemitones > 0 ? "+" : "")\(model.pitchSemitones)", .notice, 1))
        }
        let switches: [(text: String, role: Role, on: Bool)] = [
            ("LOOP \(s.loopEnabled ? "on" : "off")", s.loopEnabled ? .loop : .dim, s.loopEnabled),
            ("PUNCH \(s.punchEnabled ? "on" : "off")", s.punchEnabled ? .punch : .dim, s.punchEnabled),
            (clickText(model.clickMode), model.clickMode == .off ? .dim : .notice, model.clickMode != .off),
            ("COUNT \(model.countInBars)", model.countInBars == 0 ? .dim : .label, model.countInBars != 0),
        ]
        // Every field whole or not at all (an 80-column terminal cut "PUNCH o"): the switches
        // that are off go first, then fields from the right.
        func width(_ f: [(text: String, role: Role, gap: Int)]) -> Int { f.reduce(0) { $0 + $1.gap + $1.text.count } }
        var row = fields + switches.map { ($0.text, $0.role, 2) }
        if width(row) > canvas.width { row = fields + switches.filter(\.on).map { ($0.text, $0.role, 2) } }
        while row.count > 1 && width(row) > canvas.width { row.removeLast() }
        var x = 0
        for f in row { x = canvas.put(y, x + f.gap, f.text, f.role) }

        // Second row: the session name is placed first (it must never fall off a narrow
        // terminal), then the device gets what room is left.
        let row2 = y + 1
        var device = snap.deviceName
        if snap.isOffline && !device.contains("offline") { device += " (offline)" }
        let xruns = "xruns \(snap.xrunCount)"
        // Below 5 % the reading is the machine's noise: shown as such, it does not redraw the
        // screen every time a period takes a little longer. Up to 99 % it keeps one width, so
        // the fields after it stand still as it moves.
        let dspPercent = Int((snap.dspLoad * 100).rounded())
        let dsp = dspPercent < 5 ? "DSP <5%" : dspPercent < 10 ? "DSP  \(dspPercent)%" : "DSP \(dspPercent)%"
        let listening = snap.isListening ? "LISTENING" : ""
        let disk = snap.diskSecondsLeft.map { "disk \(durationText($0)) left" } ?? "disk ?"
        // The delay compensation the routing needs (a latent chain on a bus or the master):
        // what the output lags the timeline. Shown only when there is some.
        let latency = snap.outputLatencyFrames > 0 ? "latency " + MixerRouting.milliseconds(snap.outputLatencyFrames, rate: s.sampleRate) : ""
        // The round trip an overdub is placed with now (it follows JACK's connections and
        // buffer size), on a device that records.
        let roundTrip = snap.isOffline ? "" : snap.roundTrip.map { "rt " + MixerRouting.milliseconds(Int($0.totalFrames), rate: s.sampleRate) } ?? ""
        let name = (model.folder.map { lastComponent($0.path) } ?? "untitled") + (model.document.isDirty ? " *" : "")
        let fixed = [xruns, dsp, listening, disk, latency, roundTrip].filter { !$0.isEmpty }.reduce(0) { $0 + $1.count + 2 }
        let nameWidth = min(name.count, max(8, canvas.width / 3))
        let deviceRoom = max(6, min(26, canvas.width - 1 - "device ".count - fixed - nameWidth - 3))
        x = canvas.put(row2, 1, "device ", .label)
        x = canvas.put(row2, x, wordsFitting(device, width: deviceRoom), snap.isOffline ? .notice : .value)
        x = canvas.put(row2, x + 2, xruns, snap.xrunCount > 0 ? .error : .label)
        x = canvas.put(row2, x + 2, dsp, snap.dspLoad > 0.8 ? .error : .label)
        if !listening.isEmpty { x = canvas.put(row2, x + 2, listening, .notice) }
        x = canvas.put(row2, x + 2, disk, (snap.diskSecondsLeft ?? 3600) < 600 ? .error : .label)
        if !latency.isEmpty { x = canvas.put(row2, x + 2, latency, .label) }
        if !roundTrip.isEmpty { x = canvas.put(row2, x + 2, roundTrip, .label) }
        canvas.put(row2, max(x + 2, canvas.width - 1 - nameWidth), Fit.shortened(name, nameWidth), .title)
    }

    /// `CLICK off`, `CLICK rec`, `CLICK on`.
    public static func clickText(_ mode: ClickMode) -> String {
        switch mode {
        case .off: "CLICK off"
        case .recording: "CLICK rec"
        case .always: "CLICK on"
        }
    }

    /// `text` cut at a word's end to fit `width`, with "…" when cut ("offline (no audio de"
    /// read as a typo).
    static func wordsFitting(_ text: String, width: Int) -> String {
        guard text.count > width, width > 1 else { return String(text.prefix(max(0, width))) }
        let room = String(text.prefix(width - 1))
        let cut = room.lastIndex(of: " ").map { String(room[..<$0]) } ?? room
        return cut.trimmingCharacters(in: CharacterSet(charactersIn: " ,(-")) + "…"
    }

    static func tempoText(_ bpm: Double) -> String {
        let tenths = Int((bpm * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
