import TapedeckCore
import TapedeckDSP

/// The track list: number, name, arm/mute/solo, inputs, fader, pan, chain summary, meters
/// and, beside them, routing other than the plain one (sends, an output, solo-safe); under a
/// track whose lanes are shown, its takes with the playing one marked. A bus shows `bus 2ch`
/// (or `1ch`) where a track shows its input, and nothing where a track is armed or monitored.
public enum TrackListView {
    /// The node names of a chain as the session's chains read it (``SessionChains``), `-` when
    /// empty; bypassed nodes in parentheses. A chain the parser refused is shown as written.
    public static func chainSummary(_ slot: SessionChains.Slot) -> String {
        guard let chain = slot.value else { return slot.text.isEmpty ? "-" : slot.text }
        return chainSummary(chain)
    }

    /// The node names of `chain`, `-` when empty; bypassed nodes in parentheses.
    public static func chainSummary(_ chain: Chain) -> String {
        if chain.entries.isEmpty { return "-" }
        return chain.entries.map { $0.bypassed ? "(\($0.node))" : $0.node }.joined(separator: ">")
    }

    /// `bus 2ch` or `bus 1ch`: a bus's width, where a track shows its input.
    public static func busLabel(_ track: Track) -> String { "bus \(track.busChannelCount)ch" }

    /// A strip's routing in at most `width` characters, or empty when it is the plain one (no
    /// sends, to the master): `safe` for a solo-safe bus, `»Reverb` for one send (`»2` for
    /// several, or when the name does not fit), then `→out:3-4` or `→Reverb` for its output.
    /// Whole words are left out rather than cut, the output last.
    public static func routingSummary(_ track: Track, glyphs: Glyphs, width: Int = .max) -> String {
        let send = glyphs == .ascii ? "+" : "»", arrow = glyphs == .ascii ? ">" : "→"
        var output: String?
        switch track.output {
        case .master: break
        case .bus(let name): output = arrow + name
        case .device: output = arrow + track.output.description
        }
        let sends = track.sends.count == 1 ? send + track.sends[0].bus : track.sends.isEmpty ? nil : "\(send)\(track.sends.count)"
        let safe = track.isSoloSafe ? "safe" : nil
        let tries: [[String?]] = [[safe, sends, output], [safe, track.sends.isEmpty ? nil : "\(send)\(track.sends.count)", output],
                                  [nil, track.sends.isEmpty ? nil : "\(send)\(track.sends.count)", output], [nil, nil, output]]
        for parts in tries {
            let text = parts.compactMap { $0 }.joined(separator: " ")
            if text.count <= width { return text }
        }
        return String((output ?? "").prefix(max(0, width)))
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
        if tracks.isEmpty {
            canvas.put(y, 1, "No tracks: \(model.keyName(.newTrack)) adds one, \(model.keyName(.importFile)) imports a file.", .dim, maxWidth: width - 1)
            return
        }
        let bands = TrackBands.layout(model, top: y, rows: rows)
        let columns = self.columns(model, width: width, shown: bands.filter { $0.kind == .track }.map(\.track))
        for band in bands {
            let track = tracks[band.track]
            switch band.kind {
            case .track: drawTrack(model, band.track, row: band.y, columns: columns, canvas: &canvas, glyphs: glyphs)
            case .take(let group, let number, _):
                let active = track.activeTakeNumber(group: group) == number
                let mark = active ? (glyphs == .ascii ? ">" : "▶") : " "
                canvas.put(band.y, 3, "\(mark) take \(group).\(number)\(active ? " plays" : "")", active ? .value : .dim, maxWidth: width - 3)
            case .automation(let k):
                drawLane(model, band.track, lane: k, row: band.y, width: width, canvas: &canvas, glyphs: glyphs)
            }
        }
    }

