import Foundation

/// A stretch of the tempo map between two changes: one meter, and a tempo that holds or
/// ramps (linearly in time) from `startBPM` to `endBPM` over its `beatCount` beats.
public struct TempoSegment: Equatable, Sendable {
    /// The bar it starts at.
    public var startBar: Int
    /// Its meter.
    public var signature: TimeSignature
    /// Its first frame (fractional: tempos rarely divide the rate).
    public var startFrame: Double
    /// Beats before it, each counted in its own meter.
    public var startBeat: Double
    /// The tempo at its start and where it ends (the same unless it ramps).
    public var startBPM: Double
    public var endBPM: Double
    /// Its length in beats (infinite for the last).
    public var beatCount: Double

    /// The ramp's curvature: tempo = startBPM + 2 × `acceleration` × seconds, so that beats
    /// = (startBPM × t + acceleration × t²) / 60. Zero when the tempo holds.
    var acceleration: Double {
        guard startBPM != endBPM, beatCount.isFinite, beatCount > 0 else { return 0 }
        let duration = 120 * beatCount / (startBPM + endBPM)
        return (endBPM - startBPM) / (2 * duration)
    }

    /// Seconds from its start to `beats` beats in (negative beats count back at the start's
    /// tempo, for places before bar 1).
    public func seconds(beats: Double) -> Double {
        let a = acceleration
        guard a != 0, beats > 0 else { return 60 * beats / startBPM }
        // a t² + T0 t − 60 b = 0, solved in the form that keeps its digits when a is small.
        return 120 * beats / (startBPM + (startBPM * startBPM + 240 * a * beats).squareRoot())
    }

    /// Beats from its start to `seconds` in.
    public func beats(seconds t: Double) -> Double {
        let a = acceleration
        guard a != 0, t > 0 else { return startBPM * t / 60 }
        return (startBPM * t + a * t * t) / 60
    }

    /// The tempo `seconds` in.
    public func tempo(seconds t: Double) -> Double {
        let a = acceleration
        return a == 0 ? startBPM : startBPM + 2 * a * t
    }

    /// The segment holding bar `bar` (the first for bars before it).
    public static func index(ofBar bar: Int, in segments: [TempoSegment]) -> Int {
        lastIndex(segments, atMost: Double(bar)) { Double($0.startBar) }
    }

    /// The segment holding `frame` (the first for frames before it).
    public static func index(ofFrame frame: Double, in segments: [TempoSegment]) -> Int {
        lastIndex(segments, atMost: frame) { $0.startFrame }
    }

    /// The last index of `list` (sorted by `key`) whose key is at most `value`; 0 when none
    /// is. The one search of the map's segments, by bar, frame, beat or quarter note.
    ///
    /// Audio thread (through ``TempoTable``): no allocation, no locks.
    @inline(__always)
    public static func lastIndex<C: RandomAccessCollection>(_ list: C, atMost value: Double, key: (C.Element) -> Double) -> Int
    where C.Index == Int {
        var lo = list.startIndex, hi = list.endIndex - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if key(list[mid]) <= value { lo = mid } else { hi = mid - 1 }
        }
        return max(lo, list.startIndex)
    }
}

extension TempoMap {
    /// The map as segments from bar 1, one per stretch between changes (one for a
    /// constant map).
    public var segments: [TempoSegment] {
        var bars = Set([1])
        for c in tempoChanges where c.bar > 1 { bars.insert(c.bar) }
        for c in meterChanges where c.bar > 1 { bars.insert(c.bar) }
        let starts = bars.sorted()
        let tempos = [TempoChange(bar: 1, bpm: tempoBPM)] + tempoChanges.filter { $0.bar > 1 }.sorted { $0.bar < $1.bar }
        var segments: [TempoSegment] = []
        var frame = 0.0, beat = 0.0
        for (k, start) in starts.enumerated() {
            let signature = self.signature(atBar: start)
            let before = tempos.last { $0.bar <= start }!
            let next = tempos.first { $0.bar > start }
            let end = k + 1 < starts.count ? starts[k + 1] : nil
            // In Double: bars as far as Int goes, times beats, would overflow an Int.
            let count = end.map { (Double($0) - Double(start)) * Double(signature.beatsPerBar) } ?? .infinity
            // A ramp into `next` runs from the change before it; a meter change inside it is
            // refused (``problem``), so the ramp is this one segment.
            let ramps = next?.ramp == true && next?.bar == end
            let s = TempoSegment(startBar: start, signature: signature, startFrame: frame, startBeat: beat,
                                 startBPM: before.bpm, endBPM: ramps ? next!.bpm : before.bpm, beatCount: count)
            segments.append(s)
            if count.isFinite {
                frame += s.seconds(beats: count) * Double(sampleRate)
                beat += count
            }
        }
        return segments
    }

