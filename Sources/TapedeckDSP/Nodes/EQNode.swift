/// Three-band parametric EQ: low shelf, peak, high shelf (RBJ cookbook biquads in series).
public final class EQNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `eq`.
    public static let descriptor = NodeDescriptor(
        name: "eq", displayName: "Parametric EQ", kind: .effect, subtype: "peq3", tags: ["EQ", "Filter"],
        summary: "Low shelf, peak and high shelf bands (RBJ cookbook); 0 dB bands are transparent.",
        parameters: [
            ParameterDefinition(id: "lowFreq", name: "Low shelf frequency", unit: .hertz, minimum: 20, maximum: 2000, defaultValue: 100, decimals: 0),
            ParameterDefinition(id: "lowGain", name: "Low shelf gain", unit: .decibels, minimum: -24, maximum: 24, defaultValue: 0),
            ParameterDefinition(id: "midFreq", name: "Peak frequency", unit: .hertz, minimum: 40, maximum: 18_000, defaultValue: 1000, decimals: 0),
            ParameterDefinition(id: "midGain", name: "Peak gain", unit: .decibels, minimum: -24, maximum: 24, defaultValue: 0),
            ParameterDefinition(id: "midQ", name: "Peak Q", unit: .q, minimum: 0.1, maximum: 18, defaultValue: 1, decimals: 2),
            ParameterDefinition(id: "highFreq", name: "High shelf frequency", unit: .hertz, minimum: 500, maximum: 20_000, defaultValue: 8000, decimals: 0),
            ParameterDefinition(id: "highGain", name: "High shelf gain", unit: .decibels, minimum: -24, maximum: 24, defaultValue: 0),
        ])

    /// Shelf slope as a Q: 1/√2 gives the cookbook's S = 1, the steepest shelf without overshoot.
    static let shelfQ = 0.5.squareRoot()

    /// The live parameters.
    public let parameters = NodeParameters(EQNode.descriptor.parameters)
    private var low = SmoothedBiquad(shape: .lowShelf)
    private var mid = SmoothedBiquad(shape: .peak)
    private var high = SmoothedBiquad(shape: .highShelf)

    /// Creates a flat EQ.
    public init() {}

    /// Off the audio thread: allocates filter memory for every band and channel.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        let p = parameters
        low.prepare(channelCount: format.channelCount, sampleRate: format.sampleRate,
                    frequencyHertz: p.value(0), q: Self.shelfQ, gainDecibels: p.value(1))
        mid.prepare(channelCount: format.channelCount, sampleRate: format.sampleRate,
                    frequencyHertz: p.value(2), q: p.value(4), gainDecibels: p.value(3))
        high.prepare(channelCount: format.channelCount, sampleRate: format.sampleRate,
                     frequencyHertz: p.value(5), q: Self.shelfQ, gainDecibels: p.value(6))
    }

    /// Audio thread: the three bands in series, gliding to new settings.
    public func process(_ context: inout RenderContext) {
        let p = parameters
        low.setTargets(frequencyHertz: p.value(0), q: Self.shelfQ, gainDecibels: p.value(1))
        mid.setTargets(frequencyHertz: p.value(2), q: p.value(4), gainDecibels: p.value(3))
        high.setTargets(frequencyHertz: p.value(5), q: Self.shelfQ, gainDecibels: p.value(6))
        let out = context.output
        // Flat bands (0 dB) are skipped; a flat EQ only copies.
        let lowOn = !low.isTransparent(), midOn = !mid.isTransparent(), highOn = !high.isTransparent()
        if !(lowOn || midOn || highOn) {
            for c in 0..<min(out.count, context.input.count) where out[c] != context.input[c] {
                out[c].update(from: context.input[c], count: context.frameCount)
            }
            return
        }
        if out.count == 1 && context.input.count == 1 {
            if out[0] != context.input[0] { out[0].update(from: context.input[0], count: context.frameCount) }
            if SmoothedBiquad.processSteadyCascade(&low, &mid, &high, buffer: out[0], frameCount: context.frameCount) { return }
        }
        low.process(input: context.input, output: out, frameCount: context.frameCount)
        mid.process(input: UnsafeBufferPointer(start: out.baseAddress, count: out.count), output: out, frameCount: context.frameCount)
        high.process(input: UnsafeBufferPointer(start: out.baseAddress, count: out.count), output: out, frameCount: context.frameCount)
    }

    /// Audio thread: clears filter memory.
    public func reset() { low.reset(); mid.reset(); high.reset() }

    /// Off the audio thread.
    public func release() { low.release(); mid.release(); high.release() }
}
