/// Reading and writing times the way users type them.
///
/// Accepted forms:
/// - seconds: `12.5`
/// - minutes and seconds: `1:02.5`, hours too: `1:00:00` (after a colon always two digits, as a
///   clock shows them: `1:2:3` is refused, never read as 1:02:03 when bar 1 beat 2 was meant)
/// - with units: `2s`, `500ms`, `1m30s`, `1h2m3.5s` (h, m, s, ms, each at most once, in that order)
/// - frames: `90000f`
/// - bars|beats|ticks as the screen shows them: `3|2|480` (bar 3, beat 2, tick 480 of
///   ``TempoMap/ticksPerBeat``); bar and beat count from 1, ticks from 0; `3|2` is tick 0
/// - bars.beats.sixteenths, all 1-based: `4.2.1` is bar 4, beat 2, first sixteenth of the beat
///   (a "sixteenth" is a quarter of the signature's beat). A fourth part adds ticks out of
///   ``TempoMap/ticksPerBeat``/4 within the sixteenth: `4.2.1.120`.
///
/// Every time is checked against ``SessionLimits/maximumTimelineFrames`` before any integer
/// arithmetic, so no text, however long its digits, can overflow.
public enum TimeText {
    /// The forms, for messages.
    public static let formsHelp = "use seconds 12.5, 1:02.5, 2s, 500ms, 1m30s, frames 90000f, bars|beats|ticks 3|2|480 or bars.beats.sixteenths 4.2.1"

    /// Why a time could not be read; the description is the whole message for the user.
    public struct ParseError: Error, Equatable, CustomStringConvertible, Sendable {
        /// The text the user typed.
        public var text: String
        /// What is wrong with it.
        public var reason: String
        /// The option or field the time was given for (`--at`), when the caller said.
        public var field: String?
        /// Whether the text was well formed but past a limit (not a typing mistake).
        public var isOutOfRange: Bool

        /// Creates an error.
        public init(text: String, reason: String, field: String? = nil, isOutOfRange: Bool = false) {
            self.text = text
            self.reason = reason
            self.field = field
            self.isOutOfRange = isOutOfRange
        }

        public var description: String {
            let prefix = field.map { "\($0.terminalSafe): " } ?? ""
            if isOutOfRange { return "\(prefix)time '\(text.terminalSafe)' is out of range: \(reason.terminalSafe)" }
            return "\(prefix)malformed time '\(text.terminalSafe)': \(reason.terminalSafe) (\(TimeText.formsHelp))"
        }
    }

    /// Parses `text` into a frame position using `tempoMap` for rate and musical time.
    /// Negative times are refused: nothing lies before the session start. So is anything past
    /// ``SessionLimits/maximumTimelineFrames``. `field` (e.g. `--at`) is named in errors.
    public static func frames(from text: String, tempoMap: TempoMap, field: String? = nil) throws(ParseError) -> Int64 {
        let s = text.trimmingWhitespace()
        func fail(_ reason: String) -> ParseError { ParseError(text: text, reason: reason, field: field) }
        if s.isEmpty { throw fail("it is empty") }
        if s.hasPrefix("-") { throw fail("times cannot be negative") }
        guard tempoMap.sampleRate > 0, tempoMap.tempoBPM.isFinite, tempoMap.tempoBPM > 0 else { throw fail("the session has no usable rate or tempo") }

        let seconds: Double
        if s.contains("|") {
            return try barsBeatsTicks(s, text: text, tempoMap: tempoMap, field: field)
        } else if s.hasSuffix("f") {
            let digits = s.dropLast()
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else {
                throw fail("a frame count is whole digits followed by f")
            }
            let trimmed = digits.drop { $0 == "0" }
            guard trimmed.count <= 18, let n = Int64(trimmed.isEmpty ? "0" : String(trimmed)) else {
                throw outOfRange(text, tempoMap, field)
            }
            return try checked(Double(n), text, tempoMap, field)
        } else if let last = s.last, last.isLetter {
            seconds = try unitSeconds(s, fail: fail)
        } else if s.split(separator: ".", omittingEmptySubsequences: false).count >= 3 && !s.contains(":") {
            return try barsBeatsSixteenths(s, text: text, tempoMap: tempoMap, field: field)
        } else {
            seconds = try clockSeconds(s, fail: fail)
        }
        return try checked(seconds * Double(tempoMap.sampleRate), text, tempoMap, field)
    }

    /// Parses `A-B` into a range; `A-` runs to `defaultEnd`.
    public static func range(from text: String, tempoMap: TempoMap, defaultEnd: Int64,
                             field: String? = nil) throws(ParseError) -> FrameRange {
        guard let dash = text.firstIndex(of: "-") else {
            throw ParseError(text: text, reason: "a range is START-END", field: field)
        }
        let start = try frames(from: String(text[..<dash]), tempoMap: tempoMap, field: field)
        let endText = String(text[text.index(after: dash)...])
        let end = endText.isEmpty ? defaultEnd : try frames(from: endText, tempoMap: tempoMap, field: field)
        guard end > start else { throw ParseError(text: text, reason: "the end must come after the start", field: field) }
        return FrameRange(startFrame: start, endFrame: end)
    }

