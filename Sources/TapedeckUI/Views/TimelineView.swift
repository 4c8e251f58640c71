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
            // A map with changes: looked up through one table (its segments worked out once),
            // each change named after its bar number (`|5 100bpm 7/8`, a ramp `~60bpm`).
            let table = map.isConstant ? nil : TempoTable(map)
            for col in 0..<width {
                let at = frame(atColumn: col, model: model)
                let bar = table?.point(atFrame: Double(at)).bar ?? map.position(ofFrame: at).bar
                if bar != lastBar && col >= nextFree {
                    var label = "|\(bar)"
                    if let t = s.tempoChanges.first(where: { $0.bar == bar }) { label += " \(t.ramp ? "~" : "")\(TempoMap.bpmText(t.bpm))bpm" }
                    if let m = s.meterChanges.first(where: { $0.bar == bar }) { label += " \(m.signature)" }
                    nextFree = canvas.put(y, x + col, label, .ruler) - x + 1
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
            // Lost input stands out from the user's markers: `!` and the error colour.
            canvas.set(y + 1, x + c, m.isLostInput ? "!" : glyphs.marker, m.isLostInput ? .error : .marker)
            canvas.put(y + 1, x + c + 1, m.name, m.isLostInput ? .error : .marker, maxWidth: max(0, width - c - 1))
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

    /// Draws the lanes of the tracks shown (the same bands as the track list) from `y`: the
    /// waveform that plays in each column (the top layer where regions overlap), fade curves
    /// over their spans, the selected region highlighted, and the takes of shown lanes.
    public static func drawLanes(_ model: ScreenModel, into canvas: inout Canvas, y: Int, x: Int, rows: Int, width: Int, glyphs: Glyphs) {
        guard width > 0 else { return }
        let tracks = model.session.tracks
        let highlighted = model.focus == .timeline
        let bands = TrackBands.layout(model, top: y, rows: rows)
        for band in bands {
            let track = tracks[band.track]
            let audible = model.session.isAudible(trackIndex: band.track)
            switch band.kind {
            case .track where track.isBus:
                // A bus has no regions: its lane says what it is rather than look empty.
                let label = Fit.first(["bus: no regions, it plays what is sent or routed to it", "bus: no regions, it plays what is sent to it",
                                       "bus: plays what is sent to it", "bus: no regions", "bus"], in: width - 2)
                canvas.put(band.y, x + 1, label, .dim, maxWidth: max(0, width - 2))
                canvas.fill(band.y + 1, x, height: 1, width: width, glyphs.rule, .dim)
                if highlighted && band.track == model.selectedTrack { canvas.set(band.y, x, ">", .selected) }
            case .track:
                drawTrackLane(model, track: band.track, row: band.y, x: x, width: width, glyphs: glyphs, canvas: &canvas)
                for take in model.liveTakes(onTrack: band.track) {
                    drawLiveTake(take, model: model, row: band.y, x: x, width: width, glyphs: glyphs, canvas: &canvas)
                }
                if highlighted && band.track == model.selectedTrack { canvas.set(band.y, x, ">", .selected) }
            case .automation(let k):
                drawAutomationLane(model, track: band.track, lane: k, row: band.y, x: x, width: width, glyphs: glyphs, canvas: &canvas)
            case .take(let group, let number, let index):
                let active = track.activeTakeNumber(group: group) == number
                let region = track.regions[index]
                for col in 0..<width {
                    let from = frame(atColumn: col, model: model), to = from + model.framesPerColumn
                    guard region.timelineStartFrame < to && region.timelineEndFrame > from else { continue }
                    let ch: Character
                    if region.isMIDI {
                        ch = NoteRender.column(bands: noteBands(model, region, from: from, to: to, rows: 1), rows: 1, glyphs: glyphs)[0]
                    } else {
                        let a = model.peaks.amplitude(region: region, channel: 0, fromFrame: from, toFrame: to)
                        ch = WaveformRender.column(amplitude: a, rows: 1, glyphs: glyphs)[0]
                    }
                    canvas.set(band.y, x + col, ch == " " ? glyphs.rule : ch, active && audible ? .waveform : .waveformMuted)
                }
                if let c = column(of: max(region.timelineStartFrame, model.viewStartFrame), model: model, width: width) {
                    canvas.put(band.y, x + c, "\(active ? (glyphs == .ascii ? ">" : "▶") : " ")\(group).\(number)", active ? .marker : .dim,
                               maxWidth: max(0, width - c))
                }
            }
        }
        if let c = column(of: model.playheadFrame, model: model, width: width), let last = bands.last {
            for r in y..<(last.y + last.height) {
                let cell = canvas.cell(r, x + c)
                canvas.set(r, x + c, cell.character == " " ? glyphs.playhead : cell.character, .playhead)
            }
        }
    }

    /// One track's lane: per column, the waveform of what plays there (the top layer), faded
    /// as its envelope says; the fades' curves in the top row over their spans; the selected
    /// region in the selection style; the label of the take that plays.
    private static func drawTrackLane(_ model: ScreenModel, track t: Int, row: Int, x: Int, width: Int, glyphs: Glyphs,
                                      canvas: inout Canvas) {
        let track = model.session.tracks[t]
        let role: Role = model.session.isAudible(trackIndex: t) ? .waveform : .waveformMuted
        let playing = track.regions.indices.filter { track.isActive(track.regions[$0]) }
        // Looked up once per lane, not per column (a dictionary lookup by file name each).
        // (None for MIDI regions: they are drawn as notes, and have no waveform to look for.)
        let peakFiles = playing.map { track.regions[$0].isMIDI ? nil : model.peaks.peaks(forRegionFile: track.regions[$0].file) }
        let selected = t == model.selectedTrack ? model.selectedRegion : nil
        let rows = Layout.rowsPerTrack
        for col in 0..<width {
            let from = frame(atColumn: col, model: model)
            let to = from + model.framesPerColumn
            let middle = from + model.framesPerColumn / 2
            // The top layer at the column's middle is what is heard there; else any region in it.
            var top = -1, anyCovering = -1
            for k in playing.indices {
                let r = track.regions[playing[k]]
                guard r.timelineStartFrame < to && r.timelineEndFrame > from else { continue }
                anyCovering = k
                if r.timelineStartFrame <= middle && middle < r.timelineEndFrame { top = k }
            }
            if top < 0 { top = anyCovering }
            guard top >= 0 else { continue }
            let region = track.regions[playing[top]]
            if region.isMIDI {
                // MIDI: a compact note view, pitch bands in the rows, the region's lowest at the bottom.
                let bands = noteBands(model, region, from: from, to: to, rows: Layout.rowsPerTrack)
                let chars = NoteRender.column(bands: bands, rows: Layout.rowsPerTrack, glyphs: glyphs)
                for (i, ch) in chars.enumerated() {
                    canvas.set(row + i, x + col, ch == " " && i == Layout.rowsPerTrack - 1 ? glyphs.rule : ch,
                               playing[top] == selected ? .selected : (track.frozen != nil ? .waveformMuted : role))
                }
                continue
            }
            var amplitude: Float = 0
            if let p = peakFiles[top] {
                for c in 0..<max(1, track.inputChannels.count) {
                    amplitude = max(amplitude, PeakCache.amplitude(p, region: region, channel: c, fromFrame: from, toFrame: to))
                }
            }
            let position = min(max(0, middle - region.timelineStartFrame), region.lengthFrames - 1)
            let envelope = region.envelope(atPosition: position)
            let filled = WaveformRender.filledSteps(amplitude: amplitude * Float(envelope), rows: rows, glyphs: glyphs)
            let cellRole: Role = playing[top] == selected ? .selected : role
            for i in 0..<rows {
                canvas.set(row + i, x + col, WaveformRender.glyph(row: rows - 1 - i, filledSteps: filled, glyphs: glyphs), cellRole)
            }
            let inFade = (region.fadeInFrames > 0 && position < region.fadeInFrames)
                || (region.fadeOutFrames > 0 && position >= region.lengthFrames - region.fadeOutFrames)
            if inFade {
                // The curve itself: the envelope's height in the top row.
                let steps = glyphs.levels.count - 1
                let level = max(1, Int((envelope * Double(steps)).rounded()))
                canvas.set(row, x + col, glyphs.levels[min(steps, level)], .fade)
            }
        }
        // (The take heard is named in the track list, not over the waveform.)
    }

    /// An automation lane's row: per column the lane's value at its middle as a bar's height
    /// (levels from −60 to +6 dB, pan from left to right, a node's parameter over its range),
    /// a point where one falls in the column; dim where its mode is off.
    private static func drawAutomationLane(_ model: ScreenModel, track t: Int, lane k: Int, row: Int, x: Int, width: Int, glyphs: Glyphs,
                                           canvas: inout Canvas) {
        let track = model.session.tracks[t]
        // While a pass writes the lane, what it has written so far, in the armed colour.
        let lane = model.shownLane(t, k) ?? track.automation[k]
        let written = model.writtenRange(t, k)
        let selected = t == model.selectedTrack && model.selectedLane == k
        let role: Role = lane.mode == .off ? .dim : (selected ? .selected : .fade)
        let range: ClosedRange<Double>
        switch lane.parameter {
        case .gain, .send: range = -60...6
        case .pan: range = -1...1
        case .mute: range = 0...1
        case .node(let node, let id):
            let values = lane.points.map(\.value)
            range = model.parameterRange(t, node: node, id: id)
                ?? ((values.min() ?? 0)...max(values.max() ?? 1, (values.min() ?? 0) + 1e-9))
        }
        let steps = glyphs.levels.count - 1
        guard !lane.points.isEmpty else {
            canvas.put(row, x + 1, "no points: enter adds one at the playhead", .dim, maxWidth: max(0, width - 2))
            return
        }
        for col in 0..<width {
            let from = frame(atColumn: col, model: model), to = from + model.framesPerColumn
            let writing = written.map { $0.startFrame < to && from < $0.endFrame } ?? false
            let first = lane.insertionIndex(from)
            if first < lane.points.count && lane.points[first].frame < to {
                canvas.set(row, x + col, glyphs == .ascii ? "o" : "●", writing ? .armed : (selected ? .selected : .marker))
                continue
            }
            let v = lane.value(at: from + model.framesPerColumn / 2) ?? range.lowerBound
            let level = Fader.isSilent(v) && lane.parameter.isLevel ? 0
                : min(max((v - range.lowerBound) / max(range.upperBound - range.lowerBound, 1e-12), 0), 1)
            let ch = glyphs.levels[max(1, Int((level * Double(steps)).rounded()))]
            canvas.set(row, x + col, ch, writing ? .armed : role)
        }
    }

    /// The pitch bands (two per row) with a note sounding in `region` over timeline frames
    /// `[from, to)`.
    private static func noteBands(_ model: ScreenModel, _ region: Region, from: Int64, to: Int64, rows: Int) -> UInt64 {
        let shift = region.sourceOffsetFrame - region.timelineStartFrame
        return model.midiNotes.bands(region, from: from + shift, to: to + shift, slots: 2 * rows, sampleRate: model.session.sampleRate)
    }
}
