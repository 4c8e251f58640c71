/// Automation written by hand while the transport rolls: a lane in touch, latch or write mode
/// takes the moves of its control (a learnt controller, a key, a remote command) as they are
/// heard, and when the pass ends they replace the lane's points over the stretch written.
///
/// The points drawn are the curve that was heard: a level or pan glides to each new value over
/// ``glideFrames`` from the timeline frame it was heard from (as the engine's fader does), so
/// each move writes where the glide began and where it arrived, and playing the lane back
/// moves the fader as the hand did. Mute steps; a node's parameter is written as set (the node
/// smooths it itself, both times).
///
/// Pure: the front-end feeds it moves, the time, and where the transport is; it hands back
/// the edits (``AutomationWrite``) for the session.
public struct AutomationWriter: Sendable {
    /// A move glides this many timeline frames (the engine's fader glide).
    public let glideFrames: Int64
    /// A touch with no move for this long lets go (a controller cannot say it was released).
    public var touchTimeoutNanoseconds: Int64 = 500_000_000

    /// One lane being written.
    struct Pass: Sendable {
        var track: String
        var parameter: AutomationParameter
        var mode: AutomationMode
        /// The lane as it was before the pass (what a touch returns to).
        var original: AutomationLane
        var startFrame: Int64
        var lastMoveFrame: Int64
        var lastValue: Double
        var lastMoveNanoseconds: Int64
        var points: [AutomationPoint]
    }

    private var passes: [Pass] = []

    /// A writer whose moves glide over `glideFrames`.
    public init(glideFrames: Int64) { self.glideFrames = max(glideFrames, 0) }

    /// Whether any lane is being written.
    public var isWriting: Bool { !passes.isEmpty }

    /// The lanes being written (track name, parameter).
    public var held: [(track: String, parameter: AutomationParameter)] { passes.map { ($0.track, $0.parameter) } }

    /// Whether `lane` of `track` is being written.
    public func isWriting(track: String, parameter: AutomationParameter) -> Bool {
        index(track, parameter) != nil
    }

    /// The value last written to `parameter` of `track`, when it is being written.
    public func lastValue(track: String, parameter: AutomationParameter) -> Double? {
        index(track, parameter).map { passes[$0].lastValue }
    }

    private func index(_ track: String, _ parameter: AutomationParameter) -> Int? {
        let t = track.lowercased(), p = parameter.description.lowercased()
        return passes.firstIndex { $0.track.lowercased() == t && $0.parameter.description.lowercased() == p }
    }

    /// Whether a lane in `mode` takes moves.
    public static func writes(_ mode: AutomationMode) -> Bool { mode == .touch || mode == .latch || mode == .write }

    /// Starts writing `lane` (mode write) from `frame`, where the transport began to roll,
    /// at the control's value `value`. Nothing for a lane in another mode or already written.
    public mutating func begin(track: String, lane: AutomationLane, value: Double, at frame: Int64, nanoseconds: Int64) {
        guard lane.mode == .write, index(track, lane.parameter) == nil, frame >= 0 else { return }
        passes.append(Pass(track: track, parameter: lane.parameter, mode: .write, original: lane, startFrame: frame,
                           lastMoveFrame: frame, lastValue: value, lastMoveNanoseconds: nanoseconds,
                           points: [AutomationPoint(frame: frame, value: value)]))
    }

    /// `lane` of `track`'s control moved by hand to `value`, heard from timeline frame `frame`
    /// at `nanoseconds` (monotonic). Returns what a pass the move ended wrote: a move back
    /// along the timeline (a loop, a locate) ends the pass before it, and a new one begins.
    public mutating func move(track: String, lane: AutomationLane, value: Double, at frame: Int64,
                              nanoseconds: Int64) -> [AutomationWrite] {
        guard AutomationWriter.writes(lane.mode), frame >= 0, !value.isNaN else { return [] }
        var finished: [AutomationWrite] = []
        if let k = index(track, lane.parameter), frame < passes[k].lastMoveFrame {
            let old = passes.remove(at: k)
            finished.append(end(old, releaseFrame: old.lastMoveFrame + glideFrames, held: old.mode != .touch))
        }
        let k: Int
        if let existing = index(track, lane.parameter) {
            k = existing
        } else {
            // A touch begins where the lane was: the glide starts from the lane's value.
            let start = glides(lane.parameter) ? max(frame - 1, 0) : frame
            let from = lane.value(at: start) ?? value
            passes.append(Pass(track: track, parameter: lane.parameter, mode: lane.mode, original: lane, startFrame: start,
                               lastMoveFrame: frame, lastValue: from, lastMoveNanoseconds: nanoseconds,
                               points: [AutomationPoint(frame: start, value: from)]))
            k = passes.count - 1
        }
        var pass = passes[k]
        if glides(pass.parameter) {
            // The engine's glide steps on from the frame before `frame` (its first frame already
            // moves, its last arrives): drawn from there, from where the curve written so far
            // stands (mid-glide, when a move comes before the last one arrived).
            let from = max(frame - 1, 0)
            let before = AutomationWriter.value(of: pass.points, at: from, parameter: pass.parameter) ?? pass.lastValue
            pass.points.removeAll { $0.frame >= from }
            pass.points.append(AutomationPoint(frame: from, value: before))
            pass.points.append(AutomationPoint(frame: from + glideFrames, value: value))
        } else {
            pass.points.removeAll { $0.frame >= frame }
            pass.points.append(AutomationPoint(frame: frame, value: value))
        }
        pass.lastMoveFrame = frame
        pass.lastValue = value
        pass.lastMoveNanoseconds = nanoseconds
        passes[k] = pass
        return finished
    }

