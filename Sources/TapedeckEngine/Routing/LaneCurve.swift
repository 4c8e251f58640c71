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

/// One lane as the audio thread reads it: its points in one flat table behind its cursor
/// (one allocation: at 256 automated strips a period, every lane's data in separate tables
/// was cache misses enough to cost a tenth of the period), and a cursor that walks forward
/// with the playhead (a jump back searches again), so reading a value costs a comparison or
/// two, never an allocation.
final class LaneCurve: @unchecked Sendable {
    /// The cursor and the ends (one cache line: ``Head``), then the points.
    private let storage: UnsafeMutableRawPointer
    private static let pointsOffset = 64
    private let points: UnsafeMutablePointer<LanePoint>
    let count: Int
    let parameter: AutomationParameter
    private let isLevel: Bool
    private let steps: Bool
    /// The segment last read: points `cursor` and `cursor + 1`. Audio thread. In plain
    /// memory: a class's stored `var` is checked for exclusive access at every use.
    private var cursor: Int {
        @inline(__always) get { head.pointee.cursor }
        @inline(__always) set { head.pointee.cursor = newValue }
    }
    /// The cursor and the first and last points' frames and values, beside it: reading a
    /// value before, inside or after the points touches this line and the segment only.
    private struct Head {
        var cursor: Int
        var firstFrame: Int64, lastFrame: Int64
        var firstValue: Double, lastValue: Double
        var firstAmplitude: Double, lastAmplitude: Double
    }
    private let head: UnsafeMutablePointer<Head>

    /// The lane's points (it has at least one). Control thread.
    init(_ lane: AutomationLane) {
        count = max(lane.points.count, 1)
        parameter = lane.parameter
        isLevel = lane.parameter.isLevel
        if case .mute = lane.parameter { steps = true } else { steps = false }
        storage = .allocate(byteCount: LaneCurve.pointsOffset + count * MemoryLayout<LanePoint>.stride, alignment: 64)
        head = storage.bindMemory(to: Head.self, capacity: 1)
        points = (storage + LaneCurve.pointsOffset).bindMemory(to: LanePoint.self, capacity: count)
        if lane.points.isEmpty {
            points.initialize(to: LanePoint(frame: 0, value: 0, amplitude: Decibels.toLinear(0), exponential: false))
        }
        for (i, p) in lane.points.enumerated() {
            (points + i).initialize(to: LanePoint(frame: p.frame, value: p.value, amplitude: Decibels.toLinear(p.value),
                                                  exponential: p.curve == .exponential))
        }
        let first = points[0], last = points[count - 1]
        head.initialize(to: Head(cursor: 0, firstFrame: first.frame, lastFrame: last.frame, firstValue: first.value,
                                 lastValue: last.value, firstAmplitude: first.amplitude, lastAmplitude: last.amplitude))
    }

    deinit {
        points.deinitialize(count: count)
        head.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Places the cursor on the segment holding `frame`: `points[cursor].frame <= frame <
    /// points[cursor + 1].frame` between the first and last points (at an end, the nearest segment).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private func seek(_ frame: Int64) {
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
    }

    /// The points around `frame`: the last at or before it (Int64.min: none) and the first
    /// after it (Int64.max: none).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func corners(around frame: Int64) -> (before: Int64, after: Int64) {
        let h = head.pointee
        if frame < h.firstFrame { return (.min, h.firstFrame) }
        if frame >= h.lastFrame { return (h.lastFrame, .max) }
        seek(frame)
        return (points[cursor].frame, points[cursor + 1].frame)
    }

    /// A level lane's value at timeline frame `frame` as an amplitude: along a linear segment
    /// straight in amplitude (no dB round trip), along an exponential one in dB — as
    /// ``value(at:)`` then ``Decibels/toLinear(_:)`` would give it, without the logarithm.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func amplitude(at frame: Int64) -> Double {
        let h = head.pointee
        if frame <= h.firstFrame { return h.firstAmplitude }
        if frame >= h.lastFrame { return h.lastAmplitude }
        seek(frame)
        let a = cursor, b = cursor + 1
        let t = Double(frame - points[a].frame) / Double(points[b].frame - points[a].frame)
        if points[a].exponential && !Fader.isSilent(points[a].value) && !Fader.isSilent(points[b].value) {
            return Decibels.toLinear(points[a].value + (points[b].value - points[a].value) * t)
        }
        return points[a].amplitude + (points[b].amplitude - points[a].amplitude) * t
    }

    /// The lane's value at timeline frame `frame` (as ``AutomationLane/value(at:)`` has it).
    ///
    /// Audio thread: no allocation, no locks.
    func value(at frame: Int64) -> Double {
        let h = head.pointee
        if frame <= h.firstFrame { return h.firstValue }
        if frame >= h.lastFrame { return h.lastValue }
        seek(frame)
        let a = cursor, b = cursor + 1
        if steps { return points[a].value }
        let t = Double(frame - points[a].frame) / Double(points[b].frame - points[a].frame)
        return AutomationLane.interpolate(points[a].value, points[b].value, t: t, curve: points[a].exponential ? .exponential : .linear, isLevel: isLevel)
    }
}
