import CPrefetch
#if canImport(Glibc)
import Glibc
#endif
import TapedeckCore
import TapedeckDSP

/// One point of a lane as the audio thread reads it: 32 bytes, so the two points of a
/// segment share one or two cache lines.
struct LanePoint {
    var frame: Int64
    var value: Double
    /// A level lane's value as an amplitude (a fade read as gains needs no dB round trip).
    var amplitude: Double
    var exponential: Bool
}

/// How a segment's value runs from its first point toward its second, as
/// ``AutomationLane/interpolate(_:_:t:curve:isLevel:)`` has it, worked out once per segment as
/// a slope per frame, so that a read costs a multiply and an add, not a division by the
/// segment's length and the curve's branches.
enum SegmentShape: UInt8 {
    /// A mute's step: the first point's value throughout.
    case steps
    /// Straight in value.
    case linear
    /// Exponential between two positive values: the first × e^(slope × frames).
    case geometric
    /// A level along an exponential segment between audible levels: straight in dB.
    case decibels
    /// A level along a linear segment, or to or from silence: straight in amplitude.
    case amplitude
}

/// The segment of a lane last read — from point `cursor` at `lo` to point `cursor + 1` at
/// `hi` — with its value's and amplitude's start and slope and the lane's kind, so that
/// reading inside it needs this one cache line (64 bytes) and nothing else of the lane, not
/// even the ``LaneCurve`` object. Written by the audio thread; in plain memory (a class's
/// stored `var` is checked for exclusive access at every use), the strip's own block for
/// the fader, pan, mute and node parameter lanes (``StripAutomation``), the lane's for the
/// rest.
struct LaneSegment {
    var lo: Int64, hi: Int64
    /// The value at `lo`, and its slope per frame (in the segment's ``shape``).
    var loValue: Double, valueSlope: Double
    /// A level lane's amplitude at `lo`, and its slope per frame (straight in amplitude).
    var loAmplitude: Double, amplitudeSlope: Double
    /// 32 bits, so that ``ahead`` fits the same line (a lane has far fewer points).
    var cursor: Int32
    var shape: SegmentShape
    /// `lo` is the first point's frame, where the lane reads the first point as it is (a
    /// value worked out from the segment could round otherwise): the segment serves the
    /// frames after it only.
    var startsAfterLo: Bool
    /// The lane's kind: a mute's steps, a level's curve.
    var steps: Bool
    var isLevel: Bool
    /// Point `cursor + 1`, where the next segment begins (nil: no segment): fetched into the
    /// cache as the playhead nears `hi`, with the lane's object and ends, so that the period that
    /// crosses a point does not wait on memory. (Lanes with points at the same frames all
    /// cross in one period: read cold, that period's reads were the automated session's
    /// slowest, its p99.9.)
    var ahead: UnsafeRawPointer?

    /// The segment from `a` to `b` of a lane of this kind (`steps`, `isLevel`).
    ///
    /// Audio thread: arithmetic (a logarithm for a geometric segment), when the cursor moves.
    @inline(__always)
    static func between(_ a: LanePoint, _ b: LanePoint, steps: Bool, isLevel: Bool) -> (shape: SegmentShape, valueSlope: Double,
                                                                                            amplitudeSlope: Double) {
        let frames = Double(b.frame - a.frame)
        let amplitudeSlope = (b.amplitude - a.amplitude) / frames
        if steps { return (.steps, 0, amplitudeSlope) }
        if isLevel {
            if a.exponential && !Fader.isSilent(a.value) && !Fader.isSilent(b.value) {
                return (.decibels, (b.value - a.value) / frames, amplitudeSlope)
            }
            return (.amplitude, 0, amplitudeSlope)
        }
        if a.exponential && a.value > 0 && b.value > 0 { return (.geometric, log(b.value / a.value) / frames, amplitudeSlope) }
        return (.linear, (b.value - a.value) / frames, amplitudeSlope)
    }

    /// Frames before `hi` from which the crossing's memory is fetched ahead: a few periods
    /// at 32 frames, so the fetches are spread and done before the crossing.
    static let aheadFrames: Int64 = 256

    /// Fetches into the cache what crossing `hi` will read of `lane`: its object, its ends
    /// and the points of the next segment. A hint: it never waits. Asked at every read in
    /// the last ``aheadFrames``: fetched once per segment, 96 frames ahead, the lines were
    /// often gone again by the crossing (`bench automation` p99.9 71–75 % against 68–69 %).
    ///
    /// Audio thread: prefetch instructions only.
    @inline(__always)
    static func fetchAhead(_ segment: UnsafeMutablePointer<LaneSegment>, _ lane: Unmanaged<LaneCurve>) {
        guard let ahead = segment.pointee.ahead else { return }
        let object = UnsafeRawPointer(lane.toOpaque())
        td_prefetch(object)
        td_prefetch(object + 64)
        td_prefetch(ahead)
        td_prefetch(ahead + MemoryLayout<LanePoint>.stride)
        // The ends sit in the line before the points.
        td_prefetch(ahead - (Int(segment.pointee.cursor) + 1) * MemoryLayout<LanePoint>.stride - 64)
    }

