import TapedeckCore

/// One parser under fuzzing: how case `index` is made, and what must hold when it is run.
protocol FuzzTarget {
    /// The name on the command line and in reports.
    static var name: String { get }
    /// Sets up what the cases need (temporary folders, seed files). Runs in the worker.
    init() throws
    /// The bytes of case `index` of a run with `seed`.
    func input(seed: UInt64, index: Int) -> [UInt8]
    /// Runs one input through the parser and what uses its result; returns why the outcome
    /// is wrong (an unclear message, a value past a limit), or nil. A crash or hang is seen
    /// by the supervisor, not here.
    func check(_ input: [UInt8], index: Int) -> String?
}

/// The rules every message to a user follows.
enum Oracle {
    /// Why `message` is not a clear message, or nil: it must be non-empty, one line (unless
    /// `lines` says more), free of raw control characters, free of Foundation's generic
    /// wording, and name at least one of `naming` (the field, the value or the file).
    static func unclear(_ message: String, naming: [String] = [], lines: Int = 1) -> String? {
        if message.isEmpty { return "empty message" }
        let split = message.split(separator: "\n", omittingEmptySubsequences: false)
        if split.count > lines { return "\(split.count) lines in: \(message.terminalSafe)" }
        if message.unicodeScalars.contains(where: { $0 != "\n" && SafeText.needsEscape($0) }) {
            return "raw control character in: \(message.terminalSafe)"
        }
        for vague in ["The given data was not valid JSON", "Fatal error", "The operation could not be completed"] where message.contains(vague) {
            return "vague wording '\(vague)' in: \(message.terminalSafe)"
        }
        if !naming.isEmpty && !naming.contains(where: { message.contains($0) }) {
            return "names none of \(naming.map(\.terminalSafe)) in: \(message.terminalSafe)"
        }
        return nil
    }

    /// `bytes` as text the way a parser taking a `String` sees them.
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
