/// Noise generator: white (flat) or pink (-3 dB/octave, Paul Kellet's refined filter),
/// deterministic from a fixed seed, added to every channel.
public final class NoiseNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `noise`.
    public static let descriptor = NodeDescriptor(
        name: "noise", displayName: "Noise generator", kind: .generator, subtype: "nois", tags: ["Generator", "Test"],
        summary: "White or pink noise at a level, added to the signal.",
        parameters: [
            ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -96, maximum: 0, defaultValue: -18),
            .choice(id: "color", name: "Colour", choices: ["white", "pink"]),
        ])

    /// The live parameters.
    public let parameters = NodeParameters(NoiseNode.descriptor.parameters)
    private var source = NoiseSource(seed: 0x1234_5678)
    private var pink: (Float, Float, Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0, 0, 0)
    private var level = LinearRamp(0)
    private var scratch = UnsafeStorage<Float>()
    private var rampFrames = 960

    /// Creates white noise at -18 dBFS peak.
    public init() {}

    /// Off the audio thread: allocates one block of scratch.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        scratch.allocate(maxFrames, fill: 0)
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: format.sampleRate))
        level.jump(to: gainOf(decibels: parameters.value(0)))
    }

    /// `pow` only when the level moved.
    private var levelGain = DecibelGain()

    /// Audio thread: renders the noise once, adds it to every channel.
    public func process(_ context: inout RenderContext) {
        let n = min(context.frameCount, scratch.count)
        guard let s = scratch.pointer else { return }
        level.setTarget(levelGain.of(parameters.value(0)), frames: rampFrames)
        if parameters.value(1) >= 0.5 {
            var (b0, b1, b2, b3, b4, b5, b6) = pink
            for i in 0..<n {
                let white = source.nextBipolar()
                b0 = 0.99886 * b0 + white * 0.0555179
                b1 = 0.99332 * b1 + white * 0.0750759
                b2 = 0.96900 * b2 + white * 0.1538520
                b3 = 0.86650 * b3 + white * 0.3104856
                b4 = 0.55000 * b4 + white * 0.5329522
                b5 = -0.7616 * b5 - white * 0.0168980
                // 0.11 brings the filter's gain back to about the white noise's peak level.
                s[i] = (b0 + b1 + b2 + b3 + b4 + b5 + b6 + white * 0.5362) * 0.11 * level.next()
                b6 = white * 0.115926
            }
            pink = (b0, b1, b2, b3, b4, b5, b6)
        } else {
            for i in 0..<n { s[i] = source.nextBipolar() * level.next() }
        }
        for c in 0..<context.output.count {
            let input = context.input[c], output = context.output[c]
            for i in 0..<n { output[i] = input[i] + s[i] }
        }
    }

    /// Audio thread: clears the pink filter.
    public func reset() { pink = (0, 0, 0, 0, 0, 0, 0) }

    /// Off the audio thread.
    public func release() { scratch.free() }
}
