import TapedeckCore

/// What the host program supplies to the screen, so the UI stays independent of how chains
/// are checked and mixes are made.
public struct ScreenHooks: Sendable {
    /// Checks chain text; nil when it is a valid chain, else the error message. UI thread.
    public var validateChain: @Sendable (String) -> String?
    /// Describes a parameter value with its unit (`80` of `hpf` `cutoff` → `80 Hz`); nil
    /// shows the text as written. UI thread.
    public var describeParameter: @Sendable (_ node: String, _ parameter: String, _ value: String) -> String?
    /// Mixes `session` (saved in `folderPath`) to `outputPath`, reporting progress 0…1;
    /// returns a one-line summary or throws an error whose description is one line.
    /// Runs on a background thread.
    public var export: (@Sendable (_ session: Session, _ folderPath: String, _ outputPath: String,
                                   _ progress: @Sendable (Double) -> Void) throws -> String)?

    /// Hooks that accept any chain, describe nothing and cannot export, unless given.
    public init(validateChain: @escaping @Sendable (String) -> String? = { _ in nil },
                describeParameter: @escaping @Sendable (String, String, String) -> String? = { _, _, _ in nil },
                export: (@Sendable (Session, String, String, @Sendable (Double) -> Void) throws -> String)? = nil) {
        self.validateChain = validateChain
        self.describeParameter = describeParameter
        self.export = export
    }
}