    /// An automation lane's row: its parameter, mode and value at the playhead (`-` before it
    /// has a point); the selected lane highlighted.
    private static func drawLane(_ model: ScreenModel, _ t: Int, lane k: Int, row: Int, width: Int, canvas: inout Canvas, glyphs: Glyphs) {
        let lane = model.session.tracks[t].automation[k]
        let selected = t == model.selectedTrack && model.selectedLane == k
        if selected { canvas.fill(row, 0, height: 1, width: width, " ", .selected) }
        let mark = selected ? (glyphs == .ascii ? ">" : "▶") : " "
        // Whole fields only: the parameter's name shortened, the point count left out.
        var x = canvas.put(row, 3, mark + " " + Fit.pad(Fit.shortened(lane.parameter.description, 14), 14), selected ? .selected : .label)
        x = canvas.put(row, x + 1, Fit.pad(lane.mode.rawValue, 5), lane.mode == .off ? .dim : (AutomationWriter.writes(lane.mode) ? .armed : .value))
        // The value heard at the playhead; while a pass writes the lane, the value written.
        let shown = model.shownLane(t, k) ?? lane
        let value = shown.value(at: model.playheadFrame).map { lane.parameter.valueText($0) } ?? "-"
        x = canvas.put(row, x + 1, Fit.right(value, max(7, value.count)), .value)
        let points = "\(shown.points.count) pt"
        if x + 1 + points.count <= width { canvas.put(row, x + 1, points, .dim) }
    }

    /// `t2/3` when take 2 of 3 plays: of the take group under `frame`, else of the track's
    /// only take group (nil for a track without takes, or with several and none under `frame`).
    static func playingTake(_ track: Track, at frame: Int64) -> String? {
        let takes = track.regions.filter { $0.takeGroup != nil && track.isActive($0) }
        let covering = takes.last { r in
            // The group's span: its longest take, so a last pass stopped early still counts.
            track.regions.contains { $0.takeGroup == r.takeGroup && $0.timelineStartFrame <= frame && frame < $0.timelineEndFrame }
        }
        guard let region = covering ?? (takes.count == 1 ? takes[0] : nil),
              let group = region.takeGroup, let number = region.takeNumber else { return nil }
        return "t\(number)/\(track.takeIndices(group: group).count)"
    }

    /// The text of a track's input field: its input channels, `bus 2ch`, `frozen` or `MIDI`.
    static func inputText(_ track: Track) -> String {
        track.isBus ? busLabel(track) : track.frozen != nil ? "frozen" : (track.isMIDI ? "MIDI" : InputChannels.text(track.inputChannels))
    }

    /// The list's columns for the tracks `shown`, as they are heard now (``TrackListColumns``):
    /// they line up with each other (the ones off screen are not looked at, so a frame costs
    /// what is on it).
    static func columns(_ model: ScreenModel, width: Int, shown: [Int]) -> TrackListColumns {
        let tracks = model.session.tracks
        var name = 0, input = 0, fader = 0, chain = 0
        for t in shown where tracks.indices.contains(t) {
            let track = tracks[t]
            let take = playingTake(track, at: model.playheadFrame)
            name = max(name, track.name.count + (take.map { $0.count + 1 } ?? 0))
            input = max(input, inputText(track).count)
            fader = max(fader, Fader.text(model.heardValue(t, .gain, own: track.gainDecibels).value).count)
            if !track.playbackChain.isEmpty { chain = max(chain, chainSummary(model.chain(t)).count) }
        }
        return TrackListColumns.layout(width: width, trackCount: tracks.count, longestName: name, longestInput: input,
                                       longestFader: fader, longestChain: chain)
    }