    /// `h:mm:ss.mmm` (hours only when non-zero) for a frame position. Any `Int64` works.
    public static func clock(frames: Int64, sampleRate: Int) -> String {
        let rate = UInt64(max(sampleRate, 1))
        let magnitude = frames.magnitude
        let totalSeconds = magnitude / rate
        let ms = (magnitude % rate) * 1000 / rate
        let s = totalSeconds % 60, m = (totalSeconds / 60) % 60, h = totalSeconds / 3600
        let body = "\(pad(m)):\(pad(s)).\(pad(ms, width: 3))"
        return (frames < 0 ? "-" : "") + (h > 0 ? "\(h):\(body)" : body)
    }

    /// A frame count as a position, refused past the timeline's limit.
    private static func checked(_ frame: Double, _ text: String, _ map: TempoMap, _ field: String?) throws(ParseError) -> Int64 {
        let rounded = frame.rounded()
        guard rounded.isFinite, rounded >= 0, rounded <= Double(SessionLimits.maximumTimelineFrames) else {
            throw outOfRange(text, map, field)
        }
        return Int64(rounded)
    }

    private static func outOfRange(_ text: String, _ map: TempoMap, _ field: String?) -> ParseError {
        ParseError(text: text, reason: "the timeline ends at \(SessionLimits.timelineLimitText(sampleRate: map.sampleRate))",
                   field: field, isOutOfRange: true)
    }

