/// Node types beyond the built-in ones (LV2 plugins), discovered at run time and named in
/// chain text as `PREFIX:REFERENCE`.

/// A source of node types the registry does not compile in: it resolves references (a URI or
/// a short name), describes the types it finds and makes their nodes. Implementations must be
/// safe to call from any thread but the audio thread.
public protocol NodeTypeProvider: Sendable {
    /// The word before the colon that names this provider's types in chains (`lv2`).
    var prefix: String { get }
    /// Finds the node type `reference` names: a URI when `isURI`, otherwise a short name.
    func resolve(_ reference: String, isURI: Bool) -> NodeResolution
    /// The descriptor of installed type `identifier` (as ``resolve(_:isURI:)`` returned it).
    func descriptor(identifier: String) -> NodeDescriptor?
    /// The canonical name of preset `name` (a label or an identifier) of type `identifier`.
    func resolvePreset(_ name: String, identifier: String) throws(NodeTypeError) -> String
    /// A new node of type `identifier`, starting from `entry`'s preset and saved state (read
    /// from `stateFolder`); nil when the type is not installed. Problems that do not stop the
    /// node from existing (a state folder that cannot be read) are reported by its
    /// ``Node/problem``. Off the audio thread.
    func makeNode(identifier: String, entry: Chain.Entry, stateFolder: String?) -> (any Node)?
    /// `tapedeck nodes NAME` for type `identifier`: the description, parameters and whatever
    /// else the provider knows (presets, ports, author).
    func detailText(identifier: String) -> String
}

/// What a reference to a provider's node type names.
public enum NodeResolution: Equatable, Sendable {
    /// An installed type, by its identifier (an LV2 plugin's URI).
    case found(identifier: String)
    /// A URI no installed type has: the chain keeps it as a missing node.
    case notInstalled(identifier: String)
    /// A short name several installed types share: their identifiers.
    case ambiguous([String])
    /// A short name that names no type: why, in words (with suggestions).
    case unknown(String)
}

/// A provider's answer when a name does not fit: one line for the user.
public struct NodeTypeError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What is wrong.
    public var message: String
    /// Creates the error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
