/// Text that came from outside — file and track names, paths, chain text, take metadata —
/// made safe to print on a terminal.
///
/// A name is data, not a command: printed raw, an escape sequence in a file name could move
/// the cursor, clear the screen, retitle the window or hide the rest of the line; a newline
/// could forge a second line of output; a bidirectional override could make `evil.wav` read
/// as something else. Every such character is written as a visible escape instead.
public enum SafeText {
    /// `text` with every control character (C0, DEL, C1), line and paragraph separator and
    /// invisible formatting character (bidirectional overrides and isolates, zero-width
    /// characters, the byte-order mark) replaced by an escape: `\n`, `\r`, `\t`, else
    /// `\uXXXX` (the JSON spelling, so escaped text inside JSON output stays valid JSON).
    /// Text without such characters comes back unchanged.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += scalar.value <= 0xFFFF
                    ? "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    : "\\u{" + hex + "}"
            }
        }
        return out
    }

    /// Whether `scalar` must not reach a terminal as itself.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (v >= 0x7F && v <= 0x9F) { return true }
        if v < 0xA0 { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}

extension String {
    /// This text with control and invisible formatting characters escaped (see
    /// ``SafeText/escaped(_:)``), for printing names and paths.
    public var terminalSafe: String { SafeText.escaped(self) }
}
