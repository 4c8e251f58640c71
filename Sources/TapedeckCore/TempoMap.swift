/// Converts between frames and musical time: a tempo and a time signature at bar 1, and
/// any tempo changes (steps or ramps) and meter changes at later bars.
///
/// Tempo counts the beats of the meter in force (in 7/8 a beat is an eighth), as the
/// session's one tempo always has. A ramped change glides from the change before it to its
/// own tempo, linearly in time, arriving at its bar. With no changes every conversion is
/// the constant-tempo arithmetic it always was, to the bit.
public struct TempoMap: Equatable, Sendable {
    /// Frames per second.
    public var sampleRate: Int
    /// Beats per minute at bar 1.
    public var tempoBPM: Double
    /// Beats per bar and the beat's note value at bar 1.
    public var timeSignature: TimeSignature
    /// Tempo changes after bar 1, in bar order.
    public var tempoChanges: [TempoChange]
    /// Meter changes after bar 1, in bar order.
    public var meterChanges: [MeterChange]

    /// Ticks in one beat, for bars|beats|ticks display.
    public static let ticksPerBeat = 960

    /// Creates a tempo map.
    public init(sampleRate: Int, tempoBPM: Double, timeSignature: TimeSignature,
                tempoChanges: [TempoChange] = [], meterChanges: [MeterChange] = []) {
        self.sampleRate = sampleRate
        self.tempoBPM = tempoBPM
        self.timeSignature = timeSignature
        self.tempoChanges = tempoChanges
        self.meterChanges = meterChanges
    }

    /// Whether one tempo and one meter hold throughout.
    public var isConstant: Bool { tempoChanges.isEmpty && meterChanges.isEmpty }

    /// Length of one beat in frames at bar 1 (fractional: tempos rarely divide the rate).
    public var framesPerBeat: Double { Double(sampleRate) * 60.0 / tempoBPM }

    /// Length of one bar in frames at bar 1.
    public var framesPerBar: Double { framesPerBeat * Double(timeSignature.beatsPerBar) }

    /// The frame where a 1-based bar and beat, plus a fraction of a beat, start. Clamped to
    /// 0...``SessionLimits/maximumTimelineFrames``, so no bar number can overflow (text from
    /// users goes through ``TimeText``, which refuses such bars instead).
    public func frame(bar: Int, beat: Int, beatFraction: Double = 0) -> Int64 {
        let frame = exactFrame(bar: bar, beat: beat, beatFraction: beatFraction).rounded()
        guard frame.isFinite else { return frame > 0 ? SessionLimits.maximumTimelineFrames : 0 }
        return Int64(min(max(frame, 0), Double(SessionLimits.maximumTimelineFrames)))
    }

    /// The frame, unrounded and unclamped, where bar `bar`, beat `beat` (both from 1) plus
    /// `beatFraction` of a beat lies. Beats past the bar's last run on into the next bars.
    public func exactFrame(bar: Int, beat: Int, beatFraction: Double = 0) -> Double {
        if isConstant {
            let beats = Double(bar - 1) * Double(timeSignature.beatsPerBar) + Double(beat - 1) + beatFraction
            return beats * framesPerBeat
        }
        let segments = self.segments
        let s = segments[TempoSegment.index(ofBar: bar, in: segments)]
        let beats = (Double(bar) - Double(s.startBar)) * Double(s.signature.beatsPerBar) + (Double(beat) - 1) + beatFraction
        return s.startFrame + s.seconds(beats: beats) * Double(sampleRate)
    }

    /// Musical position of `frame`: 1-based bar and beat, 0-based tick.
    public func position(ofFrame frame: Int64) -> (bar: Int, beat: Int, tick: Int) {
        if isConstant {
            return TempoMap.position(beats: Double(frame) / framesPerBeat, startBar: 1, beatsPerBar: timeSignature.beatsPerBar)
        }
        let segments = self.segments
        let s = segments[TempoSegment.index(ofFrame: Double(frame), in: segments)]
        let beats = s.beats(seconds: (Double(frame) - s.startFrame) / Double(sampleRate))
        return TempoMap.position(beats: beats, startBar: s.startBar, beatsPerBar: s.signature.beatsPerBar)
    }

