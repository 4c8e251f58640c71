import TapedeckCore

/// One sub-command of `tapedeck`.
protocol Command {
    /// The command's table: name, summary, synopsis, options, prose. Parsing, `help`, the man
    /// page and the completions are all generated from it.
    static var spec: CommandSpec { get }
    /// Parses the arguments after the command word; a mistake throws ``UsageError``.
    init(arguments: inout Arguments) throws
    /// Does the work in `context` (where it prints, how it reaches sessions); returns the
    /// exit status. Errors are printed as one line by ``runCommand(_:_:in:)``.
    func run(_ context: CommandContext) throws -> Int32
}

extension Command {
    /// The word after `tapedeck`.
    static var name: String { spec.name }
    /// One line for `tapedeck help`.
    static var summary: String { spec.summary }
    /// Full usage text for `tapedeck help NAME`.
    static var usage: String { HelpText.usage(spec) }
}

/// Exit statuses (sysexits-style, so scripts can tell a usage mistake from a failure).
enum ExitCode {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let unavailable: Int32 = 69
    static let cantCreate: Int32 = 73
    static let ioError: Int32 = 74
    static let interrupted: Int32 = 130
}

/// A command a running Tapedeck that holds its session open takes from another
/// (``OwnerForwarding``): the asker parses the command line into this value and sends its JSON
/// encoding (paths in it absolute); the owner decodes it by the command's name from
/// ``CommandList`` and runs it. The owner never sees the words.
protocol HandedCommand: Command, Codable {
    /// Throws when the value holds what ``Command/init(arguments:)`` never gives (a region
    /// number 0, a NaN level, a controller past 127, an option with one it excludes): a value
    /// decoded on the owner's side did not come through the parser, and `run` relies on what
    /// the parser checks, so a hand-made `cmd` line on the control socket must not bring the
    /// screen down. Words (times, names, chains) are read when the command runs, as typed.
    func validate() throws(UsageError)
}

/// The checks ``HandedCommand/validate()`` shares: each refuses, in one line naming the
/// command and the field, a value the command line would never have parsed.
enum HandedCheck {
    static func refuse(_ command: String, _ field: String, _ why: String) -> UsageError {
        UsageError("\(command): \(field) \(why), which the command line never gives")
    }

    /// A fader or send level as stored: finite, at most the fader's top.
    static func level(_ decibels: Double?, _ command: String, _ field: String) throws(UsageError) {
        guard let decibels else { return }
        if let problem = Fader.problem(decibels) { throw refuse(command, field, "\(decibels): \(problem)") }
    }

    /// A pan: −1…1.
    static func pan(_ value: Double?, _ command: String, _ field: String) throws(UsageError) {
        guard let value else { return }
        guard value.isFinite, (-1...1).contains(value) else { throw refuse(command, field, "\(value) is outside -1...1") }
    }

    /// A whole number within `range`.
    static func within(_ value: Int?, _ range: ClosedRange<Int>, _ command: String, _ field: String) throws(UsageError) {
        guard let value else { return }
        guard range.contains(value) else {
            let bounds = range.upperBound == Int.max ? "below \(range.lowerBound)" : "outside \(range.lowerBound)...\(range.upperBound)"
            throw refuse(command, field, "\(value) is \(bounds)")
        }
    }
}
