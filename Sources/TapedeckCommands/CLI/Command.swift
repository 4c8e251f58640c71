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
protocol HandedCommand: Command, Codable {}
