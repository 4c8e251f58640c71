/// Automation: a strip's values moving over time. A lane holds points (timeline frame, value)
/// for one parameter — the fader, pan, mute, a send's level, or a node's parameter — and a
/// mode saying whether it plays, is written, or rests. Lanes are timeline data: read at
/// timeline frames, so at another speed a move arrives where the timeline has it.

/// What a lane moves.
public enum AutomationParameter: Hashable, Sendable, CustomStringConvertible {
    /// The fader, in dB (``Fader/silentDecibels`` is −∞).
    case gain
    /// Pan or balance, −1 … +1.
    case pan
    /// Mute: off below 0.5, on from it.
    case mute
    /// The level of the strip's send to a bus (by name), in dB.
    case send(String)
    /// A parameter of a node of the strip's chain: the node by its name in the chain (the first
    /// of that name: `lpf`) or its place (`2`), the parameter by its id (`cutoff`; an LV2
    /// plugin's port symbol).
    case node(String, String)

    /// `gain`, `pan`, `mute`, `send:BUS`, `NODE.PARAM`: as typed and stored.
    public var description: String {
        switch self {
        case .gain: return "gain"
        case .pan: return "pan"
        case .mute: return "mute"
        case .send(let bus): return "send:" + bus
        case .node(let node, let parameter): return node + "." + parameter
        }
    }

    /// Reads `gain`, `pan`, `mute`, `send:BUS` or `NODE.PARAM`; throws a line naming the forms.
    public static func parse(_ text: String) throws(AutomationError) -> AutomationParameter {
        let t = text.trimmingWhitespace()
        switch t.lowercased() {
        case "gain", "fader", "volume": return .gain
        case "pan", "balance": return .pan
        case "mute": return .mute
        default: break
        }
        if t.lowercased().hasPrefix("send:") {
            let bus = String(t.dropFirst(5)).trimmingWhitespace()
            guard !bus.isEmpty else { throw AutomationError("'\(t.terminalSafe)': send: needs the bus's name (send:Reverb)") }
            return .send(bus)
        }
        if let dot = t.lastIndex(of: "."), dot != t.startIndex, t.index(after: dot) != t.endIndex {
            let node = String(t[..<dot]), parameter = String(t[t.index(after: dot)...])
            if !node.contains(where: \.isWhitespace) && !parameter.contains(where: \.isWhitespace) { return .node(node, parameter) }
        }
        throw AutomationError("'\(t.terminalSafe)' is not a parameter: gain (dB), pan, mute, send:BUS or NODE.PARAM (lpf.cutoff)")
    }

    /// Whether the values are levels in dB (the fader, a send).
    public var isLevel: Bool {
        switch self {
        case .gain, .send: return true
        default: return false
        }
    }
}

/// How a lane is used.
public enum AutomationMode: String, Codable, Sendable, CaseIterable {
    /// Not played: the control's own value is heard.
    case off
    /// Played (read): the lane moves the control.
    case play
    /// Played, and while the control is touched its moves are written; released, the lane
    /// plays again.
    case touch
    /// As touch, but once touched the last value is held (written) until the transport stops.
    case latch
    /// While rolling, the control's value is written over the lane.
    case write

    /// Whether the lane drives the control while nothing is being written.
    public var plays: Bool { self != .off && self != .write }
}

/// How a lane moves from a point to the next.
public enum AutomationCurve: String, Codable, Sendable, CaseIterable {
    /// A straight line: in amplitude for levels (dB lanes), in value otherwise.
    case linear
    /// A straight line in dB for levels (a fader's even sweep), geometric for other positive
    /// values (a filter's cutoff sweeping evenly in octaves).
    case exponential
}

/// One point of a lane.
public struct AutomationPoint: Equatable, Sendable {
    /// Where on the timeline.
    public var frame: Int64
    /// The value there, in the parameter's unit.
    public var value: Double
    /// How the lane goes from here to the next point.
    public var curve: AutomationCurve

