/// Converts between frames and musical time for a constant tempo and time signature.
public struct TempoMap: Equatable, Sendable {
    /// Frames per second.
    public var sampleRate: Int
    /// Beats per minute.
    public var tempoBPM: Double
    /// Beats per bar and the beat's note value.
    public var timeSignature: TimeSignature

    /// Ticks in one beat, for bars|beats|ticks display.
    public static let ticksPerBeat = 960

    /// Creates a tempo map.
    public init(sampleRate: Int, tempoBPM: Double, timeSignature: TimeSignature) {
        self.sampleRate = sampleRate
        self.tempoBPM = tempoBPM
        self.timeSignature = timeSignature
    }

    /// Length of one beat in frames (fractional: tempos rarely divide the rate).
    public var framesPerBeat: Double { Double(sampleRate) * 60.0 / tempoBPM }

    /// Length of one bar in frames.
    public var framesPerBar: Double { framesPerBeat * Double(timeSignature.beatsPerBar) }

    /// The frame where a 1-based bar and beat, plus a fraction of a beat, start. Clamped to
    /// 0...``SessionLimits/maximumTimelineFrames``, so no bar number can overflow (text from
    /// users goes through ``TimeText``, which refuses such bars instead).
    public func frame(bar: Int, beat: Int, beatFraction: Double = 0) -> Int64 {
        let beats = Double(bar - 1) * Double(timeSignature.beatsPerBar) + Double(beat - 1) + beatFraction
        let frame = (beats * framesPerBeat).rounded()
        guard frame.isFinite else { return frame > 0 ? SessionLimits.maximumTimelineFrames : 0 }
        return Int64(min(max(frame, 0), Double(SessionLimits.maximumTimelineFrames)))
    }

    /// Musical position of `frame`: 1-based bar and beat, 0-based tick.
    public func position(ofFrame frame: Int64) -> (bar: Int, beat: Int, tick: Int) {
        let beatsOrNaN = Double(frame) / framesPerBeat
        let totalBeats = beatsOrNaN.isNaN ? 0 : beatsOrNaN
        // Any Int64 frame at any tempo stays far inside Int's range once clamped like this.
        let wholeBeats = Int(min(max(totalBeats.rounded(.down), -1e15), 1e15))
        let fraction = min(max(totalBeats - Double(wholeBeats), 0), 1)
        let tick = min(Int((fraction * Double(TempoMap.ticksPerBeat)).rounded(.down)), TempoMap.ticksPerBeat - 1)
        let perBar = max(timeSignature.beatsPerBar, 1)
        let bar = wholeBeats >= 0 ? wholeBeats / perBar : (wholeBeats - perBar + 1) / perBar
        let beat = wholeBeats - bar * perBar
        return (bar + 1, beat + 1, tick)
    }

    /// `bars|beats|ticks` text of `frame`, e.g. `3|2|480`.
    public func barsBeatsTicks(ofFrame frame: Int64) -> String {
        let p = position(ofFrame: frame)
        return "\(p.bar)|\(p.beat)|\(p.tick)"
    }

    /// Clock time and bars|beats|ticks of `frame`, e.g. `00:12.000 (7|1|0)`: how messages
    /// name a place on the timeline.
    public func place(ofFrame frame: Int64) -> String {
        "\(TimeText.clock(frames: frame, sampleRate: sampleRate)) (\(barsBeatsTicks(ofFrame: frame)))"
    }
}
