import Foundation
import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Where a command prints: this process's terminal, or a reply kept for another process (a
/// command the screen runs for `tapedeck marker …` typed in another shell: see
/// ``OwnerForwarding``), whose text never reaches the terminal the screen is drawn on.
final class Console: @unchecked Sendable {
    /// What was printed, when kept for a reply.
    private(set) var outText = ""
    private(set) var errText = ""
    /// Whether the text is kept (else written to stdout and stderr).
    let keeps: Bool

    /// This process's terminal. (Sendable: the terminal's console keeps nothing; a console
    /// that keeps a reply is made for one command and used on the thread that runs it.)
    static let terminal = Console(keeping: false)

    /// A console that keeps what a command prints, for its reply.
    static func reply() -> Console { Console(keeping: true) }

    private init(keeping: Bool) { keeps = keeping }

    /// Writes `text` plus a newline (unless `newline` is false) to stdout, escaped line by
    /// line (``Terminal/out(_:newline:)``).
    func out(_ text: String, newline: Bool = true) {
        if keeps { outText += Terminal.escapedLines(text, newline: newline) } else { Terminal.out(text, newline: newline) }
    }

    /// Writes `text` to stderr unbuffered.
    func err(_ text: String) {
        if keeps { errText += text } else { Terminal.err(text) }
    }

    /// Whether stderr is a terminal a progress bar may be drawn on.
    var stderrIsTTY: Bool { !keeps && Terminal.stderrIsTTY }
}

/// What a command runs with: where it prints, how it reaches sessions (from disk, or the one
/// an owner serves it), and the folder it was typed in. Passed explicitly, so a command the
/// screen runs for another process changes nothing global (issue 42).
struct CommandContext {
    /// Where it prints.
    let console: Console
    /// How it loads and saves sessions.
    let sessions: SessionStore
    /// The folder its relative names are read from: where it was typed, also when the
    /// screen runs it for another shell.
    let workingFolder: String
    /// Files the screen's worker already copied for this import (``ImportInBackground``).
    let importCopies: CopiedImports?

    init(console: Console, sessions: SessionStore, workingFolder: String, importCopies: CopiedImports? = nil) {
        self.console = console
        self.sessions = sessions
        self.workingFolder = workingFolder
        self.importCopies = importCopies
    }

    /// The command line's own: the terminal, sessions on disk, this process's folder.
    static func commandLine() -> CommandContext {
        CommandContext(console: .terminal, sessions: .disk, workingFolder: FileManager.default.currentDirectoryPath)
    }

    /// Loads `folder`'s session (``SessionStore/load(_:)``).
    func load(_ folder: SessionFolder) throws(SessionError) -> Session { try sessions.load(folder) }

    /// Saves `session` into `folder` (``SessionStore/save(_:to:)``).
    func save(_ session: Session, to folder: SessionFolder) throws(SessionError) { try sessions.save(session, to: folder) }
}
