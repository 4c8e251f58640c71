/// Reading and writing times the way users type them.
///
/// Accepted forms:
/// - seconds: `12.5`
/// - minutes and seconds: `1:02.5`, hours too: `1:00:00`
/// - frames: `90000f`
/// - bars.beats.sixteenths, all 1-based: `4.2.1` is bar 4, beat 2, first sixteenth of the beat
///   (a "sixteenth" is a quarter of the signature's beat). A fourth part adds ticks out of
///   ``TempoMap/ticksPerBeat``/4 within the sixteenth: `4.2.1.120`.
public enum TimeText {
    /// Why a time could not be read; the description is the whole message for the user.
    public struct ParseError: Error, Equatable, CustomStringConvertible, Sendable {
        /// The text the user typed.
        public var text: String
        /// What is wrong with it.
        public var reason: String
        public var description: String {
            "malformed time '\(text)': \(reason) (use seconds 12.5, m:ss.mmm 1:02.5, frames 90000f or bars.beats.sixteenths 4.2.1)"
        }
    }

    /// Parses `text` into a frame position using `tempoMap` for rate and musical time.
    /// Negative times are refused: nothing lies before the session start.
    public static func frames(from text: String, tempoMap: TempoMap) throws(ParseError) -> Int64 {
        let s = text.trimmingWhitespace()
        func fail(_ reason: String) -> ParseError { ParseError(text: text, reason: reason) }
        if s.isEmpty { throw fail("it is empty") }
        if s.hasPrefix("-") { throw fail("times cannot be negative") }

        if s.hasSuffix("f") {
            let digits = s.dropLast()
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let n = Int64(digits) else {
                throw fail("a frame count is whole digits followed by f")
            }
            return n
        }

        let dotParts = s.split(separator: ".", omittingEmptySubsequences: false)
        if dotParts.count >= 3 && !s.contains(":") {
            guard dotParts.count <= 4, dotParts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
                  let bar = Int(dotParts[0]), let beat = Int(dotParts[1]), let sixteenth = Int(dotParts[2]) else {
                throw fail("bars.beats.sixteenths are whole numbers")
            }
            let tick = dotParts.count == 4 ? Int(dotParts[3]) ?? -1 : 0
            let ticksPerSixteenth = TempoMap.ticksPerBeat / 4
            guard bar >= 1 else { throw fail("bars count from 1") }
            guard beat >= 1, beat <= tempoMap.timeSignature.beatsPerBar else {
                throw fail("beat must be 1...\(tempoMap.timeSignature.beatsPerBar) in \(tempoMap.timeSignature)")
            }
            guard sixteenth >= 1, sixteenth <= 4 else { throw fail("sixteenth must be 1...4") }
            guard tick >= 0, tick < ticksPerSixteenth else { throw fail("ticks must be 0...\(ticksPerSixteenth - 1)") }
            let fraction = (Double(sixteenth - 1) + Double(tick) / Double(ticksPerSixteenth)) / 4
            return tempoMap.frame(bar: bar, beat: beat, beatFraction: fraction)
        }

        let colonParts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard colonParts.count <= 3 else { throw fail("at most h:mm:ss") }
        var seconds = 0.0
        for (i, part) in colonParts.enumerated() {
            let isLast = i == colonParts.count - 1
            guard let value = parseDecimal(part, allowFraction: isLast) else {
                throw fail("'\(part)' is not a number")
            }
            if i > 0 && value >= 60 { throw fail("'\(part)' must be below 60") }
            seconds = seconds * 60 + value
        }
        let frame = (seconds * Double(tempoMap.sampleRate)).rounded()
        guard frame.isFinite, frame < 9.0e18 else { throw fail("it is too large") }
        return Int64(frame)
    }

    /// Parses `A-B` into a range; `A-` runs to `defaultEnd`.
    public static func range(from text: String, tempoMap: TempoMap, defaultEnd: Int64) throws(ParseError) -> FrameRange {
        guard let dash = text.firstIndex(of: "-") else {
            throw ParseError(text: text, reason: "a range is START-END")
        }
        let start = try frames(from: String(text[..<dash]), tempoMap: tempoMap)
        let endText = String(text[text.index(after: dash)...])
        let end = endText.isEmpty ? defaultEnd : try frames(from: endText, tempoMap: tempoMap)
        guard end > start else { throw ParseError(text: text, reason: "the end must come after the start") }
        return FrameRange(startFrame: start, endFrame: end)
    }

    /// `h:mm:ss.mmm` (hours only when non-zero) for a frame position.
    public static func clock(frames: Int64, sampleRate: Int) -> String {
        let totalMillis = frames * 1000 / Int64(max(sampleRate, 1))
        let ms = totalMillis % 1000
        let totalSeconds = totalMillis / 1000
        let s = totalSeconds % 60, m = (totalSeconds / 60) % 60, h = totalSeconds / 3600
        let body = "\(pad(m)):\(pad(s)).\(pad(ms, width: 3))"
        return h > 0 ? "\(h):\(body)" : body
    }

    private static func pad(_ v: Int64, width: Int = 2) -> String {
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
