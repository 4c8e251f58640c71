import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// Small helpers for writing to stdout/stderr and knowing whether they are terminals.
enum Terminal {
    /// Whether stderr is a terminal (progress bars and in-place banners only then).
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    /// Whether stdout is a terminal.
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }

    /// The terminal's width when stdout is one (else `COLUMNS`, else nil).
    static var columns: Int? {
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        return getenv("COLUMNS").flatMap { Int(String(cString: $0)) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whether the user's locale encodes text as UTF-8 (else plots are drawn in ASCII).
    static var localeIsUTF8: Bool {
        setlocale(LC_CTYPE, "")
        guard let codeset = nl_langinfo(nl_item(CODESET)) else { return false }
        let name = String(cString: codeset).uppercased()
        return name == "UTF-8" || name == "UTF8"
    }

    /// Writes `text` to stderr unbuffered.
    static func err(_ text: String) {
        var t = text
        t.withUTF8 { buf in _ = write(STDERR_FILENO, buf.baseAddress, buf.count) }
    }

    /// Writes `text` plus a newline (unless `newline` is false) to stdout and flushes.
    /// Control and invisible formatting characters are escaped line by line (``SafeText``):
    /// whatever a name held, stdout only ever gets the lines the command meant.
    static func out(_ text: String, newline: Bool = true) {
        var t = escapedLines(text, newline: newline)
        t.withUTF8 { buf in
            var offset = 0
            while offset < buf.count {
                let n = write(STDOUT_FILENO, buf.baseAddress! + offset, buf.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
    }
}

extension Terminal {
    /// `text` escaped line by line (``SafeText``), with a newline after it unless `newline`
    /// is false: what ``out(_:newline:)`` writes.
    static func escapedLines(_ text: String, newline: Bool) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { SafeText.escaped(String($0)) }
            .joined(separator: "\n") + (newline ? "\n" : "")
    }
}

/// A one-line progress bar on stderr, drawn only on a terminal and at most ~10 times a second.
struct ProgressBar {
    private let label: String
    private let enabled: Bool
    private var lastDrawnTenths = -1

    /// A bar drawn on `console`'s stderr when it is a terminal (never for a reply).
    init(label: String, console: Console = .terminal) {
        self.label = label
        self.enabled = console.stderrIsTTY
    }

    /// Shows `fraction` (0...1) done.
    mutating func update(_ fraction: Double) {
        guard enabled else { return }
        let tenths = Int((fraction * 1000).rounded(.down))
        guard tenths != lastDrawnTenths else { return }
        lastDrawnTenths = tenths
        let width = 30
        let filled = Int(Double(width) * min(max(fraction, 0), 1))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        Terminal.err("\r\(label) [\(bar)] \(tenths / 10).\(tenths % 10)%")
    }

    /// Erases the bar so the summary line starts clean.
    func finish() {
        guard enabled else { return }
        Terminal.err("\r\u{1B}[2K")
    }
}
