import TapedeckCore

/// The mixer view: one vertical strip per track and bus and one for the master — name, input
/// (a bus: its width), chain, M/S/R and monitoring (a bus: M/S and solo-safe), pan, a fader
/// beside a meter per channel on a dB scale with peak hold and a clip light, the fader's and
/// the hold's values, then under the strips their routing (``MixerRouting``): sends, an output
/// other than the master, delay compensation.
public enum MixerView {
    /// Columns of one strip, the gap included.
    static let stripWidth = 10
    /// Columns of the dB scale at the left.
    static let scaleWidth = 5
    /// Rows above the fader and meters (name, input, chain, buttons, pan, clip lights) and
    /// below them (the fader value, the hold or CLIP).
    static let headerRows = 6, footerRows = 2
    /// Marks on the scale, dB.
    static let scaleMarks: [Double] = [12, 6, 0, -6, -12, -18, -24, -36, -48, -60]
    /// The bottom of the scale; below it is −∞.
    static let floorDecibels = -60.0

    /// Where `decibels` sits on the strip's one scale, 0 (−60 dB or below) … 1 (+12 dB). The
    /// fader and the meters share it, so a fader at −6 and a meter reading −6 dBFS line up
    /// with the −6 mark, and a meter above 0 shows by how much the channel is over.
    static func fraction(_ decibels: Double) -> Double {
        guard decibels.isFinite, !Fader.isSilent(decibels) else { return decibels > 0 ? 1 : 0 }
        return min(1, max(0, (decibels - floorDecibels) / (Fader.maximumDecibels - floorDecibels)))
    }

    /// Which scale marks keep their row when two share one: 0 dB first, then the scale's ends.
    static func markPriority(_ mark: Double) -> Int {
        mark == 0 ? 0 : mark == floorDecibels ? 1 : mark == scaleMarks[0] ? 2 : 3 + (scaleMarks.firstIndex(of: mark) ?? 0)
    }

    /// The row offset from the bottom of `decibels` on a scale `rows` high.
    static func level(_ decibels: Double, rows: Int) -> Int { Int((fraction(decibels) * Double(rows - 1)).rounded()) }

    /// Draws the mixer in `rows` rows from `y`, full width.
    public static func draw(_ model: ScreenModel, into canvas: inout Canvas, y: Int, rows: Int, glyphs: Glyphs) {
        canvas.fill(y, 0, height: rows, width: canvas.width, " ", .normal)
        let strips = model.session.tracks.count + 1
        let visible = max(1, (canvas.width - scaleWidth) / stripWidth)
        let selected = model.masterStripSelected ? strips - 1 : min(model.selectedTrack, strips - 1)
        let first = max(0, min(selected - visible + 1, strips - visible))
        let shown = Array(first..<min(strips, first + visible))
        // The routing rows take what the meters can spare (they keep at least four rows).
        let routing = MixerRouting(model, strips: shown.filter { $0 < strips - 1 }, room: rows - headerRows - footerRows - 4)
        let meterRows = rows - headerRows - footerRows - routing.rows
        guard meterRows >= 3 else {
            canvas.put(y, 1, "the mixer needs a taller terminal (\(model.keyName(.mixer)) closes it)", .notice)
            return
        }
        let meterTop = y + headerRows
        // Two marks can fall on one row of a short mixer (at 80×24, −6 took 0's row): 0 dB
        // wins, then the ends, then the rest from the top; a mark whose row is taken is left out.
        var taken = Set<Int>()
        for mark in scaleMarks.sorted(by: { markPriority($0) < markPriority($1) }) {
            let r = meterTop + meterRows - 1 - level(mark, rows: meterRows)
            guard taken.insert(r).inserted else { continue }
            canvas.put(r, 0, Fit.right(mark > 0 ? "+\(Int(mark))" : "\(Int(mark))", scaleWidth - 1), mark == 0 ? .label : .ruler)
        }
        routing.drawLabels(into: &canvas, y: meterTop + meterRows + footerRows)
        for (slot, i) in shown.enumerated() {
            let x = scaleWidth + slot * stripWidth
            routing.draw(model, strip: i == strips - 1 ? nil : i, x: x, y: meterTop + meterRows + footerRows, selected: i == selected,
                         glyphs: glyphs, canvas: &canvas)
            if i == strips - 1 {
                drawMaster(model, x: x, y: y, meterTop: meterTop, meterRows: meterRows, selected: i == selected, glyphs: glyphs, canvas: &canvas)
            } else {
                drawTrack(model, i, x: x, y: y, meterTop: meterTop, meterRows: meterRows, selected: i == selected, glyphs: glyphs, canvas: &canvas)
            }
        }
    }

