/// How speed changes pitch.
public enum TimePitchMode: String, Sendable, CaseIterable, Codable {
    /// Pitch preserved (Rubber Band).
    case stretch
    /// Pitch follows speed, like a tape machine (libsamplerate).
    case varispeed
}

/// Quality of offline time-pitch rendering.
public enum StretchQuality: String, Sendable, CaseIterable {
    /// Rubber Band's R3 "finer" engine: best sound, slower. The default for export.
    case best
    /// Rubber Band's R2 "faster" engine.
    case fast
}

/// Transport speed, mode and pitch shift, validated.
public struct TimePitchSettings: Equatable, Sendable {
    /// Slowest speed: 1/32×.
    public static let minimumSpeed = 1.0 / 32
    /// Fastest speed: 32×.
    public static let maximumSpeed = 32.0
    /// Largest pitch shift either way, in semitones.
    public static let maximumPitchSemitones = 36.0

    /// Playback speed: 0.5 is half speed (twice as long), 2 is double.
    public var speed: Double
    /// Whether pitch follows speed.
    public var mode: TimePitchMode
    /// Pitch shift in semitones (fractions are cents: 0.5 = 50 cents), independent of speed.
    public var pitchSemitones: Double

    /// 1×, stretch mode, no shift.
    public static let normal = TimePitchSettings(speed: 1, mode: .stretch, pitchSemitones: 0)

    /// Creates settings; use ``validated(speed:mode:pitchSemitones:)`` for user input.
    public init(speed: Double, mode: TimePitchMode, pitchSemitones: Double) {
        self.speed = speed
        self.mode = mode
        self.pitchSemitones = pitchSemitones
    }

    /// Whether anything differs from plain 1× playback.
    public var isIdentity: Bool { speed == 1 && pitchSemitones == 0 }

    /// Frequency factor of the pitch shift alone.
    public var pitchScale: Double { pow2(pitchSemitones / 12) }

    /// Why `speed` is unusable, as a message for the user, or nil when it is fine.
    public static func speedProblem(_ speed: Double) -> String? {
        if speed.isNaN { return "speed must be a number, not NaN" }
        if speed == 0 { return "speed 0 would never finish; the slowest is 1/32 (0.03125)" }
        if speed < 0 { return "speed \(speed) is negative; reverse playback is not supported (use 1/32...32)" }
        if !speed.isFinite || speed > maximumSpeed { return "speed \(speed) is above the fastest, 32" }
        if speed < minimumSpeed { return "speed \(speed) is below the slowest, 1/32 (0.03125)" }
        return nil
    }

    /// Why `semitones` is unusable, or nil.
    public static func pitchProblem(_ semitones: Double) -> String? {
        if !semitones.isFinite { return "pitch must be a number of semitones" }
        if abs(semitones) > maximumPitchSemitones { return "pitch \(semitones) is beyond ±\(Int(maximumPitchSemitones)) semitones" }
        return nil
    }

    /// Reads a speed as typed: `0.5`, `1/2`, `50%`, `2x`.
    /// `1.00x`: a speed as the screen, `ctl` and every front-end say it.
    public static func speedText(_ speed: Double) -> String {
        guard speed.isFinite else { return "?x" }
        let hundredths = Int((min(max(speed, 0), 1e6) * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)x"
    }

    public static func parseSpeed(_ text: String) -> Double? {
        var t = Substring(text)
        var percent = false
        if t.hasSuffix("%") { percent = true; t = t.dropLast() }
        if t.hasSuffix("x") || t.hasSuffix("×") { t = t.dropLast() }
        if let slash = t.firstIndex(of: "/") {
            guard let a = Double(t[..<slash]), let b = Double(t[t.index(after: slash)...]) else { return nil }
            return b == 0 ? .nan : a / b
        }
        guard let v = Double(t) else { return nil }
        return percent ? v / 100 : v
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) func pow2(_ x: Double) -> Double { Glibc.exp2(x) }
#endif
