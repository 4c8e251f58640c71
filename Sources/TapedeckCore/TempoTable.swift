/// Where the tempo map stands at a frame: what the audio thread tells nodes and the click.
public struct TempoPoint: Equatable, Sendable {
    /// Beats from bar 1 (each counted in the meter it lies in).
    public var beatPosition: Double
    /// Beats from bar 1 to the start of the bar the frame lies in.
    public var barStartBeat: Double
    /// The tempo at the frame, beats of the meter a minute.
    public var bpm: Double
    /// How fast the tempo moves there: BPM a frame (0 unless on a ramp).
    public var bpmPerFrame: Double
    /// The bar the frame lies in (from 1; before bar 1, 0 and below).
    public var bar: Int
    /// The meter there.
    public var beatsPerBar: Int
    public var beatUnit: Int
    /// The frame the next segment starts at (where tempo or meter changes next; infinity
    /// in the last).
    public var nextChangeFrame: Double
}

/// A tempo map's segments in plain memory, for the audio thread: looking up a frame walks a
/// cursor (a jump searches), never allocates, never touches reference counts. Built on the
/// control thread with the graph; read by one thread at a time.
public final class TempoTable: @unchecked Sendable {
    private let segments: UnsafeMutablePointer<TempoSegment>
    private let cursor: UnsafeMutablePointer<Int>
    /// How many segments (at least one).
    public let count: Int
    private let sampleRate: Double

    /// The table of `map`. Control thread.
    public init(_ map: TempoMap) {
        let list = map.segments
        count = list.count
        segments = .allocate(capacity: count)
        segments.initialize(from: list, count: count)
        cursor = .allocate(capacity: 1)
        cursor.initialize(to: 0)
        sampleRate = Double(max(map.sampleRate, 1))
    }

    deinit {
        segments.deinitialize(count: count)
        segments.deallocate()
        cursor.deallocate()
    }

    /// The map at timeline frame `frame` (before bar 1: bar 1's tempo and meter, counted back).
    ///
    /// Audio thread: no allocation, no locks.
    public func point(atFrame frame: Double) -> TempoPoint {
        var i = cursor.pointee
        if i >= count || segments[i].startFrame > frame || (i + 1 < count && segments[i + 1].startFrame <= frame) {
            // Not the segment last read (a jump, a locate, the next segment): search.
            i = TempoSegment.lastIndex(UnsafeBufferPointer(start: segments, count: count), atMost: frame) { $0.startFrame }
            cursor.pointee = i
        }
        return segments[i].point(atFrame: frame, sampleRate: sampleRate, nextChangeFrame: i + 1 < count ? segments[i + 1].startFrame : .infinity)
    }
}

extension TempoSegment {
    /// The map at `frame`, which lies in this segment (or before bar 1, in the first).
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    func point(atFrame frame: Double, sampleRate: Double, nextChangeFrame: Double) -> TempoPoint {
        let t = (frame - startFrame) / sampleRate
        let beats = self.beats(seconds: t)
        let perBar = Double(max(signature.beatsPerBar, 1))
        let bars = (beats / perBar).rounded(.down)
        let barStart = startBeat + bars * perBar
        let slope = acceleration == 0 || t < 0 ? 0 : 2 * acceleration / sampleRate
        return TempoPoint(beatPosition: startBeat + beats, barStartBeat: barStart, bpm: tempo(seconds: max(t, 0)),
                          bpmPerFrame: slope, bar: startBar + Int(min(max(bars, -1e15), 1e15)),
                          beatsPerBar: signature.beatsPerBar, beatUnit: signature.beatUnit,
                          nextChangeFrame: nextChangeFrame)
    }
}

extension TempoMap {
    /// The map at `frame` (as the audio thread's ``TempoTable`` reads it). Control thread.
    public func point(atFrame frame: Double) -> TempoPoint {
        let segments = self.segments
        let i = TempoSegment.index(ofFrame: frame, in: segments)
        return segments[i].point(atFrame: frame, sampleRate: Double(max(sampleRate, 1)),
                                 nextChangeFrame: i + 1 < segments.count ? segments[i + 1].startFrame : .infinity)
    }

    /// The frame (unrounded) where the song position reaches `beats` beats from bar 1.
    public func frame(atBeatPosition beats: Double) -> Double {
        if isConstant { return beats * framesPerBeat }
        let segments = self.segments
        let s = segments[TempoSegment.lastIndex(segments, atMost: beats) { $0.startBeat }]
        return s.startFrame + s.seconds(beats: beats - s.startBeat) * Double(sampleRate)
    }
}