    /// Touches idle for ``touchTimeoutNanoseconds`` at `nanoseconds` let go, at timeline frame
    /// `frame` (where the transport is): their writes, each returning to its lane.
    public mutating func releaseIdle(at nanoseconds: Int64, frame: Int64) -> [AutomationWrite] {
        var out: [AutomationWrite] = []
        var k = 0
        while k < passes.count {
            let p = passes[k]
            if p.mode == .touch && nanoseconds - p.lastMoveNanoseconds >= touchTimeoutNanoseconds {
                out.append(end(passes.remove(at: k), releaseFrame: frame, held: false))
            } else {
                k += 1
            }
        }
        return out
    }

    /// What each lane being written holds so far, as if its pass ended at timeline frame
    /// `frame` (where the transport is) with the hand still on it: the points written, the
    /// last value held to `frame`. Changes nothing: a front-end draws the lanes from it while
    /// the pass runs (the edit itself comes when the pass ends).
    public func inProgress(at frame: Int64) -> [AutomationWrite] {
        passes.map { end($0, releaseFrame: frame, held: true) }
    }

    /// The transport stopped (or left the stretch being written) at timeline frame `frame`:
    /// every pass ends there — a touch returns to its lane, a latch and a write hold their
    /// last value to `frame`.
    public mutating func stop(at frame: Int64) -> [AutomationWrite] {
        let all = passes
        passes.removeAll()
        return all.map { end($0, releaseFrame: frame, held: $0.mode != .touch) }
    }

    /// The edit a finished pass makes: its points replace the lane's from where it began to
    /// where it ended. A touch let go at `releaseFrame` holds its value there, then glides back
    /// to the lane; a held pass (latch, write) holds its value to `releaseFrame`.
    private func end(_ pass: Pass, releaseFrame: Int64, held: Bool) -> AutomationWrite {
        var points = pass.points
        let last = points.last?.frame ?? pass.startFrame
        let release = max(releaseFrame, last)
        if release > last { points.append(AutomationPoint(frame: release, value: pass.lastValue)) }
        var endFrame = release + 1
        if !held, pass.mode == .touch || pass.mode == .latch, let back = pass.original.value(at: release + max(glideFrames, 1)) {
            // Back to the lane, over a glide: the lane's own points after it stay.
            let at = release + max(glideFrames, 1)
            points.append(AutomationPoint(frame: at, value: back))
            endFrame = at + 1
        }
        return AutomationWrite(track: pass.track, parameter: pass.parameter, range: FrameRange(startFrame: pass.startFrame, endFrame: endFrame),
                               points: points)
    }

    private func glides(_ parameter: AutomationParameter) -> Bool {
        switch parameter {
        case .gain, .pan, .send: return glideFrames > 0
        case .mute, .node: return false
        }
    }

    /// The value of a curve of `points` at `frame` (as a lane of them has it).
    static func value(of points: [AutomationPoint], at frame: Int64, parameter: AutomationParameter) -> Double? {
        AutomationLane(parameter: parameter, points: points).value(at: frame)
    }
}

/// A stretch of a lane written by hand: `points` replace the lane's points in `range`.
public struct AutomationWrite: Sendable, Equatable {
    /// The track (by name).
    public var track: String
    /// The lane.
    public var parameter: AutomationParameter
    /// The stretch replaced.
    public var range: FrameRange
    /// The points written there.
    public var points: [AutomationPoint]
}

extension AutomationLane {
    /// Writes `write` over this lane: its points in the stretch go, the written ones come in.
    public mutating func apply(_ write: AutomationWrite) {
        clear(write.range)
        add(contentsOf: write.points)
    }
}

extension Session {
    /// Writes each of `writes` over its track's lane (a track or lane gone since is passed
    /// over); the names of the lanes written, "TRACK PARAM", sorted, once each.
    @discardableResult
    public mutating func apply(_ writes: [AutomationWrite]) -> [String] {
        var names = Set<String>()
        for w in writes {
            guard let t = tracks.firstIndex(where: { $0.name == w.track }), let k = tracks[t].laneIndex(w.parameter) else { continue }
            tracks[t].automation[k].apply(w)
            names.insert("\(w.track) \(w.parameter)")
        }
        return names.sorted()
    }
}
