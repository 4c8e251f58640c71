/// Gain: a level change in decibels, and a polarity switch (`invert=1`, as a console's ø
/// button: a null test, a microphone wired the wrong way round), ramped so steps never click.
public final class GainNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `gain`.
    public static let descriptor = NodeDescriptor(
        name: "gain", displayName: "Gain", kind: .effect, subtype: "gain", tags: ["Utility"],
        summary: "Changes the level by a number of decibels; invert=1 flips the polarity.",
        parameters: [
            ParameterDefinition(id: "gain", name: "Gain", unit: .decibels, minimum: -96, maximum: 24, defaultValue: 0),
            ParameterDefinition(id: "invert", name: "Polarity invert", unit: .plain, minimum: 0, maximum: 1, defaultValue: 0, decimals: 0),
        ])

    /// The live parameters (`gain` in dB, `invert` 0 or 1).
    public let parameters = NodeParameters(GainNode.descriptor.parameters)
    private var ramp = LinearRamp(1)
    private var rampFrames = 960
    private var gainCache = DecibelGain()

    /// Creates a unity-gain node.
    public init() {}

    /// Off the audio thread: remembers the ramp length for `format`.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: format.sampleRate))
        ramp.jump(to: target)
    }

    /// The gain asked for, its sign flipped when inverted. Audio thread: arithmetic.
    private var target: Float { gainCache.of(parameters.value(0)) * (parameters.value(1) >= 0.5 ? -1 : 1) }

    /// Audio thread: reads the gain once, ramps to it over 20 ms (through zero when the polarity
    /// flips), applies it to every channel.
    public func process(_ context: inout RenderContext) {
        ramp.setTarget(target, frames: rampFrames)
        var channelRamp = ramp
        for c in 0..<context.output.count {
            channelRamp = ramp
            applyGain(context.input[c], context.output[c], count: context.frameCount, ramp: &channelRamp)
        }
        ramp = channelRamp
    }

    /// Audio thread: lands on the current target without a ramp.
    public func reset() { ramp.jump(to: ramp.target) }

    /// Nothing to free.
    public func release() {}
}
