import TapedeckDSP

/// A running published plugin: one built-in node behind LV2's `connect_port`/`run`.
///
/// The host connects a pointer per port; `run` copies the control inputs into the node's
/// parameters (which clamp them to their ranges), hands the audio pointers to the node in
/// blocks of at most ``blockFrames`` and writes the latency port.
public final class PluginAdapter: @unchecked Sendable {
    /// Longest block the node is prepared for; longer runs are split.
    public static let blockFrames = 4096

    private let plugin: PublishedPlugin
    private let node: any BuiltInNode
    private let ports: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let hasLatencyPort: Bool
    private let silence: UnsafeMutablePointer<Float>
    private let format: NodeFormat

    /// A node of `plugin`'s type prepared for `sampleRate`. Off the audio thread
    /// (LV2 `instantiate`).
    public init(plugin: PublishedPlugin, sampleRate: Double) {
        self.plugin = plugin
        node = plugin.type.init()
        hasLatencyPort = plugin.reportsLatency
        ports = .allocate(capacity: plugin.portCount)
        ports.initialize(repeating: nil, count: plugin.portCount)
        inputs = .allocate(capacity: plugin.channelCount)
        outputs = .allocate(capacity: plugin.channelCount)
        silence = .allocate(capacity: Self.blockFrames)
        silence.initialize(repeating: 0, count: Self.blockFrames)
        format = NodeFormat(sampleRate: sampleRate, channelCount: plugin.channelCount)
        node.prepare(format: format, maxFrames: Self.blockFrames)
    }

    deinit {
        node.release()
        ports.deallocate()
        inputs.deallocate()
        outputs.deallocate()
        silence.deallocate()
    }

    /// LV2 `connect_port`: remembers where port `index` lives. Any thread the host likes, not
    /// during `run`.
    public func connect(port index: Int, to location: UnsafeMutableRawPointer?) {
        guard index >= 0 && index < plugin.portCount else { return }
        ports[index] = location
    }

    /// LV2 `activate`: starts from silence, at the control values the host has set (so a gain
    /// of +6 dB starts there instead of ramping up from the default). Off the audio thread.
    public func activate() {
        readControls()
        node.release()
        node.prepare(format: format, maxFrames: Self.blockFrames)
    }

    /// Copies every connected control input into the node's parameters (which clamp them).
    @inline(__always) private func readControls() {
        let parameters = node.parameters
        for i in 0..<plugin.parameterCount {
            if let value = ports[i]?.assumingMemoryBound(to: Float.self).pointee, value.isFinite {
                parameters.set(i, Double(value))
            }
        }
    }

    /// LV2 `run`, on the host's audio thread: no allocation, lock or system call.
    public func run(frameCount: Int) {
        readControls()
        var done = 0
        while done < frameCount {
            let n = min(Self.blockFrames, frameCount - done)
            for c in 0..<plugin.channelCount {
                // An unconnected input reads as silence; an unconnected output is not written.
                inputs[c] = ports[plugin.audioInputPort(c)].map { $0.assumingMemoryBound(to: Float.self) + done } ?? silence
                outputs[c] = ports[plugin.audioOutputPort(c)].map { $0.assumingMemoryBound(to: Float.self) + done } ?? silence
            }
            var context = RenderContext(input: UnsafeBufferPointer(start: inputs, count: plugin.channelCount),
                                        output: UnsafeBufferPointer(start: outputs, count: plugin.channelCount),
                                        frameCount: n)
            node.process(&context)
            done += n
        }
        if hasLatencyPort, let latency = ports[plugin.latencyPort] {
            latency.assumingMemoryBound(to: Float.self).pointee = Float(node.latencyFrames)
        }
    }
}