    /// `3|2|480`: bar and beat from 1, ticks from 0 (as the screen shows positions).
    private static func barsBeatsTicks(_ s: String, text: String, tempoMap: TempoMap, field: String?) throws(ParseError) -> Int64 {
        func fail(_ reason: String) -> ParseError { ParseError(text: text, reason: reason, field: field) }
        let parts = s.split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3,
              parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) else {
            throw fail("bars|beats|ticks are whole numbers, e.g. 3|2|480")
        }
        guard let bar = smallInt(parts[0]) else { throw outOfRange(text, tempoMap, field) }
        let beat = smallInt(parts[1]) ?? -1
        let tick = parts.count == 3 ? smallInt(parts[2]) ?? -1 : 0
        guard bar >= 1 else { throw fail("bars count from 1") }
        try checkBeat(beat, bar: bar, tempoMap, fail)
        guard tick >= 0, tick < TempoMap.ticksPerBeat else { throw fail("ticks must be 0...\(TempoMap.ticksPerBeat - 1)") }
        let frame = tempoMap.exactFrame(bar: bar, beat: beat, beatFraction: Double(tick) / Double(TempoMap.ticksPerBeat))
        return try checked(frame, text, tempoMap, field)
    }

    /// `4.2.1` or `4.2.1.120`: bar, beat, sixteenth (all from 1), ticks within the sixteenth.
    private static func barsBeatsSixteenths(_ s: String, text: String, tempoMap: TempoMap, field: String?) throws(ParseError) -> Int64 {
        func fail(_ reason: String) -> ParseError { ParseError(text: text, reason: reason, field: field) }
        let dotParts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard dotParts.count <= 4, dotParts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) else {
            throw fail("bars.beats.sixteenths are whole numbers")
        }
        guard let bar = smallInt(dotParts[0]) else { throw outOfRange(text, tempoMap, field) }
        let beat = smallInt(dotParts[1]) ?? -1
        let sixteenth = smallInt(dotParts[2]) ?? -1
        let tick = dotParts.count == 4 ? smallInt(dotParts[3]) ?? -1 : 0
        let ticksPerSixteenth = TempoMap.ticksPerBeat / 4
        guard bar >= 1 else { throw fail("bars count from 1") }
        try checkBeat(beat, bar: bar, tempoMap, fail)
        guard sixteenth >= 1, sixteenth <= 4 else { throw fail("sixteenth must be 1...4") }
        guard tick >= 0, tick < ticksPerSixteenth else { throw fail("ticks must be 0...\(ticksPerSixteenth - 1)") }
        let fraction = (Double(sixteenth - 1) + Double(tick) / Double(ticksPerSixteenth)) / 4
        return try checked(tempoMap.exactFrame(bar: bar, beat: beat, beatFraction: fraction), text, tempoMap, field)
    }

    private static func checkBeat(_ beat: Int, bar: Int, _ map: TempoMap, _ fail: (String) -> ParseError) throws(ParseError) {
        let signature = map.signature(atBar: bar)
        guard beat >= 1, beat <= signature.beatsPerBar else {
            throw fail("beat must be 1...\(signature.beatsPerBar) in \(signature)\(map.isConstant ? "" : " (bar \(bar))")")
        }
    }

    /// A whole number of at most 12 digits (leading zeros aside); nil when longer. Bars
    /// beyond that lie far past the timeline's end at any tempo, so nil means "too large".
    private static func smallInt(_ digits: Substring) -> Int? {
        let trimmed = digits.drop { $0 == "0" }
        if trimmed.isEmpty { return 0 }
        guard trimmed.count <= 12 else { return nil }
        return Int(trimmed)
    }

    /// `1m30s`, `500ms`, `2h`, `1.5s`: numbers each followed by h, m, s or ms, in that order.
    private static func unitSeconds(_ s: String, fail: (String) -> ParseError) throws(ParseError) -> Double {
        let chars = Array(s)
        var i = 0
        var total = 0.0
        var lastRank = -1
        while i < chars.count {
            let numberStart = i
            while i < chars.count && (chars[i].isASCIIDigit || chars[i] == ".") { i += 1 }
            let number = String(chars[numberStart..<i])
            let unitStart = i
            while i < chars.count && chars[i].isLetter { i += 1 }
            let unit = String(chars[unitStart..<i]).lowercased()
            guard let value = parseDecimal(Substring(number), allowFraction: true) else {
                throw fail(number.isEmpty ? "a number must come before '\(unit)'" : "'\(number)' is not a number")
            }
            let scales: [(String, Double)] = [("h", 3600), ("m", 60), ("s", 1), ("ms", 0.001)]
            guard let rank = scales.firstIndex(where: { $0.0 == unit }) else {
                throw fail(unit.isEmpty ? "'\(number)' needs a unit (h, m, s or ms)" : "unknown unit '\(unit)' (use h, m, s or ms)")
            }
            guard rank > lastRank else { throw fail("units go largest first, each once: 1h2m3s, 1s500ms") }
            // Under a larger unit, 99m or 75s is surely a slip (1h99m is not 2h39m on a clock).
            let carry: Double = rank == 3 ? 1000 : 60
            if lastRank >= 0 && value >= carry {
                throw fail("'\(number)\(unit)' after '\(scales[lastRank].0)' must be below \(Int(carry))")
            }
            lastRank = rank
            total += value * scales[rank].1
        }
        return total
    }

    /// `12.5`, `1:02.5`, `1:00:00`.
    private static func clockSeconds(_ s: String, fail: (String) -> ParseError) throws(ParseError) -> Double {
        let colonParts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard colonParts.count <= 3 else { throw fail("at most h:mm:ss") }
        var seconds = 0.0
        for (i, part) in colonParts.enumerated() {
            let isLast = i == colonParts.count - 1
            guard let value = parseDecimal(part, allowFraction: isLast) else {
                if part.contains(where: { $0 == "e" || $0 == "E" }), Double(part) != nil {
                    throw fail("'\(part)' has an exponent; write the time in digits")
                }
                throw fail("'\(part)' is not a number")
            }
            // After a colon a clock shows two digits: `1:2:3` is no clock time, and was most
            // likely meant as bar 1, beat 2 (read as 1:02:03 it put a marker an hour away).
            if i > 0 && part.prefix(while: { $0 != "." }).count != 2 {
                throw fail("after a colon, minutes and seconds take two digits as a clock shows them (1:02:03, 0:05.5); "
                           + "a bar position is bars.beats.sixteenths (1.2.3) or bars|beats|ticks (1|2|0)")
            }
            if i > 0 && value >= 60 { throw fail("'\(part)' must be below 60") }
            seconds = seconds * 60 + value
        }
        return seconds
    }

    private static func pad(_ v: UInt64, width: Int = 2) -> String {
        let t = String(v)
        return String(repeating: "0", count: max(0, width - t.count)) + t
    }

    private static func parseDecimal(_ part: Substring, allowFraction: Bool) -> Double? {
        guard !part.isEmpty else { return nil }
        let pieces = part.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count <= (allowFraction ? 2 : 1) else { return nil }
        guard pieces.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }), !pieces[0].isEmpty || pieces.count == 2 else { return nil }
        if pieces.count == 2 && pieces[1].isEmpty { return nil }
        return Double(part)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}

extension Session {
    /// Ten minutes, at 48 kHz or any rate: how far past the material a place must lie before
    /// it looks like a slip.
    static let farPastEndSeconds: Int64 = 600

    /// One line when `frame` (typed as `text`) lies far past the end of the session's
    /// material — more than ten minutes past it and more than its whole length again — where
    /// that is surely a slip (an hour typed where a minute or a bar was meant); nil otherwise.
    /// An empty session has no end to be far from, but ten minutes. The edit still goes ahead:
    /// a place on an empty stretch of timeline can be meant.
    public func farPastEndWarning(_ frame: Int64, typed text: String) -> String? {
        let end = endFrame
        let margin = max(Session.farPastEndSeconds * Int64(max(sampleRate, 1)), end)
        guard frame > end, frame - end > margin else { return nil }
        return "'\(text.terminalSafe)' is \(clockText(frame)), \(clockText(frame - end)) past the end of the session's "
            + "material (\(clockText(end))); if that is a slip, move it (bar 1 beat 2 is 1.2.1, one minute two seconds 1:02)"
    }
}
