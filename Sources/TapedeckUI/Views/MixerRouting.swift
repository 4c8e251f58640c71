import TapedeckCore

/// The routing rows under the mixer's strips: a row per send (the bus, `*` for pre-fader, the
/// level; the selected strip's current send highlighted), a row with each strip's output when
/// it is not the master, and a row with each strip's delay compensation when it is not zero
/// (the Master strip: the output's total). Rows appear only when a strip on screen needs them,
/// so a session without routing keeps the whole height for its meters.
struct MixerRouting {
    /// Send rows (at most `room`, the last one saying how many more when a strip has more).
    let sendRows: Int
    /// Whether the output row is there.
    let showsOutput: Bool
    /// Whether the delay row is there.
    let showsDelay: Bool

    /// The rows needed for `strips` (track and bus indices on screen), within `room` rows.
    init(_ model: ScreenModel, strips: [Int], room: Int) {
        let tracks = model.session.tracks
        let delays = model.snapshot.stripOutputDelayFrames
        var room = max(0, room)
        let delay = model.snapshot.outputLatencyFrames > 0 || strips.contains { $0 < delays.count && delays[$0] > 0 }
        showsDelay = delay && room > 0
        if showsDelay { room -= 1 }
        let output = strips.contains { tracks.indices.contains($0) && tracks[$0].output != .master }
        showsOutput = output && room > 0
        if showsOutput { room -= 1 }
        sendRows = min(room, strips.map { tracks.indices.contains($0) ? tracks[$0].sends.count : 0 }.max() ?? 0)
    }

    /// Rows under the strips' footers.
    var rows: Int { sendRows + (showsOutput ? 1 : 0) + (showsDelay ? 1 : 0) }

    /// The scale column's names for the rows, from row `y`.
    func drawLabels(into canvas: inout Canvas, y: Int) {
        if sendRows > 0 { canvas.put(y, 0, "send", .label) }
        if showsOutput { canvas.put(y + sendRows, 0, "out", .label) }
        if showsDelay { canvas.put(y + sendRows + (showsOutput ? 1 : 0), 0, "dly", .label) }
    }

    /// Strip `strip`'s rows (nil: the Master strip) at column `x` from row `y`.
    func draw(_ model: ScreenModel, strip: Int?, x: Int, y: Int, selected: Bool, glyphs: Glyphs, canvas: inout Canvas) {
        let w = MixerView.stripWidth - 1
        let rate = model.session.sampleRate
        guard let t = strip, model.session.tracks.indices.contains(t) else {
            if showsDelay && model.snapshot.outputLatencyFrames > 0 {
                canvas.put(y + sendRows + (showsOutput ? 1 : 0), x, Fit.pad(MixerRouting.delayText(model.snapshot.outputLatencyFrames, rate: rate), w), .value)
            }
            return
        }
        let track = model.session.tracks[t]
        let current = selected ? model.currentSend(of: t) : nil
        for row in 0..<sendRows where row < track.sends.count {
            if row == sendRows - 1 && track.sends.count > sendRows {
                canvas.put(y + row, x, Fit.pad("+\(track.sends.count - row) more", w), .dim)
                break
            }
            canvas.put(y + row, x, MixerRouting.sendText(track.sends[row], width: w), row == current ? .selected : .value)
        }
        if showsOutput && track.output != .master {
            let arrow = glyphs == .ascii ? ">" : "→"
            let text: String
            if case .bus(let name) = track.output { text = arrow + name } else { text = arrow + track.output.description }
            canvas.put(y + sendRows, x, Fit.pad(text, w), .value)
        }
        let delays = model.snapshot.stripOutputDelayFrames
        if showsDelay, t < delays.count, delays[t] > 0 {
            canvas.put(y + sendRows + (showsOutput ? 1 : 0), x, Fit.pad(MixerRouting.delayText(delays[t], rate: rate), w), .value)
        }
    }

    /// A send in `width` columns: `*` first when pre-fader, the bus's name (shortened to
    /// what is left), the level (`-6.0`, `-inf`) at the right. A space parts name and level
    /// when there is room for it; else the level's sign does (`*Rev-12.5`).
    static func sendText(_ send: Send, width: Int) -> String {
        let level = Fader.text(send.levelDecibels)
        let mark = send.preFader ? "*" : ""
        let signed = level.hasPrefix("-") || level.hasPrefix("+")
        let spaced = send.bus.count <= width - mark.count - 1 - level.count || !signed
        let room = max(1, width - mark.count - (spaced ? 1 : 0) - level.count)
        return Fit.pad(mark + Fit.pad(abbreviated(send.bus, room), room) + (spaced ? " " : "") + level, width)
    }

    /// `name` in at most `width` characters, keeping what tells buses apart: spaces go
    /// first (`Bus 2` → `Bus2`), then a short last word stays whole (`Reverb A` → `RevA`).
    static func abbreviated(_ name: String, _ width: Int) -> String {
        guard name.count > width else { return name }
        let joined = name.split(separator: " ").joined()
        guard joined.count > width else { return joined }
        if let last = name.split(separator: " ").last, name.contains(" "), last.count <= 2, last.count < width {
            return String(joined.prefix(width - last.count)) + last
        }
        return String(joined.prefix(width))
    }

    /// `dly 2.7ms`: a delay in milliseconds, tenths below 10 ms.
    static func delayText(_ frames: Int, rate: Int) -> String {
        "dly " + milliseconds(frames, rate: rate)
    }

    /// `2.7ms`, `21ms`.
    static func milliseconds(_ frames: Int, rate: Int) -> String {
        let ms = Double(frames) * 1000 / Double(max(1, rate))
        if ms < 9.95 { return "\(Int((ms * 10).rounded()) / 10).\(Int((ms * 10).rounded()) % 10)ms" }
        return "\(Int(ms.rounded()))ms"
    }
}