    /// Creates a point.
    public init(frame: Int64, value: Double, curve: AutomationCurve = .linear) {
        self.frame = frame
        self.value = value
        self.curve = curve
    }
}

/// A lane: one parameter's points, in frame order (one point a frame), and its mode.
public struct AutomationLane: Equatable, Sendable {
    /// What it moves.
    public var parameter: AutomationParameter
    /// How it is used (a lane with points plays unless its mode says otherwise).
    public var mode: AutomationMode
    /// The points, frame order, one per frame.
    public private(set) var points: [AutomationPoint]

    /// Creates a lane (points sorted; a later point at the same frame wins).
    public init(parameter: AutomationParameter, mode: AutomationMode = .play, points: [AutomationPoint] = []) {
        self.parameter = parameter
        self.mode = mode
        self.points = []
        for p in points { add(p) }
    }

    /// Sets every point at once; `sorted` must already be in frame order, one per frame.
    mutating func replacePoints(_ sorted: [AutomationPoint]) { points = sorted }

    /// Adds `point`, replacing one at the same frame.
    public mutating func add(_ point: AutomationPoint) {
        let at = insertionIndex(point.frame)
        if at < points.count && points[at].frame == point.frame { points[at] = point } else { points.insert(point, at: at) }
    }

    /// Adds many points at once (sorted and merged in one pass: a CSV of a million points).
    public mutating func add(contentsOf new: [AutomationPoint]) {
        var merged = points + new
        // Stable, so a later point at the same frame comes after and wins.
        merged = merged.enumerated().sorted { $0.element.frame != $1.element.frame ? $0.element.frame < $1.element.frame : $0.offset < $1.offset }
            .map(\.element)
        var out: [AutomationPoint] = []
        out.reserveCapacity(merged.count)
        for p in merged { if let last = out.last, last.frame == p.frame { out[out.count - 1] = p } else { out.append(p) } }
        points = out
    }

    /// Removes the points in `range` (all of them when nil); returns how many.
    @discardableResult
    public mutating func clear(_ range: FrameRange? = nil) -> Int {
        let before = points.count
        if let range { points.removeAll { $0.frame >= range.startFrame && $0.frame < range.endFrame } } else { points.removeAll() }
        return before - points.count
    }

    /// Moves every point in `range` by `frames` (clamped at 0); later points at the same frames win.
    public mutating func move(_ range: FrameRange, by frames: Int64) {
        let moving = points.filter { $0.frame >= range.startFrame && $0.frame < range.endFrame }
        guard !moving.isEmpty, frames != 0 else { return }
        points.removeAll { $0.frame >= range.startFrame && $0.frame < range.endFrame }
        add(contentsOf: moving.map { AutomationPoint(frame: max(0, $0.frame + frames), value: $0.value, curve: $0.curve) })
    }

