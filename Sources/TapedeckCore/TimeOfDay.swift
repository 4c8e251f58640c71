/// Times of day as frames since midnight: a session's time-of-day origin, a BWF time
/// reference as field recorders write it.
public enum TimeOfDay {
    /// Frames in a day at `sampleRate`.
    public static func framesPerDay(sampleRate: Int) -> Int64 { 86_400 * Int64(max(sampleRate, 1)) }

    /// Parses `HH:MM:SS` or `HH:MM:SS.fff` (24-hour clock, `HH` 0–23, fractions to the
    /// frame) into frames since midnight at `sampleRate`; nil for anything else
    /// (`25:00:00`, `-1:00:00`, `9:60:00`, garbage).
    public static func frames(from text: String, sampleRate: Int) -> Int64? {
        let parts = text.trimmingWhitespace().split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        func whole(_ s: Substring, below limit: Int) -> Int? {
            guard (1...2).contains(s.count), s.allSatisfy({ $0.isASCII && $0.isNumber }), let v = Int(s), v < limit else { return nil }
            return v
        }
        let secondsText = parts[2]
        let dot = secondsText.firstIndex(of: ".")
        let wholeSeconds = dot.map { secondsText[..<$0] } ?? secondsText
        guard let h = whole(parts[0], below: 24), let m = whole(parts[1], below: 60), let s = whole(wholeSeconds, below: 60) else { return nil }
        var fraction = 0.0
        if let dot {
            let digits = secondsText[secondsText.index(after: dot)...]
            guard (1...9).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let v = Double("0." + digits) else { return nil }
            fraction = v
        }
        let rate = Int64(max(sampleRate, 1))
        let frames = Int64(h * 3600 + m * 60 + s) * rate + Int64((fraction * Double(rate)).rounded(.down))
        return min(frames, framesPerDay(sampleRate: sampleRate) - 1)
    }

    /// `09:30:00.000` for `frames` since midnight at `sampleRate` (milliseconds shown).
    public static func text(frames: Int64, sampleRate: Int) -> String {
        let rate = Int64(max(sampleRate, 1))
        let f = max(0, frames)
        let seconds = f / rate
        let ms = (f % rate) * 1000 / rate
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let msText = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
        return "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)).\(msText)"
    }
}
