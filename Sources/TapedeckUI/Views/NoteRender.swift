/// A MIDI region drawn as a compact note view: each row of a lane holds two pitch bands (the
/// upper and lower half of the cell), the region's lowest notes at the bottom.
enum NoteRender {
    /// The characters of one column, top row first, for the pitch bands in `bands` (bit 0 the
    /// lowest of `rows × 2`).
    static func column(bands: UInt64, rows: Int, glyphs: Glyphs) -> [Character] {
        let ascii = glyphs == .ascii
        return (0..<rows).map { row in
            // Row 0 is the top: bands 2·rows−1 (upper half) and 2·rows−2 (lower half).
            let upper = bands & (1 << UInt64(2 * (rows - row) - 1)) != 0
            let lower = bands & (1 << UInt64(2 * (rows - row) - 2)) != 0
            switch (upper, lower) {
            case (true, true): return ascii ? ":" : "█"
            case (true, false): return ascii ? "'" : "▀"
            case (false, true): return ascii ? "." : "▄"
            case (false, false): return " "
            }
        }
    }
}
