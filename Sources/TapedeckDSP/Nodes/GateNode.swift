/// Noise gate: closes (attenuates by `range`) when the loudest channel stays below the
/// threshold for longer than the hold time; opens with the attack, closes with the release.
public final class GateNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `gate`.
    public static let descriptor = NodeDescriptor(
        name: "gate", displayName: "Noise gate", kind: .effect, subtype: "gate", tags: ["Dynamics"],
        summary: "Silences the signal while it stays below the threshold (hold, attack, release, range).",
        parameters: [
            ParameterDefinition(id: "threshold", name: "Threshold", unit: .decibels, minimum: -96, maximum: 0, defaultValue: -50),
            ParameterDefinition(id: "attack", name: "Attack", unit: .milliseconds, minimum: 0.05, maximum: 100, defaultValue: 0.5, decimals: 2),
            ParameterDefinition(id: "hold", name: "Hold", unit: .milliseconds, minimum: 0, maximum: 1000, defaultValue: 20, decimals: 0),
            ParameterDefinition(id: "release", name: "Release", unit: .milliseconds, minimum: 5, maximum: 2000, defaultValue: 80, decimals: 0),
            ParameterDefinition(id: "range", name: "Range", unit: .decibels, minimum: -96, maximum: 0, defaultValue: -80),
        ])

    /// The live parameters.
    public let parameters = NodeParameters(GateNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var gain: Float = 0
    private var holdRemaining = 0
    private var gains = UnsafeStorage<Float>()

    /// Creates a gate at -50 dB.
    public init() {}

    /// Off the audio thread: allocates the per-frame gain buffer; the gate starts closed.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        gains.allocate(maxFrames, fill: 0)
        reset()
    }

    private var thresholdGain = DecibelGain(), floorGain = DecibelGain()
    private var attackCoefficient = OnePoleCoefficient(), releaseCoefficient = OnePoleCoefficient()

    /// Audio thread: opens or closes per frame, one gain for all channels.
    public func process(_ context: inout RenderContext) {
        let p = parameters
        // The library calls only when a setting moved.
        let threshold = thresholdGain.of(p.value(0))
        let attack = Float(attackCoefficient.of(p.value(1), sampleRate: sampleRate))
        let holdFrames = Int(frames(milliseconds: p.value(2), sampleRate: sampleRate))
        let release = Float(releaseCoefficient.of(p.value(3), sampleRate: sampleRate))
        let floor = floorGain.of(p.value(4))
        let n = min(context.frameCount, gains.count)
        let channels = context.output.count
        guard let g = gains.pointer else { return }
        var level = gain, hold = holdRemaining
        for i in 0..<n {
            var peak: Float = 0
            for c in 0..<channels { peak = max(peak, abs(context.input[c][i])) }
            if peak >= threshold { hold = holdFrames } else if hold > 0 { hold -= 1 }
            let target: Float = (peak >= threshold || hold > 0) ? 1 : floor
            let coefficient = target > level ? attack : release
            level = target + (level - target) * coefficient
            g[i] = level
        }
        gain = level
        holdRemaining = hold
        for c in 0..<channels {
            let input = context.input[c], output = context.output[c]
            for i in 0..<n { output[i] = input[i] * g[i] }
        }
    }

    /// Audio thread: closes the gate.
    public func reset() {
        gain = gainOf(decibels: parameters.value(4))
        holdRemaining = 0
    }

    /// Off the audio thread.
    public func release() { gains.free() }
}
