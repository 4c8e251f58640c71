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
        if !isConstant && snap != .off { return steps == 0 ? frame : mapGridFrame(from: frame, steps: steps, bars: snap == .bars) }
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
        // Clamped before converting: no frame lies past the timeline (and a Double past
        // Int64's range would trap).
        return max(0, Int64(min((line * unit).rounded(), Double(SessionLimits.maximumTimelineFrames))))
    }

    /// ``gridFrame(from:steps:snap:)`` through the map's changes: beats are whole song
    /// positions, bars their own lengths (a 7/8 bar is shorter than the 4/4 before it).
    private func mapGridFrame(from frame: Int64, steps: Int, bars: Bool) -> Int64 {
        // A frame within half a frame of a line counts as on it.
        let at = min(Double(frame), Double(SessionLimits.maximumTimelineFrames)) + (steps > 0 ? 0.5 : -0.5)
        let line: Double
        if bars {
            var bar = position(ofFrame: Int64(max(at, 0).rounded(.down))).bar
            if exactFrame(bar: bar + 1, beat: 1) <= at { bar += 1 }
            let base = steps > 0 || exactFrame(bar: bar, beat: 1) >= at ? bar : bar + 1
            line = exactFrame(bar: max(1, base + steps), beat: 1)
        } else {
            let beat = point(atFrame: at).beatPosition
            let base = steps > 0 ? beat.rounded(.down) : beat.rounded(.up)
            line = self.frame(atBeatPosition: max(0, base + Double(steps)))
        }
        return max(0, Int64(min(line.rounded(), Double(SessionLimits.maximumTimelineFrames))))
    }
}
