/// The mixer's values as users see and type them: faders, pan and input channels. Shared by
/// the screen and the command line, so `-3`, `L20` and `3-4` mean the same everywhere.

/// A fader: −∞ … +12 dB, in fine and coarse steps.
public enum Fader {
    /// The top of the fader.
    public static let maximumDecibels = 12.0
    /// The fader's −∞ stop. JSON has no infinity, so the session stores this finite value;
    /// ``Decibels/toLinear(_:)`` reads it (and anything below) as silence.
    public static let silentDecibels = -200.0
    /// The lowest position above −∞ a step reaches; one step below it is −∞.
    public static let floorDecibels = -60.0
    /// A fine step.
    public static let fineStepDecibels = 0.5
    /// A coarse step.
    public static let coarseStepDecibels = 3.0

    /// Whether `decibels` is the −∞ stop (or below it).
    public static func isSilent(_ decibels: Double) -> Bool { decibels <= silentDecibels }

    /// `decibels` moved by `steps` fine or coarse steps, onto the step grid (so −2.7 goes up
    /// to −2.5, not −2.2), clamped to the fader: below ``floorDecibels`` is −∞, and a step up
    /// from −∞ lands on the floor.
    public static func stepped(_ decibels: Double, steps: Int, coarse: Bool) -> Double {
        guard steps != 0 else { return decibels }
        let step = coarse ? coarseStepDecibels : fineStepDecibels
        if isSilent(decibels) { return steps > 0 ? floorDecibels : silentDecibels }
        let grid = decibels / step
        let onGrid = steps > 0 ? (grid + 1e-9).rounded(.down) : (grid - 1e-9).rounded(.up)
        let next = (onGrid + Double(steps)) * step
        if next < floorDecibels { return silentDecibels }
        return min(maximumDecibels, next)
    }

    /// `-3.0`, `+1.5`, `0.0` or `-inf`.
    public static func text(_ decibels: Double) -> String {
        if isSilent(decibels) { return "-inf" }
        let t = Decibels.text(decibels)
        return decibels >= 0.05 ? "+" + t : t
    }

    /// Reads a fader value: `-3`, `+1.5`, `-3db`, `-inf` (or `off`). Nil when it is not one;
    /// values are not clamped, see ``problem(_:)``.
    public static func parse(_ text: String) -> Double? {
        var t = text.trimmingWhitespace().lowercased()
        if t == "-inf" || t == "-infinity" || t == "off" || t == "-∞" { return silentDecibels }
        if t.hasSuffix("db") { t.removeLast(2) }
        guard !t.isEmpty, t.allSatisfy({ $0.isASCIIDigit || $0 == "." || $0 == "-" || $0 == "+" }),
              let v = Double(t), v.isFinite else { return nil }
        return v
    }

    /// Why `decibels` is not a fader position, or nil when it is.
    public static func problem(_ decibels: Double) -> String? {
        guard decibels.isFinite, decibels <= maximumDecibels else {
            return "the fader goes from -inf to +\(Int(maximumDecibels)) dB"
        }
        return nil
    }

    /// A fader value as stored: anything at or below the −∞ stop becomes the stop itself.
    public static func stored(_ decibels: Double) -> Double { max(silentDecibels, decibels) }
}

/// Pan: −1 hard left … +1 hard right, shown and typed as `L20`, `C`, `R100`.
public enum Pan {
    /// A fine step (5 %).
    public static let fineStep = 0.05
    /// A coarse step (25 %).
    public static let coarseStep = 0.25

    /// `L30`, `C`, `R100` for a pan of −1…1.
    public static func text(_ pan: Double) -> String {
        let p = Int((pan * 100).rounded())
        return p == 0 ? "C" : p < 0 ? "L\(-p)" : "R\(p)"
    }

    /// Reads `L20`, `R100`, `C` (or `centre`/`center`), or a number −1…1 (`-0.2`). Nil when it
    /// is not one of those or lies outside the range.
    public static func parse(_ text: String) -> Double? {
        let t = text.trimmingWhitespace().lowercased()
        if t == "c" || t == "centre" || t == "center" || t == "l0" || t == "r0" { return 0 }
        if let side = t.first, side == "l" || side == "r" {
            let digits = t.dropFirst()
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let n = Int(digits), n <= 100 else { return nil }
            return Double(side == "l" ? -n : n) / 100
        }
        guard let v = Double(t), v.isFinite, v >= -1, v <= 1 else { return nil }
        return v
    }

    /// `pan` moved by `steps` fine or coarse steps onto the step grid, within −1…1.
    public static func stepped(_ pan: Double, steps: Int, coarse: Bool) -> Double {
        let step = coarse ? coarseStep : fineStep
        let grid = pan / step
        let onGrid = steps > 0 ? (grid + 1e-9).rounded(.down) : steps < 0 ? (grid - 1e-9).rounded(.up) : grid
        let next = ((onGrid + Double(steps)) * step * 100).rounded() / 100
        return min(1, max(-1, next))
    }
}

/// A track's input: one device channel (mono) or a pair, 1-based.
public enum InputChannels {
    /// The highest device channel a track may name.
    public static let maximumChannel = 256

    /// `in 1`, `in 1-2`, `in 1,3`.
    public static func text(_ channels: [Int]) -> String {
        if channels.isEmpty { return "in -" }
        if channels.count == 2 && channels[1] == channels[0] + 1 { return "in \(channels[0])-\(channels[1])" }
        return "in " + channels.map(String.init).joined(separator: ",")
    }

    /// Reads `3` (mono), `3-4` or `3,4` (a pair). Throws a one-line reason otherwise.
    public static func parse(_ text: String) throws(InputChannelsError) -> [Int] {
        let t = text.trimmingWhitespace()
        let parts = t.split(separator: t.contains("-") ? "-" : ",", omittingEmptySubsequences: false)
        let numbers = parts.map { Int(String($0).trimmingWhitespace()) }
        guard (1...2).contains(parts.count), numbers.allSatisfy({ $0 != nil }) else {
            throw InputChannelsError(text: text, reason: "an input is one channel (3) or a pair (3-4)")
        }
        let channels = numbers.map { $0! }
        guard channels.allSatisfy({ (1...maximumChannel).contains($0) }) else {
            throw InputChannelsError(text: text, reason: "channels are 1...\(maximumChannel)")
        }
        if channels.count == 2 && channels[0] == channels[1] {
            throw InputChannelsError(text: text, reason: "a pair names two different channels")
        }
        return channels
    }
}

/// Why an input could not be read; the description is one line for the user.
public struct InputChannelsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was typed.
    public var text: String
    /// What is wrong with it.
    public var reason: String
    public var description: String { "input '\(text)': \(reason)" }
}
