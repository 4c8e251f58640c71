/// The node protocol and the description every node type registers.

/// What a node does with audio and MIDI.
public enum NodeKind: String, Sendable, CaseIterable {
    /// No input needed: produces audio (tone, noise, click), summed onto whatever passes through.
    case generator
    /// MIDI in, audio out (sampler), summed onto whatever passes through.
    case instrument
    /// Audio in, audio out.
    case effect
    /// Audio and MIDI in, audio out.
    case musicEffect = "music effect"
}

/// A four-character code (subtype, manufacturer), stored big-endian like an Audio Unit's.
public struct FourCharCode: Hashable, Sendable, CustomStringConvertible {
    /// The four ASCII bytes packed big-endian.
    public let rawValue: UInt32

    /// Packs the first four ASCII characters of `text` (padded with spaces).
    public init(_ text: String) {
        var value: UInt32 = 0
        var bytes = Array(text.utf8.prefix(4))
        while bytes.count < 4 { bytes.append(0x20) }
        for b in bytes { value = value << 8 | UInt32(b) }
        rawValue = value
    }

    /// The four characters.
    public var description: String {
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: rawValue >> UInt32($0)) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Everything a node type tells the registry about itself.
public struct NodeDescriptor: Sendable {
    /// The name used in chain text (`hpf`, `comp`).
    public var name: String
    /// A human name (`High-pass filter`).
    public var displayName: String
    /// What it does with audio and MIDI.
    public var kind: NodeKind
    /// Four-character subtype code, unique per manufacturer.
    public var subtype: FourCharCode
    /// Four-character manufacturer code.
    public var manufacturer: FourCharCode
    /// Version text, `major.minor.patch`.
    public var version: String
    /// Category tags (`Filter`, `Dynamics`, `Delay`, …).
    public var tags: [String]
    /// One line saying what it does.
    public var summary: String
    /// Its parameters; the first is the one a bare value (`hpf:80`) sets.
    public var parameters: [ParameterDefinition]
    /// Settings written as text (files), never set by a bare value.
    public var textParameters: [TextParameterDefinition]

    /// Creates a descriptor; the manufacturer defaults to Tapedeck's `Tpdk`.
    public init(name: String, displayName: String, kind: NodeKind, subtype: String,
                manufacturer: String = "Tpdk", version: String = "1.0.0", tags: [String],
                summary: String, parameters: [ParameterDefinition], textParameters: [TextParameterDefinition] = []) {
        self.textParameters = textParameters
        self.name = name
        self.displayName = displayName
        self.kind = kind
        self.subtype = FourCharCode(subtype)
        self.manufacturer = FourCharCode(manufacturer)
        self.version = version
        self.tags = tags
        self.summary = summary
        self.parameters = parameters
    }
}

/// A processing node: a built-in type (one `final class` per file under `Nodes/`, see
/// ``BuiltInNode``) or one a ``NodeTypeProvider`` makes (an LV2 plugin).
///
/// Lifecycle: creation and parameter sets on any thread → `prepare` off the audio thread →
/// `restart` off the audio thread once the host's warm-up blocks have run → `process` (and
/// `reset`) on the audio thread, block after block → `release` off the audio thread once the
/// audio thread can no longer reach the node. `prepare` may be called again after `release`
/// for a new format.
///
/// Channels: every node processes each of its `format.channelCount` channels with its own
/// state (a mono design run N times); nodes that need to see all channels at once (the
/// compressor, limiter and gate link their detectors; balance works on the first pair) say so.
public protocol Node: AnyObject, Sendable {
    /// What the node is: name, kind, codes, tags and parameter definitions. Any thread.
    var descriptor: NodeDescriptor { get }
    /// The node's parameters; set them from any thread, the node reads them once per block.
    var parameters: NodeParameters { get }
    /// Frames by which the node delays its input (the limiter's look-ahead); 0 for most.
    /// Off the audio thread, after `prepare`.
    var latencyFrames: Int { get }
    /// Why the node cannot do its work and passes audio through unchanged (a plugin that is
    /// not installed, or failed to start), or nil when it works. Off the audio thread, after
    /// `prepare`.
    var problem: String? { get }
    /// Something the node does that the user should hear of although it works (a plugin
    /// reporting an absurd latency, which is then not compensated), or nil. Off the audio
    /// thread, after `prepare`.
    var warning: String? { get }
    /// Allocates everything `process` will need for `format` and blocks of up to `maxFrames`.
    /// Off the audio thread.
    func prepare(format: NodeFormat, maxFrames: Int)
    /// Audio thread: renders one block. No allocation, locks, logging or throwing.
    func process(_ context: inout RenderContext)
    /// Audio thread (realtime-safe): clears delay lines, filter memory and envelopes.
    func reset()
    /// Off the audio thread, after `prepare` and the host's warm-up blocks: returns the node
    /// to the state of a freshly prepared one (a plugin is deactivated and activated again,
    /// which the audio thread may not do).
    func restart()
    /// Frees what `prepare` allocated. Off the audio thread.
    func release()
}

/// A node type compiled into Tapedeck: it describes itself statically and can be made with
/// no arguments, so the registry lists and creates it by name.
public protocol BuiltInNode: Node {
    /// The node type's registration: name, kind, codes, tags and parameter definitions.
    static var descriptor: NodeDescriptor { get }
    /// Creates a node with every parameter at its default. Any thread.
    init()
}

extension Node {
    /// No latency unless a node says otherwise.
    public var latencyFrames: Int { 0 }
    /// Nodes work unless they say otherwise.
    public var problem: String? { nil }
    /// Nothing to tell unless a node says otherwise.
    public var warning: String? { nil }
    /// A reset is all most nodes need.
    public func restart() { reset() }
}

extension BuiltInNode {
    /// The node type's descriptor, reachable from an existential.
    public var descriptor: NodeDescriptor { Self.descriptor }
}
