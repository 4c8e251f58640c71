import TapedeckIO
import TapedeckCore
import TapedeckRemote

/// What the host program supplies to the screen, so the UI stays independent of how mixes
/// are made.
public struct ScreenHooks: Sendable {
    /// Exports `session` (saved in `folderPath`) as `export` would with `words`: the file to
    /// write (relative to the session folder) and any of `export`'s options, reporting
    /// progress 0…1; returns a summary or throws an error whose description is one line.
    /// Runs on a background thread.
    public var export: (@Sendable (_ session: Session, _ folderPath: String, _ words: [String],
                                   _ progress: @Sendable (Double) -> Void) throws -> String)?

    /// Why `words` are not an export (`export`'s own refusal), or nil; checked before the
    /// dialog closes. UI thread.
    public var exportProblem: (@Sendable (_ words: [String], _ folderPath: String) -> String?)?

    /// Renders track `track` of `session` (saved in `folderPath`) to audio, reporting
    /// progress 0…1; returns the render and a one-line summary. Runs on a background thread.
    public var freeze: (@Sendable (_ session: Session, _ folderPath: String, _ track: Int,
                                   _ progress: @Sendable (Double) -> Void) throws -> (FrozenAudio, String))?

    /// Runs a typed command (`marker` and its parsed value: the asker parsed the command
    /// line) as the program would, for a command-line edit or read handed to the screen (see
    /// `SessionOwner`), on the session the screen serves it (`served`); returns its exit
    /// status and what it printed. UI thread.
    public var command: (@Sendable (_ command: TypedCommand, _ served: SessionStore.Served) -> (status: Int32, out: String, err: String))?

    /// The slow part of a typed command handed to the screen (an import's copying of its
    /// audio files, for a session at `sampleRate`), to run on a worker thread before the
    /// command lands on the UI thread; nil when the command has none (it runs at once).
    /// Called on the UI thread; the work it returns runs on a worker.
    public var commandWork: (@Sendable (_ command: TypedCommand, _ sampleRate: Int) -> ScreenWork?)?

    /// Hooks that cannot export, freeze or run handed-over commands, unless given.
    public init(export: (@Sendable (Session, String, [String], @Sendable (Double) -> Void) throws -> String)? = nil,
                exportProblem: (@Sendable ([String], String) -> String?)? = nil,
                freeze: (@Sendable (Session, String, Int, @Sendable (Double) -> Void) throws -> (FrozenAudio, String))? = nil,
                command: (@Sendable (TypedCommand, SessionStore.Served) -> (status: Int32, out: String, err: String))? = nil,
                commandWork: (@Sendable (TypedCommand, Int) -> ScreenWork?)? = nil) {
        self.commandWork = commandWork
        self.export = export
        self.exportProblem = exportProblem
        self.freeze = freeze
        self.command = command
    }
}
