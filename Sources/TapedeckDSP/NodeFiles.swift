/// Settings that name files (`sampler:file=samples/kick.wav`, `gm:font=…sf2`), and the host's
/// part in loading them: TapedeckDSP does no file I/O of its own, so the host hands a
/// ``NodeFiles`` to ``Chain/instantiate(registry:stateFolder:files:)`` and the node reads
/// through it while the chain is built — on the control thread, never the audio thread.

/// A setting written as text (a file name), beside a node's numeric parameters.
public struct TextParameterDefinition: Sendable, Equatable {
    /// Identifier in chain text (`file`).
    public var id: String
    /// Human name (`Sample file`).
    public var name: String
    /// One line saying what it takes.
    public var summary: String
    /// Whether the file belongs in the session (a sample: copied into its `samples/` folder
    /// when the chain is set) rather than being named where it lies (a system SoundFont).
    public var isSessionFile: Bool

    /// Creates a definition.
    public init(id: String, name: String, summary: String, isSessionFile: Bool = false) {
        self.id = id
        self.name = name
        self.summary = summary
        self.isSessionFile = isSessionFile
    }
}

/// A text setting as written in chain text.
public struct TextSetting: Equatable, Sendable {
    /// The text parameter's id.
    public var parameter: String
    /// Its value, as written (without `<…>`).
    public var value: String

    /// Creates a setting.
    public init(parameter: String, value: String) {
        self.parameter = parameter
        self.value = value
    }
}

/// Why a file a node names cannot be used; one line for the user.
public struct NodeFileProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// The line.
    public var description: String
    /// Creates a problem.
    public init(_ description: String) { self.description = description }
}

/// Mono samples a node plays, at their own rate.
public struct LoadedSample: Sendable {
    /// The samples (channels mixed to one).
    public var samples: [Float]
    /// Their rate.
    public var sampleRate: Double

    /// Creates a sample.
    public init(samples: [Float], sampleRate: Double) {
        self.samples = samples
        self.sampleRate = sampleRate
    }
}

/// The host's access to the files chains name. Off the audio thread only.
public protocol NodeFiles: Sendable {
    /// The absolute path of `text` (relative names are the session's), or why it may not be
    /// used (missing, outside the session).
    func resolve(_ text: String) -> Result<String, NodeFileProblem>
    /// The audio file at `path` (absolute) as mono floats.
    func readSample(atPath path: String) -> Result<LoadedSample, NodeFileProblem>
}

/// A node with text settings: the chain hands each one over after creating the node and
/// before preparing it. Control thread.
public protocol TextParameterNode: Node {
    /// Applies text setting `id`, reading any file through `files` (nil: the host gave no
    /// access to files; the node says so in its ``Node/problem``).
    func setText(_ id: String, _ value: String, files: (any NodeFiles)?)
}
