/// The characters used to draw, in a Unicode and an ASCII set: the ASCII set is used when
/// the locale is not UTF-8, so the screen never shows mojibake.
public struct Glyphs: Sendable, Equatable {
    /// Levels from empty to full, for waveforms and meters (`levels[0]` is empty).
    public let levels: [Character]
    /// Playhead column marker.
    public let playhead: Character
    /// Horizontal rule.
    public let rule: Character
    /// Marker flag on the ruler.
    public let marker: Character
    /// A filled meter cell.
    public let meterFull: Character
    /// A meter peak-hold tick.
    public let hold: Character
    /// An unlit meter cell.
    public let meterEmpty: Character
    /// Record state dot.
    public let recordDot: String
    /// Loop range on the ruler.
    public let loopBar: Character

    /// Block elements and box drawing.
    public static let unicode = Glyphs(levels: [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"], playhead: "│",
                                       rule: "─", marker: "▼", meterFull: "█", hold: "▌", meterEmpty: "·",
                                       recordDot: "●", loopBar: "━")
    /// Plain ASCII.
    public static let ascii = Glyphs(levels: [" ", ".", ".", ":", ":", "+", "+", "#", "#"], playhead: "|",
                                     rule: "-", marker: "v", meterFull: "#", hold: "|", meterEmpty: ".",
                                     recordDot: "*", loopBar: "=")
}
