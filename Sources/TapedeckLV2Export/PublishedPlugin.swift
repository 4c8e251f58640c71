import TapedeckDSP

/// One of Tapedeck's effect nodes published as an LV2 plugin: a node type in a channel
/// layout. The list, the port layout and the URIs live here once; the plugin library
/// (`lv2_descriptor`) and the TTL writer both read them, so the two always agree.
public struct PublishedPlugin: Sendable {
    /// The built-in node type it runs.
    public let type: any BuiltInNode.Type
    /// 1 (mono) or 2 (stereo) audio inputs and as many outputs.
    public let channelCount: Int

    /// The URI prefix of every published plugin.
    public static let uriPrefix = "urn:tapedeck:"

    /// Every built-in effect node, mono then stereo, in registry order.
    public static let all: [PublishedPlugin] = NodeRegistry.builtIn.types
        .filter { $0.descriptor.kind == .effect }
        .flatMap { type in [1, 2].map { PublishedPlugin(type: type, channelCount: $0) } }

    /// The node's descriptor.
    public var descriptor: NodeDescriptor { type.descriptor }

    /// `urn:tapedeck:comp#stereo`.
    public var uri: String { "\(Self.uriPrefix)\(descriptor.name)#\(channelCount == 1 ? "mono" : "stereo")" }

    /// Whether the node delays its output (the limiter's look-ahead): then the plugin has a
    /// latency port. Decided by preparing one node, so it can never disagree with the node.
    public var reportsLatency: Bool {
        let node = type.init()
        node.prepare(format: NodeFormat(sampleRate: 48000, channelCount: channelCount), maxFrames: 64)
        defer { node.release() }
        return node.latencyFrames > 0
    }

    /// Port indices: the parameters (control inputs) in descriptor order, then the audio
    /// inputs, the audio outputs, and the latency output when there is one.
    public var parameterCount: Int { descriptor.parameters.count }
    /// Index of audio input `channel`.
    public func audioInputPort(_ channel: Int) -> Int { parameterCount + channel }
    /// Index of audio output `channel`.
    public func audioOutputPort(_ channel: Int) -> Int { parameterCount + channelCount + channel }
    /// Index of the latency output (meaningful when ``reportsLatency``).
    public var latencyPort: Int { parameterCount + 2 * channelCount }
    /// Ports in all.
    public var portCount: Int { latencyPort + (reportsLatency ? 1 : 0) }
}
