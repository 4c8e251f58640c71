import TapedeckCore
import TapedeckIO
import TapedeckTransport

extension TimelineView {
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
        /// silent one the rule, so the take's reach shows even before a sound.
        func draw(takeFrom: Int64, takeTo: Int64, at start: Int64, visibleFrom: Int64 = .min, role: Role, model: ScreenModel,
                  glyphs: Glyphs, canvas: inout Canvas) {
            guard takeTo > takeFrom, rate > 0 else { return }
            let end = start + Int64((Double(takeTo - takeFrom) * rate).rounded(.up))
            let perColumn = max(1, model.framesPerColumn)
            let first = max(0, Int((start - model.viewStartFrame) / perColumn))
            // Frames published at the finest level: a column ending before them is final.
            let settled = takeTo / Int64(LivePeaks.bucketFrames) * Int64(LivePeaks.bucketFrames)
            let cache = model.liveColumns
            var known = cache.columns(id, takeFrom: takeFrom, start: start, view: model.viewStartFrame, perColumn: perColumn)
            let rows = Layout.rowsPerTrack
            var col = first
            while col < width {
                let from = TimelineView.frame(atColumn: col, model: model)
                guard from < end else { break }
                let to = from + perColumn
                let i = col - first
                col += 1
                guard to > start else { continue }
                let filled: Int
                if i < known.count {
                    filled = known[i]
                } else {
                    // The column's frames of the take (the part of it the span covers).
                    let a = takeFrom + Int64((Double(max(from, start) - start) / rate).rounded(.down))
                    let b = min(takeTo, takeFrom + Int64((Double(min(to, end) - start) / rate).rounded(.up)))
                    filled = WaveformRender.filledSteps(amplitude: peaks.amplitude(fromFrame: a, toFrame: b), rows: rows, glyphs: glyphs)
                    if i == known.count && to <= end && b <= settled { known.append(filled) }
                }
                guard from >= visibleFrom else { continue }
                for r in 0..<rows {
                    let glyph = WaveformRender.glyph(row: rows - 1 - r, filledSteps: filled, glyphs: glyphs)
                    canvas.set(row + r, x + col - 1, glyph == " " && r == rows - 1 ? glyphs.rule : glyph, role)
                }
            }
            cache.keep(id, takeFrom: takeFrom, start: start, view: model.viewStartFrame, perColumn: perColumn, columns: known)
        }
    }
}

/// The live takes' columns whose frames are all written, worked out once: while a take grows
/// only its newest column changes. Keyed by take and stretch, valid for one view (start and
/// zoom). UI thread only.
final class LiveColumnCache {
    private struct Key: Hashable {
        let take: ObjectIdentifier
        let takeFrom: Int64
    }
    private struct Entry {
        var start: Int64, view: Int64, perColumn: Int64
        var filled: [Int]
    }
    private var entries: [Key: Entry] = [:]

    /// The final columns known of a stretch, from its first column on (none when the view moved).
    func columns(_ take: ObjectIdentifier, takeFrom: Int64, start: Int64, view: Int64, perColumn: Int64) -> [Int] {
        guard let e = entries[Key(take: take, takeFrom: takeFrom)], e.start == start, e.view == view, e.perColumn == perColumn else {
            return []
        }
        return e.filled
    }

    /// Keeps the final columns of a stretch.
    func keep(_ take: ObjectIdentifier, takeFrom: Int64, start: Int64, view: Int64, perColumn: Int64, columns: [Int]) {
        entries[Key(take: take, takeFrom: takeFrom)] = Entry(start: start, view: view, perColumn: perColumn, filled: columns)
    }

    /// Forgets every take (none is recording).
    func clear() { if !entries.isEmpty { entries.removeAll() } }
}
