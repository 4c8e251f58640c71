import TapedeckCore

/// Turns peak amplitudes into rows of block characters.
public enum WaveformRender {
    /// Quietest level drawn; the scale is in dB so quiet passages still show.
    public static let floorDecibels = -48.0

    /// Height 0…1 that a linear peak amplitude draws at (dB scale from ``floorDecibels``).
    public static func height(forAmplitude amplitude: Float) -> Double {
        guard amplitude > 0 else { return 0 }
        let db = Decibels.fromLinear(Double(amplitude))
        return min(1, max(0, (db - floorDecibels) / -floorDecibels))
    }

    /// The characters of a lane `rows` high for one column of amplitude `amplitude`, top row
    /// first. The column fills from the bottom in steps of one glyph level.
    public static func column(amplitude: Float, rows: Int, glyphs: Glyphs) -> [Character] {
        guard rows > 0 else { return [] }
        let total = filledSteps(amplitude: amplitude, rows: rows, glyphs: glyphs)
        return (0..<rows).reversed().map { r in glyph(row: r, filledSteps: total, glyphs: glyphs) }
    }

    /// Glyph steps filled from the bottom of a lane `rows` high for `amplitude`.
    public static func filledSteps(amplitude: Float, rows: Int, glyphs: Glyphs) -> Int {
        let steps = glyphs.levels.count - 1
        let filled = Int((height(forAmplitude: amplitude) * Double(rows * steps)).rounded())
        // Anything audible shows at least the lowest step, so a quiet note is never invisible.
        return amplitude > 0 && filled == 0 ? 1 : filled
    }

    /// The glyph of row `r` counted from the bottom (0) of a column with `filledSteps` steps
    /// filled (no array per column: the screen draws thousands of them a frame).
    @inline(__always)
    public static func glyph(row r: Int, filledSteps total: Int, glyphs: Glyphs) -> Character {
        let steps = glyphs.levels.count - 1
        return glyphs.levels[min(steps, max(0, total - r * steps))]
    }
}
