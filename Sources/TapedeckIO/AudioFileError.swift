import TapedeckCore

/// Why an audio file could not be read or written. The description is one line for the user,
/// naming the file and the reason.
public struct AudioFileError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file concerned.
    public var path: String
    /// What went wrong, in words.
    public var reason: String

    /// Creates an error for `path`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `PATH: REASON`, as the user sees it, the path escaped (``SafeText``); always one line,
    /// whatever a C library put in the reason.
    public var description: String {
        let line = "\(path.terminalSafe): \(reason)"
        return line.contains(where: \.isNewline) ? String(line.map { $0.isNewline ? " " : $0 }) : line
    }
}
