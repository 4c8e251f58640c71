import TapedeckCore

/// The track list: number, name, arm/mute/solo, inputs, gain, pan, chain summary, meters.
public enum TrackListView {
    /// The first track shown when `visible` tracks fit and `selected` must be among them.
    public static func firstVisible(selected: Int, visible: Int, count: Int) -> Int {
        guard visible > 0, count > visible else { return 0 }
        return min(max(0, selected - visible + 1), count - visible)
    }

    /// `L30`, `C`, `R100` for a pan of −1…1.
    public static func panText(_ pan: Double) -> String {
        let p = Int((pan * 100).rounded())
        return p == 0 ? "C" : p < 0 ? "L\(-p)" : "R\(p)"
    }

    /// `in 1`, `in 1-2`, `in 1,3`.
    public static func inputText(_ channels: [Int]) -> String {
        if channels.isEmpty { return "in -" }
        if channels.count > 1, channels == Array(channels[0]...max(channels[0], channels[channels.count - 1])) {
            return "in \(channels[0])-\(channels[channels.count - 1])"
        }
        return "in " + channels.map(String.init).joined(separator: ",")
    }

    /// The node names of a chain, `-` when empty; bypassed nodes in parentheses.
    public static func chainSummary(_ text: String) -> String {
        let nodes = ChainText(text).nodes
        if nodes.isEmpty { return "-" }
        return nodes.map { $0.bypassed ? "(\($0.name))" : $0.name }.joined(separator: ">")
    }

    /// The monitoring column: `I` input, `A` auto, `-` off.
    public static func monitoringLetter(_ mode: MonitoringMode) -> String {
        switch mode {
        case .off: "-"
        case .input: "I"
        case .auto: "A"
        }
    }

    /// Draws the list in `rows` rows from `y`, `width` columns from the left edge.
    public static func draw(_ model: ScreenModel, into canvas: inout Canvas, y: Int, rows: Int, width: Int, glyphs: Glyphs) {
        let tracks = model.session.tracks
        let visible = rows / Layout.rowsPerTrack
        if tracks.isEmpty {
            canvas.put(y, 1, "No tracks: \(model.keyName(.newTrack)) adds one, \(model.keyName(.importFile)) imports a file.", .dim, maxWidth: width - 1)
            return
        }
        let first = firstVisible(selected: model.selectedTrack, visible: visible, count: tracks.count)
        for slot in 0..<visible {
            let t = first + slot
            guard t < tracks.count else { break }
            let track = tracks[t]
            let row = y + slot * Layout.rowsPerTrack
            let selected = t == model.selectedTrack
            if selected { canvas.fill(row, 0, height: 1, width: width, " ", .selected) }
            var x = canvas.put(row, 0, Fit.right("\(t + 1)", 2) + " ", selected ? .selected : .label)
            x = canvas.put(row, x, Fit.pad(track.name, 12), selected ? .selected : .trackName)
            x = canvas.put(row, x + 1, track.armed ? "R" : "-", track.armed ? .armed : .dim)
            x = canvas.put(row, x + 1, track.mute ? "M" : "-", track.mute ? .muted : .dim)
            x = canvas.put(row, x + 1, track.solo ? "S" : "-", track.solo ? .solo : .dim)
            x = canvas.put(row, x + 1, monitoringLetter(track.monitoring), track.monitoring == .off ? .dim : .label)
            x = canvas.put(row, x + 2, Fit.pad(inputText(track.inputChannels), 7), .label)
            x = canvas.put(row, x, Fit.right(Decibels.text(track.gainDecibels), 5) + "dB", .value)
            x = canvas.put(row, x + 1, Fit.pad(panText(track.pan), 4), .value)
            canvas.put(row, x + 1, chainSummary(track.playbackChain), .dim, maxWidth: max(0, width - x - 1))

            // Second row: one meter per channel, then the loudest peak in dBFS.
            let meterRow = row + 1
            let readings = t < model.meters.count ? model.meters[t] : []
            let channels = max(1, readings.count)
            let numberWidth = 6
            let meterSpace = max(4, width - 3 - numberWidth)
            let each = max(2, (meterSpace - (channels - 1)) / channels)
            for c in 0..<channels {
                MeterRender.draw(into: &canvas, y: meterRow, x: 3 + c * (each + 1), width: each,
                                 meter: c < readings.count ? readings[c] : MeterReading(), glyphs: glyphs)
            }
            let loudest = readings.map(\.peakDecibels).max() ?? -.infinity
            canvas.put(meterRow, width - numberWidth, Fit.right(Decibels.text(loudest), numberWidth - 1),
                       loudest >= MeterRender.clipDecibels ? .clip : .label)
        }
    }
}
