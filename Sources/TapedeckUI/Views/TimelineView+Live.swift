import TapedeckCore
import TapedeckIO
import TapedeckTransport

extension TimelineView {
    /// Every live take of the tracks shown, over their rows (as ``drawLanes`` draws them): for
    /// the screen benchmark, which sets their cost beside the meters'.
    public static func drawLiveTakes(_ model: ScreenModel, into canvas: inout Canvas, y: Int, x: Int, rows: Int, width: Int,
                                     glyphs: Glyphs) {
        for band in TrackBands.layout(model, top: y, rows: rows) where band.kind == .track {
            for take in model.liveTakes(onTrack: band.track) {
                drawLiveTake(take, model: model, row: band.y, x: x, width: width, glyphs: glyphs, canvas: &canvas)
            }
        }
    }

    /// Draws a take being recorded over its track's row, as far as its writer has written,
    /// in the recording colour: from its start (the record point, a punch's start), or, for
    /// a loop recording, the pass under way from the loop's start, with the rest of the loop
    /// showing the pass before it (dimmed), so both the new pass and the one it follows are
    /// seen. The peaks are read under their lock once for the row; a column whose frames are
    /// all written is worked out once (``LiveColumnCache``), so a frame costs the newest
    /// column's peaks and the cells.
    static func drawLiveTake(_ take: LiveTake, model: ScreenModel, row: Int, x: Int, width: Int, glyphs: Glyphs,
                             canvas: inout Canvas) {
        take.peaks.read { peaks in
            let written = peaks.frameCount
            guard written > 0 else { return }
            let rate = take.timelineFramesPerFrame
            let span = Span(peaks: peaks, id: ObjectIdentifier(take.peaks), rate: rate, row: row, x: x, width: width)
            if take.passFrames > 0, let loop = take.loop {
                let pass = (written - 1) / take.passFrames
                let passStart = pass * take.passFrames
                span.draw(takeFrom: passStart, takeTo: written, at: loop.startFrame, role: .recording, model: model, glyphs: glyphs,
                          canvas: &canvas)
                if pass > 0 {
                    // The pass before, where the new one has not reached yet.
                    let reached = loop.startFrame + Int64((Double(written - passStart) * rate).rounded())
                    span.draw(takeFrom: passStart - take.passFrames, takeTo: passStart, at: loop.startFrame, visibleFrom: reached,
                              role: .waveformMuted, model: model, glyphs: glyphs, canvas: &canvas)
                }
            } else {
                span.draw(takeFrom: 0, takeTo: written, at: take.startFrame, role: .recording, model: model, glyphs: glyphs,
                          canvas: &canvas)
            }
        }
    }

    /// One stretch of a live take on a row.
    private struct Span {
        let peaks: LivePeaks.Reader
        let id: ObjectIdentifier
        /// Timeline frames per take frame.
        let rate: Double
        let row: Int, x: Int, width: Int

