/// A tempo map counted in quarter notes, for MIDI files (whose ticks are quarters'
/// fractions whatever the meter): the map's segments once, then quarter positions of frames
/// and frames of quarter positions without working the segments out again.
public struct QuarterClock: Sendable {
    /// The map's segments.
    public let segments: [TempoSegment]
    /// Quarter notes before each segment.
    public let startQuarters: [Double]
    private let sampleRate: Double

    /// The clock of `map`.
    public init(_ map: TempoMap) {
        segments = map.segments
        var quarters: [Double] = []
        var q = 0.0
        for s in segments {
            quarters.append(q)
            if s.beatCount.isFinite { q += s.beatCount * 4 / Double(s.signature.beatUnit) }
        }
        startQuarters = quarters
        sampleRate = Double(max(map.sampleRate, 1))
    }

    /// Quarter notes from bar 1 to `frame`.
    public func quarters(atFrame frame: Double) -> Double {
        let k = TempoSegment.index(ofFrame: frame, in: segments)
        let s = segments[k]
        return startQuarters[k] + s.beats(seconds: (frame - s.startFrame) / sampleRate) * 4 / Double(s.signature.beatUnit)
    }

    /// The frame (unrounded) `quarters` quarter notes from bar 1.
    public func frame(atQuarters quarters: Double) -> Double {
        let k = TempoSegment.lastIndex(startQuarters, atMost: quarters) { $0 }
        let s = segments[k]
        let beats = (quarters - startQuarters[k]) * Double(s.signature.beatUnit) / 4
        return s.startFrame + s.seconds(beats: beats) * sampleRate
    }

    /// Where segment `k` ends (infinity for the last).
    public func endFrame(ofSegment k: Int) -> Double {
        k + 1 < segments.count ? segments[k + 1].startFrame : .infinity
    }
}
