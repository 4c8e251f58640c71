/// Plots of a whole file for `tapedeck info`, drawn with the screen's level glyphs (block
/// elements in a UTF-8 locale, ASCII otherwise): a one-line waveform overview and a few rows
/// of loudness over time.
public enum LevelPlot {
    /// One character per column: the column's sample peak on a −`floorDecibels`…0 dBFS scale
    /// (anything quieter is blank; anything heard at all shows at least the lowest glyph).
    public static func overview(peakDecibels: [Double], glyphs: Glyphs, floorDecibels: Double = -48) -> String {
        let top = glyphs.levels.count - 1
        return String(peakDecibels.map { db -> Character in
            guard db.isFinite, db > floorDecibels else { return glyphs.levels[0] }
            let level = Int(((db - floorDecibels) / -floorDecibels * Double(top)).rounded(.up))
            return glyphs.levels[min(top, max(1, level))]
        })
    }

    /// `rows` lines, loudest first, each `LABEL ┤` then one column per value: bars of
    /// loudness in LUFS, `rowLU` per row, the top row's top at the first multiple of `rowLU`
    /// at or above the loudest value (at most 0). Labels name each row's top.
    public static func loudness(_ values: [Double], rows: Int, rowLU: Double = 6, glyphs: Glyphs) -> [String] {
        let loudest = values.filter(\.isFinite).max() ?? -rowLU
        let top = min(0, (loudest / rowLU).rounded(.up) * rowLU)
        let bottom = top - Double(rows) * rowLU
        let steps = glyphs.levels.count - 1
        let axis = glyphs == .unicode ? "┤" : "|"
        return (0..<rows).reversed().map { row -> String in
            let label = String(Int(bottom + Double(row + 1) * rowLU))
            var line = String(repeating: " ", count: max(0, 4 - label.count)) + label + " " + axis
            for v in values {
                let height = v.isFinite ? (v - bottom) / rowLU : 0
                let fill = min(1, max(0, height - Double(row)))
                line.append(glyphs.levels[Int((fill * Double(steps)).rounded())])
            }
            return line
        }
    }

    /// Reduces a series sampled every `stepFrames` (or a per-frame quantity already reduced
    /// to steps) to `columns` values over `frameCount` frames, keeping each column's maximum;
    /// a column narrower than a step takes the step it falls in.
    public static func columns(_ steps: [Double], columns: Int, stepFrames: Int64, frameCount: Int64) -> [Double] {
        guard columns > 0, !steps.isEmpty, frameCount > 0 else { return Array(repeating: -.infinity, count: max(0, columns)) }
        return (0..<columns).map { c in
            let start = frameCount * Int64(c) / Int64(columns)
            let end = max(start + 1, frameCount * Int64(c + 1) / Int64(columns))
            let first = min(steps.count - 1, Int(start / stepFrames))
            let last = min(steps.count - 1, max(first, Int((end - 1) / stepFrames)))
            return steps[first...last].max() ?? -.infinity
        }
    }
}
