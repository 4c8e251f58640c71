import TapedeckCore

/// Draws a whole frame of the screen from the model into a canvas.
public enum ScreenRenderer {
    /// The frame for a `height` × `width` terminal.
    public static func render(_ model: ScreenModel, height: Int, width: Int, glyphs: Glyphs) -> Canvas {
        var canvas = Canvas(height: height, width: width)
        let layout = Layout(height: height, width: width)
        guard layout.fits else {
            drawTooSmall(into: &canvas, layout: layout)
            return canvas
        }
        model.timelineColumns = layout.timelineWidth
        TransportBarView.draw(model, into: &canvas, y: layout.transportRow, glyphs: glyphs)

        let chainOpen = model.focus == .chain
        let rows = layout.trackRows(chainPanel: chainOpen)
        TimelineView.drawRuler(model, into: &canvas, y: layout.rulerRow, x: layout.timelineLeft, width: layout.timelineWidth, glyphs: glyphs)
        if model.showsMixer {
            canvas.put(layout.rulerRow, 0, Fit.pad(" [Mixer]", layout.trackListWidth), .title)
            MixerView.draw(model, into: &canvas, y: layout.rulerRow + 1, rows: rows + 1, glyphs: glyphs)
        } else {
            let header = model.focus == .tracks ? "[Tracks]" : " Tracks "
            canvas.put(layout.rulerRow, 0, Fit.pad(" \(header)", layout.trackListWidth), model.focus == .tracks ? .title : .label)
            canvas.put(layout.rulerRow + 1, 0, String(repeating: glyphs.rule, count: layout.trackListWidth), .ruler)
            TrackListView.draw(model, into: &canvas, y: layout.tracksTop, rows: rows, width: layout.trackListWidth, glyphs: glyphs)
            for r in layout.rulerRow..<(layout.tracksTop + rows) {
                canvas.set(r, layout.trackListWidth, glyphs == .ascii ? "|" : "│", model.focus == .timeline ? .title : .ruler)
            }
            TimelineView.drawLanes(model, into: &canvas, y: layout.tracksTop, x: layout.timelineLeft, rows: rows, width: layout.timelineWidth, glyphs: glyphs)
        }
        if chainOpen {
            ChainPanelView.draw(model, into: &canvas, y: layout.tracksTop + rows, rows: layout.chainPanelRows, glyphs: glyphs)
        }
        drawStatus(model, into: &canvas, layout: layout)
        drawMessage(model, into: &canvas, layout: layout)
        if model.overlay != nil { DialogView.draw(model, into: &canvas, glyphs: glyphs) }
        return canvas
    }

    private static func drawStatus(_ model: ScreenModel, into canvas: inout Canvas, layout: Layout) {
        let s = model.session
        let zoom = Double(model.framesPerColumn) / Double(s.sampleRate)
        let zoomText = zoom >= 1 ? "\(Int(zoom.rounded())) s/col" : "\(Int((zoom * 1000).rounded())) ms/col"
        let keys = "\(model.keyName(.help)) help  \(model.keyName(.play)) play  \(model.keyName(.record)) rec  \(model.keyName(.nextPanel)) panel  \(model.keyName(.quit)) quit"
        let left: String
        if model.showsLoudness {
            left = " " + loudnessText(model.snapshot.loudness)
            canvas.put(layout.statusRow, 0, left, .value)
        } else {
            let buses = s.tracks.filter(\.isBus).count
            let strips = "\(s.tracks.count - buses) tracks" + (buses == 0 ? "" : " \(buses) bus\(buses == 1 ? "" : "es")")
            left = " \(strips)  zoom \(zoomText)  snap \(model.snap.rawValue)  focus \(model.focus.rawValue)"
            canvas.put(layout.statusRow, 0, left, .dim)
        }
        if left.count + keys.count + 2 < canvas.width {
            canvas.put(layout.statusRow, canvas.width - keys.count - 1, keys, .dim)
        }
    }

    /// `master M -18.2 S -19.0 I -20.1 LUFS TP -1.2 dBTP`: momentary, short-term,
    /// integrated loudness and true peak of the master bus.
    public static func loudnessText(_ reading: LoudnessReading?) -> String {
        guard let r = reading else { return "master loudness: not measured (the engine measures it while audio plays)" }
        return "master M \(Decibels.text(r.momentaryLUFS))  S \(Decibels.text(r.shortTermLUFS))  I \(Decibels.text(r.integratedLUFS)) LUFS  TP \(Decibels.text(r.truePeakDecibels)) dBTP"
    }

    private static func drawMessage(_ model: ScreenModel, into canvas: inout Canvas, layout: Layout) {
        let stretch = model.snapshot.graphStretchProgress.map { Int($0 * 100) }
        if let m = model.message {
            // A graph still being built is named in brackets before a message that is not an
            // error, so a handed-over edit's own 6 s line never hides the stretch it started.
            let building = model.snapshot.graphPending && !m.isError
                ? "[" + (stretch.map { "stretching a region \($0)%" } ?? "preparing playback") + "] " : ""
            canvas.put(layout.messageRow, 0, Fit.pad(" " + building + m.text, canvas.width), m.isError ? .error : .message)
        } else if let line = model.jobLine {
            // Work beside the screen (an import): its progress, between messages.
            canvas.put(layout.messageRow, 0, Fit.pad(" " + line, canvas.width), .notice)
        } else if model.snapshot.graphPending {
            let stretching = stretch.map { ": stretching a region \($0)%" } ?? " (opening files, loading plugins, stretching regions)"
            canvas.put(layout.messageRow, 0, Fit.pad(" preparing the edit for playback\(stretching)…", canvas.width), .notice)
        } else if model.snapshot.isOffline {
            canvas.put(layout.messageRow, 0, " No audio device: offline. Playback is silent; recording needs a device.", .notice)
        }
    }

    private static func drawTooSmall(into canvas: inout Canvas, layout: Layout) {
        let lines = ["Terminal too small",
                     "\(layout.width)x\(layout.height), need \(Layout.minimumWidth)x\(Layout.minimumHeight)",
                     "Enlarge the window (q quits)"]
        let top = max(0, (layout.height - lines.count) / 2)
        for (i, line) in lines.enumerated() {
            let text = String(line.prefix(layout.width))
            canvas.put(top + i, max(0, (layout.width - text.count) / 2), text, i == 0 ? .notice : .normal)
        }
    }
}