        /// Take frames `[takeFrom, takeTo)` drawn from timeline frame `start` on (the columns
        /// from `visibleFrom` on): every column they reach gets the waveform of its frames, a
        /// silent one the rule, so the take's reach shows even before a sound. The columns
        /// whose frames are all written are kept as cells (``LiveColumnCache``) and copied in
        /// one go; only the newer ones read the peaks.
        func draw(takeFrom: Int64, takeTo: Int64, at start: Int64, visibleFrom: Int64 = .min, role: Role, model: ScreenModel,
                  glyphs: Glyphs, canvas: inout Canvas) {
            guard takeTo > takeFrom, rate > 0 else { return }
            let end = start + Int64((Double(takeTo - takeFrom) * rate).rounded(.up))
            let perColumn = max(1, model.framesPerColumn)
            let view = model.viewStartFrame
            let first = max(0, Int((start - view) / perColumn))
            guard first < width else { return }
            // Frames published at the finest level: a column ending before them is final.
            let settled = takeTo / Int64(LivePeaks.bucketFrames) * Int64(LivePeaks.bucketFrames)
            let rows = Layout.rowsPerTrack
            let kept = model.liveColumns.entry(take: id, takeFrom: takeFrom, start: start, view: view, perColumn: perColumn, role: role,
                                               ascii: glyphs == .ascii, rows: rows)
            var newer: [Int] = []
            var col = first + kept.count
            while col < width {
                let from = view + Int64(col) * perColumn
                guard from < end else { break }
                let to = from + perColumn
                // The column's frames of the take (the part of it the span covers).
                let a = takeFrom + Int64((Double(max(from, start) - start) / rate).rounded(.down))
                let b = min(takeTo, takeFrom + Int64((Double(min(to, end) - start) / rate).rounded(.up)))
                let filled = WaveformRender.filledSteps(amplitude: peaks.amplitude(fromFrame: a, toFrame: b), rows: rows, glyphs: glyphs)
                if newer.isEmpty && to <= end && b <= settled {
                    for r in 0..<rows { kept.cells[r].append(Span.cell(row: r, of: rows, filled: filled, role: role, glyphs: glyphs)) }
                } else {
                    newer.append(filled)
                }
                col += 1
            }
            // The first column shown: from `visibleFrom` on.
            let shown = visibleFrom == .min ? first : max(first, Int((visibleFrom - view + perColumn - 1) / perColumn))
            let skip = min(kept.count, shown - first)
            for r in 0..<rows { canvas.put(cells: kept.cells[r][skip...], row + r, x + first + skip) }
            for (k, filled) in newer.enumerated() where first + kept.count + k >= shown {
                for r in 0..<rows {
                    canvas.set(row + r, x + first + kept.count + k, Span.cell(row: r, of: rows, filled: filled, role: role, glyphs: glyphs).character, role)
                }
            }
        }

        /// Row `r` (from the top) of a column `rows` high with `filled` steps: the rule under silence.
        static func cell(row r: Int, of rows: Int, filled: Int, role: Role, glyphs: Glyphs) -> Cell {
            let glyph = WaveformRender.glyph(row: rows - 1 - r, filledSteps: filled, glyphs: glyphs)
            return Cell(glyph == " " && r == rows - 1 ? glyphs.rule : glyph, role)
        }
    }
}

/// The live takes' columns whose frames are all written, kept as the cells they draw: while a
/// take grows only its newest column changes, and the rest is copied in one go. One entry per
/// take and stretch, valid for one view (start, zoom), role and glyphs. UI thread only.
final class LiveColumnCache {
    /// A stretch's final columns, one array of cells per row.
    final class Entry {
        let start: Int64, view: Int64, perColumn: Int64
        let role: Role
        let ascii: Bool
        var cells: [[Cell]]
        /// Columns kept.
        var count: Int { cells.first?.count ?? 0 }

        init(start: Int64, view: Int64, perColumn: Int64, role: Role, ascii: Bool, rows: Int) {
            self.start = start
            self.view = view
            self.perColumn = perColumn
            self.role = role
            self.ascii = ascii
            cells = Array(repeating: [], count: rows)
        }
    }

    private struct Stretch: Hashable {
        let take: ObjectIdentifier
        let takeFrom: Int64
    }
    private var entries: [Stretch: Entry] = [:]

    /// The entry of a take's stretch drawn this way: the one kept, or a new one (the view, zoom
    /// or glyphs changed: worked out again).
    func entry(take: ObjectIdentifier, takeFrom: Int64, start: Int64, view: Int64, perColumn: Int64, role: Role, ascii: Bool,
               rows: Int) -> Entry {
        let key = Stretch(take: take, takeFrom: takeFrom)
        if let e = entries[key], e.start == start, e.view == view, e.perColumn == perColumn, e.role == role, e.ascii == ascii,
           e.cells.count == rows {
            return e
        }
        let e = Entry(start: start, view: view, perColumn: perColumn, role: role, ascii: ascii, rows: rows)
        entries[key] = e
        return e
    }

    /// Forgets every take (none is recording).
    func clear() { if !entries.isEmpty { entries.removeAll() } }
}
