import TapedeckCore

/// The timeline: a ruler (bars or time), loop/punch ranges and markers, and one lane per
/// track with its regions' waveforms and the playhead.
public enum TimelineView {
    /// The frame at the left edge of column `col`.
    static func frame(atColumn col: Int, model: ScreenModel) -> Int64 {
        model.viewStartFrame + Int64(col) * model.framesPerColumn
    }

    /// The column of `frame`, or nil when it is off screen.
    static func column(of frame: Int64, model: ScreenModel, width: Int) -> Int? {
        guard frame >= model.viewStartFrame else { return nil }
        let c = Int((frame - model.viewStartFrame) / max(1, model.framesPerColumn))
        return c < width ? c : nil
    }

    /// Draws the two ruler rows at `y`, `x`, `width` columns.
    public static func drawRuler(_ model: ScreenModel, into canvas: inout Canvas, y: Int, x: Int, width: Int, glyphs: Glyphs) {
        guard width > 0 else { return }
        let s = model.session
        let map = s.tempoMap
        canvas.fill(y, x, height: 1, width: width, " ", .ruler)
        canvas.fill(y + 1, x, height: 1, width: width, glyphs.rule, .ruler)
        var nextFree = 0
        if model.rulerInBars {
            var lastBar = -1
            for col in 0..<width {
                let bar = map.position(ofFrame: frame(atColumn: col, model: model)).bar
                if bar != lastBar && col >= nextFree {
                    nextFree = canvas.put(y, x + col, "|\(bar)", .ruler) - x + 1
                }
                lastBar = bar
            }
        } else {
            let secondsPerColumn = Double(model.framesPerColumn) / Double(s.sampleRate)
            let step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600].first { Double($0) / secondsPerColumn >= 10 } ?? 3600
            var lastTick = -1
            for col in 0..<width {
                let second = Int(frame(atColumn: col, model: model) / Int64(s.sampleRate))
                let tick = second / step
                if tick != lastTick && col >= nextFree {
                    let t = tick * step
                    nextFree = canvas.put(y, x + col, "|\(t / 60):\(t % 60 < 10 ? "0" : "")\(t % 60)", .ruler) - x + 1
                }
                lastTick = tick
            }
        }
        drawRange(s.loopRange, enabled: s.loopEnabled, role: .loop, model: model, canvas: &canvas, y: y + 1, x: x, width: width, glyph: glyphs.loopBar)
        drawRange(s.punchRange, enabled: s.punchEnabled, role: .punch, model: model, canvas: &canvas, y: y + 1, x: x, width: width, glyph: glyphs.loopBar)
        for m in s.markers {
            guard let c = column(of: m.frame, model: model, width: width) else { continue }
            canvas.set(y + 1, x + c, glyphs.marker, .marker)
            canvas.put(y + 1, x + c + 1, m.name, .marker, maxWidth: max(0, width - c - 1))
        }
        if let c = column(of: model.playheadFrame, model: model, width: width) {
            canvas.set(y + 1, x + c, glyphs.playhead, .playhead)
        }
    }

    private static func drawRange(_ range: FrameRange?, enabled: Bool, role: Role, model: ScreenModel,
                                  canvas: inout Canvas, y: Int, x: Int, width: Int, glyph: Character) {
        guard let r = range else { return }
        for col in 0..<width {
            let f = frame(atColumn: col, model: model)
            if f + model.framesPerColumn > r.startFrame && f < r.endFrame {
                canvas.set(y, x + col, enabled ? glyph : "-", enabled ? role : .dim)
            }
        }
        if let c = column(of: r.startFrame, model: model, width: width) { canvas.set(y, x + c, "[", role) }
        if let c = column(of: max(r.startFrame, r.endFrame - 1), model: model, width: width) { canvas.set(y, x + c, "]", role) }
    }

    /// Draws the lanes of the tracks shown (the same ones as the track list) from `y`.
    public static func drawLanes(_ model: ScreenModel, into canvas: inout Canvas, y: Int, x: Int, rows: Int, width: Int, glyphs: Glyphs) {
        guard width > 0 else { return }
        let tracks = model.session.tracks
        let visible = rows / Layout.rowsPerTrack
        let first = TrackListView.firstVisible(selected: model.selectedTrack, visible: visible, count: tracks.count)
        let highlighted = model.focus == .timeline
        for slot in 0..<visible {
            let t = first + slot
            guard t < tracks.count else { break }
            let track = tracks[t]
            let row = y + slot * Layout.rowsPerTrack
            let role: Role = model.session.isAudible(trackIndex: t) ? .waveform : .waveformMuted
            for col in 0..<width {
                let from = frame(atColumn: col, model: model)
                let to = from + model.framesPerColumn
                var amplitude: Float = 0
                var inRegion = false
                // Of a stack of takes only the one that plays is drawn.
                for region in track.activeRegions where region.timelineStartFrame < to && region.timelineEndFrame > from {
                    inRegion = true
                    for c in 0..<max(1, track.inputChannels.count) {
                        amplitude = max(amplitude, model.peaks.amplitude(region: region, channel: c, fromFrame: from, toFrame: to))
                    }
                }
                guard inRegion else { continue }
                let chars = WaveformRender.column(amplitude: amplitude, rows: Layout.rowsPerTrack, glyphs: glyphs)
                for (i, ch) in chars.enumerated() { canvas.set(row + i, x + col, ch, role) }
            }
            for region in track.activeRegions {
                guard let label = ScreenModel.takeLabel(region, on: track) else { continue }
                let start = max(region.timelineStartFrame, model.viewStartFrame)
                guard start < region.timelineEndFrame, let c = column(of: start, model: model, width: width) else { continue }
                canvas.put(row, x + c, label, .marker, maxWidth: max(0, width - c))
            }
            if highlighted && t == model.selectedTrack {
                canvas.set(row, x, ">", .selected)
            }
        }
        if let c = column(of: model.playheadFrame, model: model, width: width) {
            for r in 0..<(min(visible, tracks.count - first) * Layout.rowsPerTrack) {
                let cell = canvas.cell(y + r, x + c)
                canvas.set(y + r, x + c, cell.character == " " ? glyphs.playhead : cell.character, .playhead)
            }
        }
    }
}
