/// A lane as CSV for scripts: one point a line, `time,value[,curve]`, the time in seconds
/// (written with enough digits to come back to the same frame), the value as the parameter
/// reads it (`-6.0`, `-inf`, `L20`, `on`, a number).
public enum AutomationCSV {
    /// The lane's points, with a `time,value,curve` header.
    public static func text(_ lane: AutomationLane, sampleRate: Int) -> String {
        var out = "time,value,curve\n"
        out.reserveCapacity(lane.points.count * 32)
        let rate = Double(max(sampleRate, 1))
        for p in lane.points {
            out += secondsText(Double(p.frame) / rate)
            out += ","
            out += valueText(p.value, parameter: lane.parameter)
            out += ","
            out += p.curve.rawValue
            out += "\n"
        }
        return out
    }

    /// A value as the CSV keeps it: read back to what was written (a level to a millionth of a
    /// dB, not the 0.1 dB the screen shows; a pan as −1…1), in words the import reads.
    static func valueText(_ value: Double, parameter: AutomationParameter) -> String {
        switch parameter {
        case .gain, .send:
            return Fader.isSilent(value) ? "-inf" : decimalText(value)
        case .pan:
            return decimalText(value)
        case .mute:
            return parameter.valueText(value)
        case .node:
            // Every digit: read back to what was written.
            return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
        }
    }

    /// `value` to six decimals, trailing zeros dropped, never in exponent form.
    static func decimalText(_ value: Double) -> String {
        let micros = (value * 1e6).rounded()
        guard micros.isFinite, abs(micros) < 9e15 else { return "\(value)" }
        let m = Int64(micros)
        let whole = String(abs(m) / 1_000_000)
        var digits = String(abs(m) % 1_000_000)
        digits = String(repeating: "0", count: 6 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return (m < 0 ? "-" : "") + whole + (digits.isEmpty ? "" : "." + digits)
    }

    /// Seconds with nine decimals, trailing zeros dropped (a frame at 768 kHz is 1.3 µs).
    static func secondsText(_ seconds: Double) -> String {
        let whole = seconds.rounded(.towardZero)
        var nanos = Int64(((seconds - whole) * 1e9).rounded())
        var w = Int64(whole)
        if nanos >= 1_000_000_000 { w += 1; nanos -= 1_000_000_000 }
        guard nanos > 0 else { return String(w) }
        var digits = String(nanos)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(w).\(digits)"
    }

    /// The points of `text` for `parameter`: times read as every time a user types
    /// (``TimeText/frames(from:tempoMap:field:)``), values as the parameter reads them, an
    /// optional third column `linear` or `exponential`; blank lines and a header skipped.
    /// Throws naming the first bad line.
    public static func points(_ text: String, parameter: AutomationParameter, tempoMap: TempoMap) throws(AutomationError) -> [AutomationPoint] {
        var out: [AutomationPoint] = []
        for (n, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = String(raw).trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace() }
            if n == 0 && fields.first?.lowercased() == "time" { continue }
            guard fields.count == 2 || fields.count == 3 else {
                throw AutomationError("line \(n + 1): '\(line.terminalSafe)' is not time,value[,curve]")
            }
            let frame: Int64
            do { frame = try TimeText.frames(from: fields[0], tempoMap: tempoMap) } catch {
                throw AutomationError("line \(n + 1): \(error)")
            }
            let value: Double
            do { value = try parameter.parseValue(fields[1]) } catch { throw AutomationError("line \(n + 1): \(error.description)") }
            var curve = AutomationCurve.linear
            if fields.count == 3 && !fields[2].isEmpty {
                guard let c = AutomationCurve(rawValue: fields[2].lowercased()) else {
                    throw AutomationError("line \(n + 1): '\(fields[2].terminalSafe)' is not linear or exponential")
                }
                curve = c
            }
            out.append(AutomationPoint(frame: frame, value: value, curve: curve))
        }
        return out
    }
}
