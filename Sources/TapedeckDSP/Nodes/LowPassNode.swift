/// Low-pass filter: an RBJ cookbook biquad (12 dB/octave) with resonance.
public final class LowPassNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `lpf`.
    public static let descriptor = NodeDescriptor(
        name: "lpf", displayName: "Low-pass filter", kind: .effect, subtype: "lpf ", tags: ["Filter", "EQ"],
        summary: "Removes highs above the cutoff (12 dB/oct RBJ biquad, resonance as Q).",
        parameters: [
            ParameterDefinition(id: "cutoff", name: "Cutoff", unit: .hertz, minimum: 10, maximum: 20_000, defaultValue: 8000, decimals: 0),
            ParameterDefinition(id: "resonance", name: "Resonance", unit: .q, minimum: 0.1, maximum: 10, defaultValue: 0.707, decimals: 3),
        ])

    /// The live parameters (`cutoff` Hz, `resonance` Q).
    public let parameters = NodeParameters(LowPassNode.descriptor.parameters)
    private var filter = SmoothedBiquad(shape: .lowPass)

    /// Creates an 8 kHz Butterworth low-pass.
    public init() {}

    /// Off the audio thread: allocates filter memory per channel.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        filter.prepare(channelCount: format.channelCount, sampleRate: format.sampleRate,
                       frequencyHertz: parameters.value(0), q: parameters.value(1), gainDecibels: 0)
    }

    /// Audio thread: filters every channel, gliding to new settings.
    public func process(_ context: inout RenderContext) {
        filter.setTargets(frequencyHertz: parameters.value(0), q: parameters.value(1), gainDecibels: 0)
        filter.process(input: context.input, output: context.output, frameCount: context.frameCount)
    }

    /// Audio thread: clears filter memory.
    public func reset() { filter.reset() }

    /// Off the audio thread.
    public func release() { filter.release() }
}
