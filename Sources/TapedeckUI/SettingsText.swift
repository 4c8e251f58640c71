import Foundation

/// The lines of a settings file (keys, config, themes) as a person sees them in an editor:
/// split at LF, CRLF or a lone CR, each line decoded on its own, so one invalid UTF-8 byte
/// costs only its line (reported by number) and a file saved on Windows reads as lines.
enum SettingsText {
    /// The lines of `bytes`; nil for a line that is not valid UTF-8.
    static func lines(_ bytes: [UInt8]) -> [String?] {
        var lines: [String?] = []
        var start = 0
        var i = 0
        func take(_ end: Int) {
            let slice = bytes[start..<end]
            lines.append(String(validating: slice, as: UTF8.self))
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x0A || b == 0x0D {
                take(i)
                if b == 0x0D && i + 1 < bytes.count && bytes[i + 1] == 0x0A { i += 1 }
                start = i + 1
            }
            i += 1
        }
        if start < bytes.count || bytes.isEmpty || bytes.last == 0x0A || bytes.last == 0x0D { take(bytes.count) }
        return lines
    }

    /// The lines of `text`, split the same way.
    static func lines(_ text: String) -> [String?] { lines(Array(text.utf8)) }

    /// The lines of the file at `path`, or nil when there is no readable file there.
    static func read(_ path: String) -> [String?]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return lines([UInt8](data))
    }
}
