import TapedeckCore

/// What the host program supplies to the screen, so the UI stays independent of how mixes
/// are made.
public struct ScreenHooks: Sendable {
    /// Mixes `session` (saved in `folderPath`) to `outputPath`, reporting progress 0…1;
    /// returns a one-line summary or throws an error whose description is one line.
    /// Runs on a background thread.
    public var export: (@Sendable (_ session: Session, _ folderPath: String, _ outputPath: String,
                                   _ progress: @Sendable (Double) -> Void) throws -> String)?

    /// Renders track `track` of `session` (saved in `folderPath`) to audio, reporting
    /// progress 0…1; returns the render and a one-line summary. Runs on a background thread.
    public var freeze: (@Sendable (_ session: Session, _ folderPath: String, _ track: Int,
                                   _ progress: @Sendable (Double) -> Void) throws -> (FrozenAudio, String))?

    /// Runs a command line (`marker`, `S`, `add`, `1:00`) as the program would, for a
    /// command-line edit handed to the screen (see `SessionOwner`); returns its exit status
    /// and what it printed. Runs on the UI thread, while the session is served from memory.
    public var commandLine: (@Sendable (_ words: [String]) -> (status: Int32, out: String, err: String))?

    /// Hooks that cannot export, freeze or run command lines, unless given.
    public init(export: (@Sendable (Session, String, String, @Sendable (Double) -> Void) throws -> String)? = nil,
                freeze: (@Sendable (Session, String, Int, @Sendable (Double) -> Void) throws -> (FrozenAudio, String))? = nil,
                commandLine: (@Sendable ([String]) -> (status: Int32, out: String, err: String))? = nil) {
        self.export = export
        self.freeze = freeze
        self.commandLine = commandLine
    }
}
