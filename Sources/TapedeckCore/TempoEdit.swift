import Foundation

/// Why a tempo or meter edit was refused; one line for the user.
public struct TempoEditError: EditRefusal, Equatable, Sendable {
    /// The line.
    public var description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

extension Session {
    /// Sets the tempo from bar `bar` on (bar 1: the session's own tempo; `ramp` glides into
    /// it from the change before). Refused, leaving the session as it was, when the map
    /// could not be played (``TempoMap/problem``). Audio and MIDI regions keep their frames.
    public mutating func setTempo(atBar bar: Int, bpm: Double, ramp: Bool = false) throws(TempoEditError) {
        guard bpm.isFinite, bpm >= 1, bpm <= 999 else { throw TempoEditError("\(bpm) BPM is outside 1...999") }
        guard bar >= 1 else { throw TempoEditError("bars count from 1") }
        var next = self
        if bar == 1 {
            if ramp { throw TempoEditError("bar 1's tempo cannot ramp: there is no tempo before it") }
            next.tempoBPM = bpm
        } else {
            next.tempoChanges.removeAll { $0.bar == bar }
            next.tempoChanges.append(TempoChange(bar: bar, bpm: bpm, ramp: ramp))
            next.tempoChanges.sort { $0.bar < $1.bar }
        }
        if let why = next.tempoMap.problem { throw TempoEditError(why) }
        self = next
    }

    /// Removes the tempo change at bar `bar`.
    public mutating func removeTempo(atBar bar: Int) throws(TempoEditError) {
        if bar == 1 { throw TempoEditError("bar 1's tempo can be changed (tempo SESSION add 1 BPM), not removed") }
        guard tempoChanges.contains(where: { $0.bar == bar }) else {
            throw TempoEditError("no tempo change at bar \(bar)\(Session.barsText(tempoChanges.map(\.bar)))")
        }
        var next = self
        next.tempoChanges.removeAll { $0.bar == bar }
        if let why = next.tempoMap.problem { throw TempoEditError(why) }
        self = next
    }

    /// Sets the meter from bar `bar` on (bar 1: the session's own signature).
    public mutating func setMeter(atBar bar: Int, _ signature: TimeSignature) throws(TempoEditError) {
        guard bar >= 1 else { throw TempoEditError("bars count from 1") }
        if let why = TempoMap.signatureProblem(signature) { throw TempoEditError(why) }
        var next = self
        if bar == 1 {
            next.timeSignature = signature
        } else {
            next.meterChanges.removeAll { $0.bar == bar }
            next.meterChanges.append(MeterChange(bar: bar, signature: signature))
            next.meterChanges.sort { $0.bar < $1.bar }
        }
        if let why = next.tempoMap.problem { throw TempoEditError(why) }
        self = next
    }

    /// Removes the meter change at bar `bar`.
    public mutating func removeMeter(atBar bar: Int) throws(TempoEditError) {
        if bar == 1 { throw TempoEditError("bar 1's meter can be changed (meter SESSION add 1 N/D), not removed") }
        guard meterChanges.contains(where: { $0.bar == bar }) else {
            throw TempoEditError("no meter change at bar \(bar)\(Session.barsText(meterChanges.map(\.bar)))")
        }
        var next = self
        next.meterChanges.removeAll { $0.bar == bar }
        if let why = next.tempoMap.problem { throw TempoEditError(why) }
        self = next
    }

    /// ` (changes at bars 5, 9)` or ` (there are none)`.
    static func barsText(_ bars: [Int]) -> String {
        bars.isEmpty ? " (there are none)" : " (changes at bar\(bars.count == 1 ? "" : "s") \(bars.map(String.init).joined(separator: ", ")))"
    }

    /// The tempo map, one line a change from bar 1: bar, place, tempo (ramped or not), meter.
    public var tempoMapListing: String {
        let map = tempoMap
        var bars = Set([1])
        for c in tempoChanges { bars.insert(c.bar) }
        for c in meterChanges { bars.insert(c.bar) }
        return bars.sorted().map { bar in
            var line = "bar \(bar)".padding(toLength: 9, withPad: " ", startingAt: 0)
                + clockText(map.frame(bar: bar, beat: 1)).padding(toLength: 12, withPad: " ", startingAt: 0)
            if bar == 1 { line += "\(TempoMap.bpmText(tempoBPM)) BPM  \(timeSignature)"; return line }
            var parts: [String] = []
            if let t = tempoChanges.first(where: { $0.bar == bar }) { parts.append("\(TempoMap.bpmText(t.bpm)) BPM\(t.ramp ? " (ramp)" : "")") }
            if let m = meterChanges.first(where: { $0.bar == bar }) { parts.append("\(m.signature)") }
            return line + parts.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