    /// Whether `frame` lies inside the segment, away from the lane's ends: there the segment
    /// alone gives the lane's value.
    ///
    /// Audio thread: arithmetic.
    @inline(__always)
    func serves(_ frame: Int64) -> Bool {
        frame < hi && (frame > lo || (frame == lo && !startsAfterLo))
    }

    /// The lane's value at `frame`, inside the segment (as ``AutomationLane/value(at:)`` has it).
    ///
    /// Audio thread: arithmetic.
    @inline(__always)
    func value(at frame: Int64) -> Double {
        let d = Double(frame &- lo)
        switch shape {
        case .steps: return loValue
        case .linear, .decibels: return loValue + valueSlope * d
        case .geometric: return loValue * exp(valueSlope * d)
        case .amplitude: return Fader.stored(Decibels.fromLinear(loAmplitude + amplitudeSlope * d))
        }
    }

    /// A level lane's value at `frame` as an amplitude, inside the segment: along a linear
    /// segment straight in amplitude (no dB round trip), along an exponential one in dB.
    ///
    /// Audio thread: arithmetic.
    @inline(__always)
    func amplitude(at frame: Int64) -> Double {
        let d = Double(frame &- lo)
        if shape == .decibels { return Decibels.toLinear(loValue + valueSlope * d) }
        return loAmplitude + amplitudeSlope * d
    }
}

/// One lane as the audio thread reads it: its points in one flat table behind its ends
/// (one allocation: at 256 automated strips a period, every lane's data in separate tables
/// was cache misses enough to cost a tenth of the period), and a cursor that walks forward
/// with the playhead (a jump back searches again), so reading a value costs a comparison or
/// two, never an allocation. The cursor's segment is kept in a ``LaneSegment``, so a block
/// inside one segment — all but one block in many at a point every tenth of a second —
/// reads one cache line of the lane (the static readers given the segment: not even the
/// object's), not the lines of the cursor, of the ends and of the points.
final class LaneCurve: @unchecked Sendable {
    /// The ends (one cache line: ``Ends``), then the points; the segment before them unless
    /// it lives elsewhere.
    private let storage: UnsafeMutableRawPointer
    private let points: UnsafeMutablePointer<LanePoint>
    let count: Int
    let parameter: AutomationParameter
    /// The cursor's segment. Audio thread.
    let segment: UnsafeMutablePointer<LaneSegment>
    /// The first and last points' frames, values and amplitudes: reading before the first or
    /// after the last point touches this line and the segment's only.
    private struct Ends {
        var firstFrame: Int64, lastFrame: Int64
        var firstValue: Double, lastValue: Double
        var firstAmplitude: Double, lastAmplitude: Double
    }
    private let ends: UnsafeMutablePointer<Ends>

    /// The lane's points (it has at least one), its segment kept at `segment` (memory that
    /// outlives the lane's use, 64 bytes, its owner's to free) or, when nil, in the lane's own
    /// storage. Control thread.
    init(_ lane: AutomationLane, segment external: UnsafeMutableRawPointer? = nil) {
        count = max(lane.points.count, 1)
        parameter = lane.parameter
        let own = external == nil ? 64 : 0
        storage = .allocate(byteCount: own + 64 + count * MemoryLayout<LanePoint>.stride, alignment: 64)
        segment = (external ?? storage).bindMemory(to: LaneSegment.self, capacity: 1)
        ends = (storage + own).bindMemory(to: Ends.self, capacity: 1)
        points = (storage + own + 64).bindMemory(to: LanePoint.self, capacity: count)
        if lane.points.isEmpty {
            points.initialize(to: LanePoint(frame: 0, value: 0, amplitude: Decibels.toLinear(0), exponential: false))
        }
        for (i, p) in lane.points.enumerated() {
            (points + i).initialize(to: LanePoint(frame: p.frame, value: p.value, amplitude: Decibels.toLinear(p.value),
                                                  exponential: p.curve == .exponential))
        }
        let first = points[0], last = points[count - 1]
        ends.initialize(to: Ends(firstFrame: first.frame, lastFrame: last.frame, firstValue: first.value,
                                 lastValue: last.value, firstAmplitude: first.amplitude, lastAmplitude: last.amplitude))
        var steps = false
        if case .mute = lane.parameter { steps = true }
        // One point: no segment (an empty one, which no frame is inside).
        segment.initialize(to: LaneSegment(lo: 0, hi: 0, loValue: 0, valueSlope: 0, loAmplitude: 0, amplitudeSlope: 0, cursor: 0,
                                           shape: .steps, startsAfterLo: false, steps: steps, isLevel: lane.parameter.isLevel,
                                           ahead: nil))
        if count > 1 { load(0) }
    }

