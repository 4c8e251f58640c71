import TapedeckTransport
import TapedeckCore

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
    public static func speedText(_ speed: Double) -> String {
        let hundredths = Int((speed * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)x"
    }

    /// Seconds left as `1h23m`, `12m05s` or `40s`.
    public static func durationText(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        let s = Int(min(seconds, 1e9))
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
        var x = canvas.put(y, 0, " \(word) ", role)
        x = canvas.put(y, x + 1, clockText(snap.positionFrame, sampleRate: s.sampleRate), .value)
        x = canvas.put(y, x + 2, s.tempoMap.barsBeatsTicks(ofFrame: snap.positionFrame), .value)
        // The tempo and meter where the playhead is (the map's, with changes).
        let map = s.tempoMap
        x = canvas.put(y, x + 2, "\(tempoText(map.tempo(atFrame: snap.positionFrame))) BPM", .label)
        x = canvas.put(y, x + 2, map.signature(atFrame: snap.positionFrame).description, .label)
        // Compact, so the click and count-in fit a 100-column bar.
        // "…" while the stretcher is being built (heard at 1× until then).
        let pending = snap.timePitchPending ? "…" : ""
        x = canvas.put(y, x + 2, "\(speedText(model.speed)) \(model.mode == .varispeed ? "vari" : "stretch")\(pending)",
                       model.speed == 1 ? .label : .notice)
        if model.pitchSemitones != 0 {
            x = canvas.put(y, x + 1, "pitch \(model.pitchSemitones > 0 ? "+" : "")\(model.pitchSemitones)", .notice)
        }
        x = canvas.put(y, x + 2, "LOOP \(s.loopEnabled ? "on" : "off")", s.loopEnabled ? .loop : .dim)
        x = canvas.put(y, x + 2, "PUNCH \(s.punchEnabled ? "on" : "off")", s.punchEnabled ? .punch : .dim)
        x = canvas.put(y, x + 2, clickText(model.clickMode), model.clickMode == .off ? .dim : .notice)
        canvas.put(y, x + 2, "COUNT \(model.countInBars)", model.countInBars == 0 ? .dim : .label)

        // Second row: the session name is placed first (it must never fall off a narrow
        // terminal), then the device gets what room is left.
        let row = y + 1
        var device = snap.deviceName
        if snap.isOffline && !device.contains("offline") { device += " (offline)" }
        let xruns = "xruns \(snap.xrunCount)"
        let dsp = "DSP \(Int((snap.dspLoad * 100).rounded()))%"
        let listening = snap.isListening ? "LISTENING" : ""
        let disk = snap.diskSecondsLeft.map { "disk \(durationText($0)) left" } ?? "disk ?"
        // The delay compensation the routing needs (a latent chain on a bus or the master):
        // what the output lags the timeline. Shown only when there is some.
        let latency = snap.outputLatencyFrames > 0 ? "latency " + MixerRouting.milliseconds(snap.outputLatencyFrames, rate: s.sampleRate) : ""
        let name = (model.folder.map { lastComponent($0.path) } ?? "untitled") + (model.document.isDirty ? " *" : "")
        let fixed = [xruns, dsp, listening, disk, latency].filter { !$0.isEmpty }.reduce(0) { $0 + $1.count + 2 }
        let nameWidth = min(name.count, max(8, canvas.width / 3))
        let deviceRoom = max(6, min(26, canvas.width - 1 - "device ".count - fixed - nameWidth - 3))
        x = canvas.put(row, 1, "device ", .label)
        x = canvas.put(row, x, device, snap.isOffline ? .notice : .value, maxWidth: deviceRoom)
        x = canvas.put(row, x + 2, xruns, snap.xrunCount > 0 ? .error : .label)
        x = canvas.put(row, x + 2, dsp, snap.dspLoad > 0.8 ? .error : .label)
        if !listening.isEmpty { x = canvas.put(row, x + 2, listening, .notice) }
        x = canvas.put(row, x + 2, disk, (snap.diskSecondsLeft ?? 3600) < 600 ? .error : .label)
        if !latency.isEmpty { x = canvas.put(row, x + 2, latency, .label) }
        canvas.put(row, max(x + 2, canvas.width - 1 - nameWidth), name, .title, maxWidth: nameWidth)
    }

    /// `CLICK off`, `CLICK rec`, `CLICK on`.
    public static func clickText(_ mode: ClickMode) -> String {
        switch mode {
        case .off: "CLICK off"
        case .recording: "CLICK rec"
        case .always: "CLICK on"
        }
    }

    static func tempoText(_ bpm: Double) -> String {
        let tenths = Int((bpm * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
