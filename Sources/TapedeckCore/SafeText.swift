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

    /// JSON text (as JSONSerialization writes it) safe for a terminal with the same meaning:
    /// every character that must not reach a terminal raw and that JSON leaves raw inside its
    /// strings (DEL, C1 controls, bidirectional overrides, zero-width and other invisible
    /// formatting characters) becomes a `\uXXXX` escape (a surrogate pair above U+FFFF), which
    /// every JSON reader turns back into the same character. Characters below U+0020 are left
    /// alone: JSON escapes them inside strings already, and outside strings they are the
    /// document's own line breaks and indents.
    public static func jsonSafe(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { $0.value >= 0x7F && needsEscape($0) }) else { return json }
        var out = ""
        out.reserveCapacity(json.utf8.count + 16)
        func unit(_ v: UInt32) {
            let hex = String(v, radix: 16, uppercase: true)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
        for scalar in json.unicodeScalars {
            guard scalar.value >= 0x7F && needsEscape(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            if scalar.value > 0xFFFF {
                let v = scalar.value - 0x10000
                unit(0xD800 + (v >> 10))
                unit(0xDC00 + (v & 0x3FF))
            } else {
                unit(scalar.value)
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