    private static func drawTrack(_ model: ScreenModel, _ t: Int, x: Int, y: Int, meterTop: Int, meterRows: Int, selected: Bool,
                                  glyphs: Glyphs, canvas: inout Canvas) {
        let track = model.session.tracks[t]
        let w = stripWidth - 1
        // Every field whole: the name shortened with "…", the chain by whole nodes.
        canvas.put(y, x, Fit.pad(Fit.shortened(track.name, w), w), selected ? .selected : (track.isBus ? .title : .trackName))
        // A bus has no input, arm or monitoring: its width and solo-safe stand there.
        let input = track.isBus ? TrackListView.busLabel(track) : InputChannels.text(track.inputChannels)
        canvas.put(y + 1, x, Fit.pad(Fit.shortened(input, w), w), track.isBus ? .title : .label)
        canvas.put(y + 2, x, Fit.pad(Fit.chain(TrackListView.chainSummary(model.chain(t)), w), w), .dim)
        var bx = canvas.put(y + 3, x, track.mute ? "M" : "m", track.mute ? .muted : .dim)
        bx = canvas.put(y + 3, bx + 1, track.solo ? "S" : "s", track.solo ? .solo : .dim)
        if track.isBus {
            if track.isSoloSafe { canvas.put(y + 3, bx + 1, "safe", .solo) }
        } else {
            bx = canvas.put(y + 3, bx + 1, track.armed ? "R" : "r", track.armed ? .armed : .dim)
            canvas.put(y + 3, bx + 1, TrackListView.monitoringLetter(track.monitoring), .label)
        }
        // Where a lane moves the fader or pan, the strip shows the lane's value (as the track list).
        let pan = model.heardValue(t, .pan, own: track.pan), gain = model.heardValue(t, .gain, own: track.gainDecibels)
        canvas.put(y + 4, x, Fit.pad("pan " + Pan.text(pan.value), w), pan.automated ? .playing : .value)
        let readings = t < model.meters.count ? model.meters[t] : []
        drawColumns(fader: gain.value, meters: readings, x: x, meterTop: meterTop, meterRows: meterRows,
                    selected: selected, glyphs: glyphs, canvas: &canvas)
    }

    private static func drawMaster(_ model: ScreenModel, x: Int, y: Int, meterTop: Int, meterRows: Int, selected: Bool,
                                   glyphs: Glyphs, canvas: inout Canvas) {
        let w = stripWidth - 1
        canvas.put(y, x, Fit.pad("Master", w), selected ? .selected : .title)
        canvas.put(y + 1, x, Fit.pad("stereo", w), .label)
        canvas.put(y + 2, x, Fit.pad(Fit.chain(TrackListView.chainSummary(model.chain(ScreenModel.masterChainTrack)), w), w), .dim)
        drawColumns(fader: model.session.masterGainDecibels, meters: model.masterMeters, x: x, meterTop: meterTop,
                    meterRows: meterRows, selected: selected, glyphs: glyphs, canvas: &canvas)
    }

    /// The fader column, then one meter column per channel, then the values under them.
    private static func drawColumns(fader: Double, meters: [MeterReading], x: Int, meterTop: Int, meterRows: Int,
                                    selected: Bool, glyphs: Glyphs, canvas: inout Canvas) {
        let bottom = meterTop + meterRows - 1
        let knob = bottom - level(fader, rows: meterRows)
        for r in meterTop...bottom {
            canvas.set(r, x + 1, r == knob ? (glyphs == .ascii ? "=" : "█") : (glyphs == .ascii ? "|" : "│"),
                       r == knob ? (selected ? .selected : .value) : .ruler)
        }
        let channels = meters.isEmpty ? [MeterReading()] : meters
        for (c, meter) in channels.prefix(2).enumerated() {
            drawMeter(meter, x: x + 3 + c * 2, top: meterTop, rows: meterRows, glyphs: glyphs, canvas: &canvas)
        }
        let footer = bottom + 1
        // Whole numbers: a fader typed below -99.9 dB takes the strip's width; a hold quieter
        // than -99.9 dBFS reads as that floor.
        let faderText = Fader.text(fader)
        canvas.put(footer, x, Fit.right(faderText, max(5, faderText.count)) + "dB", selected ? .selected : .value)
        let hold = channels.map(\.holdDecibels).max() ?? -.infinity
        let clipped = channels.contains(where: \.clipped)
        canvas.put(footer + 1, x, clipped ? "CLIP " : Fit.right(Decibels.text(hold.isFinite ? max(hold, -99.9) : hold), 5), clipped ? .clip : .label)
    }

    /// One channel's meter from the bottom: full cells to the RMS level, half cells on to the
    /// peak, the hold tick, and a clip light above the scale.
    static func drawMeter(_ meter: MeterReading, x: Int, top: Int, rows: Int, glyphs: Glyphs, canvas: inout Canvas) {
        let bottom = top + rows - 1
        func cells(_ db: Double) -> Int { db.isFinite || db > 0 ? (fraction(db) > 0 ? level(db, rows: rows) + 1 : 0) : 0 }
        let rms = cells(meter.rmsDecibels)
        let peak = cells(meter.peakDecibels)
        let hold = cells(meter.holdDecibels) - 1
        for i in 0..<rows {
            let r = bottom - i
            let cellDecibels = floorDecibels + Double(i) / Double(max(1, rows - 1)) * (Fader.maximumDecibels - floorDecibels)
            let zone = cellDecibels >= MeterRender.clipDecibels ? .clip : MeterRender.role(forDecibels: cellDecibels)
            if i < rms { canvas.set(r, x, glyphs.meterFull, zone) }
            else if i < peak { canvas.set(r, x, glyphs.levels[4], zone) }
            else if i == hold { canvas.set(r, x, glyphs == .ascii ? "-" : "▬", .meterHold) }
            else { canvas.set(r, x, glyphs.meterEmpty, .dim) }
        }
        canvas.set(top - 1, x, meter.clipped ? "!" : " ", meter.clipped ? .clip : .dim)
    }
}