    /// What is wrong with the changes, as one line; nil when the map can be played. Bars
    /// count from 2 and each holds one change of each kind; tempos lie in 1...999 BPM; a
    /// meter is 1...64 beats of a 1, 2, 4, 8, 16 or 32 note; a meter change inside a ramp is
    /// refused (the beat the tempo counts would change halfway through the glide).
    public var problem: String? {
        // Far past any timeline at any tempo (2^40 frames is 4·10^5 bars of 4/4 at 999 BPM at
        // 8 kHz): refused before any arithmetic on them.
        if let far = (tempoChanges.map(\.bar) + meterChanges.map(\.bar)).first(where: { $0 > TempoMap.maximumBar }) {
            return "a change at bar \(far) lies past the timeline's end (\(SessionLimits.timelineLimitText(sampleRate: sampleRate)))"
        }
        var seen = Set<Int>()
        for c in tempoChanges {
            guard c.bar >= 2 else { return "tempo change at bar \(c.bar): changes start at bar 2 (bar 1 has the session's tempo)" }
            guard seen.insert(c.bar).inserted else { return "two tempo changes at bar \(c.bar)" }
            guard c.bpm.isFinite, c.bpm >= 1, c.bpm <= 999 else { return "tempo change at bar \(c.bar): \(c.bpm) BPM is outside 1...999" }
        }
        seen = []
        for c in meterChanges {
            guard c.bar >= 2 else { return "meter change at bar \(c.bar): changes start at bar 2 (bar 1 has the session's signature)" }
            guard seen.insert(c.bar).inserted else { return "two meter changes at bar \(c.bar)" }
            if let why = TempoMap.signatureProblem(c.signature) { return "meter change at bar \(c.bar): \(why)" }
        }
        if tempoChanges.map(\.bar) != tempoChanges.map(\.bar).sorted() { return "tempo changes out of bar order" }
        if meterChanges.map(\.bar) != meterChanges.map(\.bar).sorted() { return "meter changes out of bar order" }
        let lastBar = max(tempoChanges.last?.bar ?? 1, meterChanges.last?.bar ?? 1)
        if !(exactFrame(bar: lastBar, beat: 1) <= Double(SessionLimits.maximumTimelineFrames)) {
            return "a change at bar \(lastBar) lies past the timeline's end (\(SessionLimits.timelineLimitText(sampleRate: sampleRate)))"
        }
        let tempos = [TempoChange(bar: 1, bpm: tempoBPM)] + tempoChanges
        for (k, c) in tempos.enumerated() where k > 0 && c.ramp {
            let from = tempos[k - 1].bar
            if let m = meterChanges.first(where: { $0.bar > from && $0.bar < c.bar }) {
                return "the ramp into \(TempoMap.bpmText(c.bpm)) BPM at bar \(c.bar) passes the meter change at bar \(m.bar): "
                    + "start the ramp at or after it"
            }
        }
        return nil
    }

    /// Bars beyond this lie past the timeline at any tempo and meter.
    public static let maximumBar = 1_000_000_000

    /// The meter `text` writes (`N/D`: 4/4, 7/8), nil when it is none (N 1...64, D 1, 2, 4,
    /// 8, 16 or 32). Every place a meter is typed reads it here.
    public static func signature(parsing text: String) -> TimeSignature? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let n = Int(parts[0]), let d = Int(parts[1]) else { return nil }
        let signature = TimeSignature(beatsPerBar: n, beatUnit: d)
        return signatureProblem(signature) == nil ? signature : nil
    }

    /// Why `signature` is no meter; nil when it is one.
    public static func signatureProblem(_ signature: TimeSignature) -> String? {
        guard signature.beatsPerBar >= 1, signature.beatsPerBar <= 64 else { return "\(signature) has \(signature.beatsPerBar) beats: 1...64" }
        guard [1, 2, 4, 8, 16, 32].contains(signature.beatUnit) else { return "\(signature): the beat is a 1, 2, 4, 8, 16 or 32 note" }
        return nil
    }

    /// `120`, `92.5` or `92.25`: to a hundredth, without trailing zeros (a MIDI file's
    /// 666 667 µs a quarter is 90 BPM, not 89.99996).
    public static func bpmText(_ bpm: Double) -> String {
        guard bpm.isFinite, abs(bpm) < 1e9 else { return "\(bpm)" }
        var text = String(format: "%.2f", bpm)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