    /// Bar, beat and tick `beatsOrNaN` beats after the start of `startBar`.
    private static func position(beats beatsOrNaN: Double, startBar: Int, beatsPerBar: Int) -> (bar: Int, beat: Int, tick: Int) {
        let totalBeats = beatsOrNaN.isNaN ? 0 : beatsOrNaN
        // Any Int64 frame at any tempo stays far inside Int's range once clamped like this.
        let wholeBeats = Int(min(max(totalBeats.rounded(.down), -1e15), 1e15))
        let fraction = min(max(totalBeats - Double(wholeBeats), 0), 1)
        let tick = min(Int((fraction * Double(TempoMap.ticksPerBeat)).rounded(.down)), TempoMap.ticksPerBeat - 1)
        let perBar = max(beatsPerBar, 1)
        let bar = wholeBeats >= 0 ? wholeBeats / perBar : (wholeBeats - perBar + 1) / perBar
        let beat = wholeBeats - bar * perBar
        return (startBar + bar, beat + 1, tick)
    }

    /// The time signature in force at bar `bar`.
    public func signature(atBar bar: Int) -> TimeSignature {
        meterChanges.last { $0.bar <= bar }?.signature ?? timeSignature
    }

    /// The time signature in force at `frame`.
    public func signature(atFrame frame: Int64) -> TimeSignature {
        isConstant ? timeSignature : signature(atBar: position(ofFrame: frame).bar)
    }

    /// The tempo (beats of the meter in force a minute) at `frame`; within a ramp, the
    /// tempo at that very frame.
    public func tempo(atFrame frame: Int64) -> Double {
        if isConstant { return tempoBPM }
        let segments = self.segments
        let s = segments[TempoSegment.index(ofFrame: Double(frame), in: segments)]
        return s.tempo(seconds: max(0, (Double(frame) - s.startFrame) / Double(sampleRate)))
    }

    /// Beats from the start of bar 1 to `frame`, each counted in the meter it lies in (what
    /// plugins are told as the song position).
    public func beatPosition(atFrame frame: Int64) -> Double {
        if isConstant { return Double(frame) / framesPerBeat }
        let segments = self.segments
        let i = TempoSegment.index(ofFrame: Double(frame), in: segments)
        let s = segments[i]
        return s.startBeat + s.beats(seconds: (Double(frame) - s.startFrame) / Double(sampleRate))
    }

    /// The length of `bars` bars of count-in into `frame`: bars of the meter and tempo at
    /// `frame` (a count-in into bar 17 counts bar 17's, whatever lies before it).
    public func countInFrames(bars: Int, into frame: Int64) -> Int64 {
        Int64((Double(bars) * framesPerBar(atFrame: frame)).rounded())
    }

    /// How long a bar of the meter and tempo at `frame` lasts.
    public func framesPerBar(atFrame frame: Int64) -> Double {
        Double(signature(atFrame: frame).beatsPerBar) * Double(sampleRate) * 60 / tempo(atFrame: frame)
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

/// A tempo change: from bar `bar` (its first beat) on, `bpm` beats of the meter in force a
/// minute. Ramped, the tempo glides there from the change before, linearly in time.
public struct TempoChange: Codable, Equatable, Sendable {
    /// The bar it takes effect at, from 2 (bar 1 has the session's tempo).
    public var bar: Int
    /// Beats per minute from `bar` on.
    public var bpm: Double
    /// Whether the tempo ramps into this one from the change before.
    public var ramp: Bool

    /// Creates a change.
    public init(bar: Int, bpm: Double, ramp: Bool = false) {
        self.bar = bar
        self.bpm = bpm
        self.ramp = ramp
    }
}

/// A meter change: from bar `bar` on, `signature`.
public struct MeterChange: Codable, Equatable, Sendable {
    /// The bar it takes effect at, from 2 (bar 1 has the session's signature).
    public var bar: Int
    /// The time signature from `bar` on.
    public var signature: TimeSignature

    /// Creates a change.
    public init(bar: Int, signature: TimeSignature) {
        self.bar = bar
        self.signature = signature
    }
}
