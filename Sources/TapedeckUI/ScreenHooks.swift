import TapedeckCore

/// What the host program supplies to the screen, so the UI stays independent of how mixes
/// are made.
public struct ScreenHooks: Sendable {
    /// Mixes `session` (saved in `folderPath`) to `outputPath`, reporting progress 0…1;
    /// returns a one-line summary or throws an error whose description is one line.
    /// Runs on a background thread.
    public var export: (@Sendable (_ session: Session, _ folderPath: String, _ outputPath: String,
                                   _ progress: @Sendable (Double) -> Void) throws -> String)?

    /// Hooks that cannot export, unless given.
    public init(export: (@Sendable (Session, String, String, @Sendable (Double) -> Void) throws -> String)? = nil) {
        self.export = export
    }
}
