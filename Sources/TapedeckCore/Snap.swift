/// Where edits and playhead steps land: on bar lines, on beats, or anywhere.
public enum Snap: String, Sendable, Equatable, CaseIterable {
    /// Bar lines.
    case bars
    /// Beats.
    case beats
    /// No grid: steps are the screen's own (a column of the timeline).
    case off

    /// The next setting, for the snap key.
    public var next: Snap {
        switch self {
        case .bars: .beats
        case .beats: .off
        case .off: .bars
        }
    }
}

extension TempoMap {
    /// The grid line `steps` lines from `frame` (negative: earlier) on the `snap` grid: from
    /// a frame between lines, one step goes to the nearest line in that direction. Nil for
    /// ``Snap/off``. Never before 0.
    public func gridFrame(from frame: Int64, steps: Int, snap: Snap) -> Int64? {
        let unit: Double
        switch snap {
        case .bars: unit = framesPerBar
        case .beats: unit = framesPerBeat
        case .off: return nil
        }
        guard steps != 0, unit > 0 else { return frame }
        let position = Double(frame) / unit
        // A frame within half a frame of a line counts as on it.
        let epsilon = 0.5 / unit
        let base = steps > 0 ? (position + epsilon).rounded(.down) : (position - epsilon).rounded(.up)
        let line = base + Double(steps)
        return max(0, Int64((line * unit).rounded()))
    }
}