    deinit {
        points.deinitialize(count: count)
        ends.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Makes segment `cursor` (points `cursor`, `cursor + 1`) the kept one.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private func load(_ cursor: Int) {
        let a = points[cursor], b = points[cursor + 1]
        let s = segment.pointee
        let run = LaneSegment.between(a, b, steps: s.steps, isLevel: s.isLevel)
        segment.pointee = LaneSegment(lo: a.frame, hi: b.frame, loValue: a.value, valueSlope: run.valueSlope, loAmplitude: a.amplitude,
                                      amplitudeSlope: run.amplitudeSlope, cursor: Int32(truncatingIfNeeded: cursor), shape: run.shape,
                                      startsAfterLo: a.frame <= ends.pointee.firstFrame, steps: s.steps, isLevel: s.isLevel,
                                      ahead: UnsafeRawPointer(points + cursor + 1))
    }

    /// Places the cursor on the segment holding `frame` and keeps it: `points[cursor].frame
    /// <= frame < points[cursor + 1].frame` between the first and last points (at an end,
    /// the nearest segment). Only with two points or more.
    ///
    /// Audio thread: no allocation, no locks.
    private func seek(_ frame: Int64) {
        var cursor = Int(segment.pointee.cursor)
        if frame < points[cursor].frame {
            // Back (a locate, a loop): search again.
            var lo = 0, hi = max(count - 1, 0)
            while lo + 1 < hi {
                let mid = (lo + hi) / 2
                if points[mid].frame <= frame { lo = mid } else { hi = mid }
            }
            cursor = lo
        }
        while cursor + 1 < count - 1 && points[cursor + 1].frame <= frame { cursor += 1 }
        load(cursor)
    }

    /// The points around `frame`: the last at or before it (Int64.min: none) and the first
    /// after it (Int64.max: none).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func corners(around frame: Int64) -> (before: Int64, after: Int64) {
        LaneCurve.corners(segment, Unmanaged.passUnretained(self), around: frame)
    }

    /// A level lane's value at timeline frame `frame` as an amplitude: along a linear segment
    /// straight in amplitude (no dB round trip), along an exponential one in dB — as
    /// ``value(at:)`` then ``Decibels/toLinear(_:)`` would give it, without the logarithm.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func amplitude(at frame: Int64) -> Double {
        LaneCurve.amplitude(segment, Unmanaged.passUnretained(self), at: frame)
    }

    /// The lane's value at timeline frame `frame` (as ``AutomationLane/value(at:)`` has it).
    ///
    /// Audio thread: no allocation, no locks.
    func value(at frame: Int64) -> Double {
        LaneCurve.value(segment, Unmanaged.passUnretained(self), at: frame)
    }

    /// ``corners(around:)`` of `lane`, whose segment is `segment`: inside it, from the
    /// segment alone.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func corners(_ segment: UnsafeMutablePointer<LaneSegment>, _ lane: Unmanaged<LaneCurve>,
                        around frame: Int64) -> (before: Int64, after: Int64) {
        let s = segment.pointee
        if frame >= s.lo && frame < s.hi {
            if frame &+ LaneSegment.aheadFrames >= s.hi { LaneSegment.fetchAhead(segment, lane) }
            return (s.lo, s.hi)
        }
        return lane._withUnsafeGuaranteedRef { lane in
            let e = lane.ends.pointee
            if frame < e.firstFrame { return (.min, e.firstFrame) }
            if frame >= e.lastFrame { return (e.lastFrame, .max) }
            lane.seek(frame)
            return (segment.pointee.lo, segment.pointee.hi)
        }
    }

    /// ``amplitude(at:)`` of `lane`, whose segment is `segment`: inside it, from the segment alone.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func amplitude(_ segment: UnsafeMutablePointer<LaneSegment>, _ lane: Unmanaged<LaneCurve>, at frame: Int64) -> Double {
        let s = segment.pointee
        if s.serves(frame) {
            if frame &+ LaneSegment.aheadFrames >= s.hi { LaneSegment.fetchAhead(segment, lane) }
            return s.amplitude(at: frame)
        }
        return lane._withUnsafeGuaranteedRef { lane in
            let e = lane.ends.pointee
            if frame <= e.firstFrame { return e.firstAmplitude }
            if frame >= e.lastFrame { return e.lastAmplitude }
            lane.seek(frame)
            return segment.pointee.amplitude(at: frame)
        }
    }

    /// ``value(at:)`` of `lane`, whose segment is `segment`: inside it, from the segment alone.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func value(_ segment: UnsafeMutablePointer<LaneSegment>, _ lane: Unmanaged<LaneCurve>, at frame: Int64) -> Double {
        let s = segment.pointee
        if s.serves(frame) {
            if frame &+ LaneSegment.aheadFrames >= s.hi { LaneSegment.fetchAhead(segment, lane) }
            return s.value(at: frame)
        }
        return lane._withUnsafeGuaranteedRef { lane in
            let e = lane.ends.pointee
            if frame <= e.firstFrame { return e.firstValue }
            if frame >= e.lastFrame { return e.lastValue }
            lane.seek(frame)
            return segment.pointee.value(at: frame)
        }
    }
}