    /// The first index whose frame is at or after `frame`.
    public func insertionIndex(_ frame: Int64) -> Int {
        var lo = 0, hi = points.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if points[mid].frame < frame { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The lane's value at `frame`: the first point's before it, the last's after it, between
    /// two points along the first's curve (mute steps at each point). Nil with no points.
    public func value(at frame: Int64) -> Double? {
        guard let first = points.first else { return nil }
        if frame <= first.frame { return first.value }
        let i = insertionIndex(frame)
        guard i < points.count else { return points[points.count - 1].value }
        if points[i].frame == frame { return points[i].value }
        return AutomationLane.interpolate(points[i - 1], points[i], at: frame, parameter: parameter)
    }

    /// The value between `a` and `b` at `frame` (a.frame < frame < b.frame) along `a`'s curve.
    public static func interpolate(_ a: AutomationPoint, _ b: AutomationPoint, at frame: Int64,
                                   parameter: AutomationParameter) -> Double {
        if case .mute = parameter { return a.value }
        let t = Double(frame - a.frame) / Double(b.frame - a.frame)
        return interpolate(a.value, b.value, t: t, curve: a.curve, isLevel: parameter.isLevel)
    }

    /// `from` to `to` at `t` (0…1) along `curve`; levels are dB.
    @inline(__always)
    public static func interpolate(_ from: Double, _ to: Double, t: Double, curve: AutomationCurve, isLevel: Bool) -> Double {
        if isLevel {
            if curve == .exponential && !Fader.isSilent(from) && !Fader.isSilent(to) { return from + (to - from) * t }
            // In amplitude: a fade from −∞ sounds as it should, not as a jump at the end.
            let a = Decibels.toLinear(from), b = Decibels.toLinear(to)
            return Fader.stored(Decibels.fromLinear(a + (b - a) * t))
        }
        if curve == .exponential && from > 0 && to > 0 { return from * pow(to / from, t) }
        return from + (to - from) * t
    }
}

/// Why an automation edit or lane cannot be: one line.
public struct AutomationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What and why.
    public let description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

#if canImport(Glibc)
import Glibc
#endif

extension AutomationParameter {
    /// Reads a value as a user types it for this parameter: a level in dB (`-6`, `+1.5`,
    /// `-inf`), a pan (`L20`, `C`, `R100`, `-0.2`), a mute (`on`, `off`, `1`, `0`), a node's
    /// number. Throws a line saying what this parameter takes.
    public func parseValue(_ text: String) throws(AutomationError) -> Double {
        let t = text.trimmingWhitespace()
        switch self {
        case .gain, .send:
            guard let db = Fader.parse(t), SessionLimits.gainDecibelsRange.contains(Fader.stored(db)) else {
                throw AutomationError("'\(t.terminalSafe)' is not a level for \(self): dB from -inf to +\(Int(SessionLimits.gainDecibelsRange.upperBound))")
            }
            return Fader.stored(db)
        case .pan:
            guard let p = Pan.parse(t) else { throw AutomationError("'\(t.terminalSafe)' is not a pan: L100…C…R100 or -1…1") }
            return p
        case .mute:
            switch t.lowercased() {
            case "on", "1", "yes", "true", "muted": return 1
            case "off", "0", "no", "false": return 0
            default: throw AutomationError("'\(t.terminalSafe)' is not a mute: on or off")
            }
        case .node:
            guard let v = Double(t), v.isFinite else { throw AutomationError("'\(t.terminalSafe)' is not a number for \(self)") }
            return v
        }
    }

    /// A value as ``parseValue(_:)`` reads it back: `-6.0`/`-inf` dB, `L20`, `on`, a number.
    public func valueText(_ value: Double) -> String {
        switch self {
        case .gain, .send: return Fader.text(value)
        case .pan: return Pan.text(value)
        case .mute: return value >= 0.5 ? "on" : "off"
        case .node: return AutomationParameter.shortText(value)
        }
    }

    /// A node parameter's value as a listing or a screen column shows it: whole numbers in
    /// full, others to four decimals below 10, fewer as the number grows (3333.3, 0.1235),
    /// trailing zeros dropped, never in exponent form. (In full, a value along a segment read
    /// 3333.3333333333335, and the screen's seven columns cut it to "3333334".) The CSV keeps
    /// every digit.
    static func shortText(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        if value == value.rounded() { return String(Int64(value)) }
        var decimals = 4
        var limit = 10.0
        while decimals > 0 && abs(value) >= limit {
            decimals -= 1
            limit *= 10
        }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let m = Int64((value * Double(scale)).rounded())
        var digits = String(abs(m) % scale)
        digits = String(repeating: "0", count: max(0, decimals - digits.count)) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return (m < 0 ? "-" : "") + String(abs(m) / scale) + (digits.isEmpty ? "" : "." + digits)
    }
}

extension Track {
    /// The index of this strip's lane for `parameter` (names any case), or nil.
    public func laneIndex(_ parameter: AutomationParameter) -> Int? {
        let key = parameter.description.lowercased()
        return automation.firstIndex { $0.parameter.description.lowercased() == key }
    }
}