    private static func drawTrack(_ model: ScreenModel, _ t: Int, row: Int, columns: TrackListColumns, canvas: inout Canvas,
                                  glyphs: Glyphs) {
        let track = model.session.tracks[t]
        let width = columns.width
        let selected = t == model.selectedTrack
        if selected { canvas.fill(row, 0, height: 1, width: width, " ", .selected) }
        canvas.put(row, 0, Fit.right("\(t + 1)", columns.numberWidth), selected ? .selected : .label)
        // The take heard at the playhead is named beside the track's name, not over its
        // waveform (where it hid the top of the take it named); on the meter row when the
        // name's slot has no room for it.
        let take = playingTake(track, at: model.playheadFrame)
        let (nameText, takeShown) = columns.nameText(track.name, take: take)
        let nameRole: Role = selected ? .selected : (track.isBus ? .title : .trackName)
        if takeShown, let take {
            let x = canvas.put(row, columns.nameX, String(nameText.dropLast(take.count)), nameRole)
            canvas.put(row, x, take, selected ? .selected : .marker)
        } else {
            canvas.put(row, columns.nameX, nameText, nameRole)
        }
        if columns.showsFlags {
            // A bus cannot be armed or monitored: blanks there, so its row reads differently.
            var x = canvas.put(row, columns.flagsX, track.isBus ? " " : (track.armed ? "R" : "-"), track.armed ? .armed : .dim)
            x = canvas.put(row, x + 1, track.mute ? "M" : "-", track.mute ? .muted : .dim)
            x = canvas.put(row, x + 1, track.solo ? "S" : "-", track.solo ? .solo : .dim)
            canvas.put(row, x + 1, track.isBus ? " " : monitoringLetter(track.monitoring), track.monitoring == .off ? .dim : .label)
        }
        if columns.inputWidth > 0 {
            // A MIDI track's input is the MIDI inputs; a frozen track plays its render.
            canvas.put(row, columns.inputX, Fit.pad(inputText(track), columns.inputWidth),
                       track.isBus ? .title : (track.frozen != nil ? .dim : .label))
        }
        // A fader or pan its lane moves shows the lane's value, in the playing colour.
        let gain = model.heardValue(t, .gain, own: track.gainDecibels), pan = model.heardValue(t, .pan, own: track.pan)
        canvas.put(row, columns.faderX, Fit.right(Fader.text(gain.value), columns.faderWidth) + "dB", gain.automated ? .playing : .value)
        canvas.put(row, columns.panX, Fit.pad(Pan.text(pan.value), TrackListColumns.panWidth), pan.automated ? .playing : .value)
        let chain = Fit.chain(chainSummary(model.chain(t)), width - columns.chainX)
        if !chain.isEmpty { canvas.put(row, columns.chainX, chain, .dim) }
        drawMeterRow(model, t, row: row + 1, width: width, take: takeShown ? nil : take, canvas: &canvas, glyphs: glyphs)
    }

    /// Every shown track's meter row, as the list draws them: for the screen benchmark, which
    /// sets their cost beside the live waveforms'.
    public static func drawMeterRows(_ model: ScreenModel, into canvas: inout Canvas, y: Int, rows: Int, width: Int, glyphs: Glyphs) {
        for band in TrackBands.layout(model, top: y, rows: rows) where band.kind == .track {
            drawMeterRow(model, band.track, row: band.y + 1, width: width, take: nil, canvas: &canvas, glyphs: glyphs)
        }
    }

    /// A track's second row: `take` (the take heard, when its name's row had no room for it),
    /// one meter per channel, its routing, then the loudest peak in dBFS.
    private static func drawMeterRow(_ model: ScreenModel, _ t: Int, row meterRow: Int, width: Int, take: String?, canvas: inout Canvas,
                                     glyphs: Glyphs) {
        let track = model.session.tracks[t]
        let readings = t < model.meters.count ? model.meters[t] : []
        let channels = max(1, readings.count)
        let numberWidth = 6
        // Routing takes up to half the meters' room, at the row's end.
        let routing = routingSummary(track, glyphs: glyphs, width: (width - 3 - numberWidth) / 2)
        let routingWidth = routing.isEmpty ? 0 : routing.count + 1
        if !routing.isEmpty {
            canvas.put(meterRow, width - numberWidth - routingWidth, Fit.pad(routing, routingWidth - 1), .value)
        }
        // The take heard, when the name's row had no room for it.
        var meterX = 3
        if let take { meterX = canvas.put(meterRow, meterX, take, .marker) + 1 }
        let meterSpace = max(4, width - meterX - numberWidth - routingWidth)
        let each = max(2, (meterSpace - (channels - 1)) / channels)
        for c in 0..<channels {
            MeterRender.draw(into: &canvas, y: meterRow, x: meterX + c * (each + 1), width: each,
                             meter: c < readings.count ? readings[c] : MeterReading(), glyphs: glyphs)
        }
        let loudest = readings.map(\.peakDecibels).max() ?? -.infinity
        // Five characters: anything quieter than −99.9 dB reads as that floor, not as a cut-off number.
        canvas.put(meterRow, width - numberWidth, Fit.right(Decibels.text(loudest.isFinite ? max(loudest, -99.9) : loudest), numberWidth - 1),
                   loudest >= MeterRender.clipDecibels ? .clip : .label)
    }
}
