/// A quantise setting: the grid notes are pulled to, and how far.
public struct QuantizeSetting: Equatable, Sendable, CustomStringConvertible {
    /// The grid as a fraction of a whole note (1/16 = 0.0625); triplets and dots included.
    public var wholeNotes: Double
    /// How far each note moves towards its grid line, 0…1 (1: exactly onto it).
    public var strength: Double
    /// The grid as written (`1/16`, `1/8t`, `1/4.`).
    public var gridText: String

    /// The note values a grid may be (of a whole note).
    public static let denominators = [1, 2, 4, 8, 16, 32, 64]
    /// The grids there are, for messages.
    public static let choices = "1/1, 1/2, 1/4, 1/8, 1/16, 1/32 or 1/64, each also as a triplet (1/8t) or dotted (1/4.), bar or beat"

    /// Reads a grid (`1/1` … `1/64`, each also `1/8t` triplet or `1/4.` dotted, `bar`,
    /// `beat`) and a strength (`100%`, `0.5`, `50%`); nil with the reason when either is wrong.
    public static func parse(grid: String, strength: String?, timeSignature: TimeSignature) -> Result<QuantizeSetting, QuantizeError> {
        let text = grid.lowercased().trimmingWhitespace()
        var whole: Double
        switch text {
        case "bar": whole = Double(timeSignature.beatsPerBar) / Double(timeSignature.beatUnit)
        case "beat": whole = 1 / Double(timeSignature.beatUnit)
        default:
            var body = Substring(text)
            var factor = 1.0
            if body.hasSuffix(".") { factor = 1.5; body = body.dropLast() } else if body.hasSuffix("t") { factor = 2.0 / 3; body = body.dropLast() }
            // Musical grids only: a whole note halved up to 64 times. 1/7 or 3/16 are no
            // note value a player counts, and a grid like that merges neighbouring notes.
            let parts = body.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
                  let n = Int(parts[0]), let d = Int(parts[1]), n == 1, QuantizeSetting.denominators.contains(d) else {
                return .failure(QuantizeError("'\(grid.terminalSafe)' is not a grid: \(QuantizeSetting.choices)"))
            }
            whole = Double(n) / Double(d) * factor
        }
        var amount = 1.0
        if let strength {
            let s = strength.trimmingWhitespace()
            let percent = s.hasSuffix("%")
            guard let v = Double(percent ? String(s.dropLast()) : s), v.isFinite else {
                return .failure(QuantizeError("strength '\(strength.terminalSafe)' is not a number (write 75% or 0.75)"))
            }
            amount = percent ? v / 100 : v
            guard amount >= 0.01 && amount <= 1 else {
                return .failure(QuantizeError("strength '\(strength.terminalSafe)' is outside 1%…100%"))
            }
        }
        return .success(QuantizeSetting(wholeNotes: whole, strength: amount, gridText: text))
    }

    /// The grid's spacing in frames at `tempoMap`'s tempo (a beat is one `beatUnit` note).
    public func gridFrames(_ tempoMap: TempoMap) -> Double {
        wholeNotes * Double(tempoMap.timeSignature.beatUnit) * tempoMap.framesPerBeat
    }

    /// The grid line nearest timeline frame `frame`: along the map, lines lie every grid
    /// step from each bar's start (in that bar's meter and at the tempo there).
    public func nearestLine(toFrame frame: Double, tempoMap: TempoMap) -> Double {
        if tempoMap.isConstant {
            let grid = gridFrames(tempoMap)
            return (frame / grid).rounded() * grid
        }
        let p = tempoMap.point(atFrame: frame)
        let grid = gridText == "bar" ? Double(p.beatsPerBar) : wholeNotes * Double(p.beatUnit)
        let line = p.barStartBeat + ((p.beatPosition - p.barStartBeat) / grid).rounded() * grid
        return tempoMap.frame(atBeatPosition: line)
    }

    /// `1/16 at 100%`.
    public var description: String { "\(gridText) at \(Int((strength * 100).rounded()))%" }
}

/// Why a quantise setting was refused; one line for the user.
public struct QuantizeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The line.
    public var description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}
