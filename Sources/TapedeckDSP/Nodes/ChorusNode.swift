/// Chorus: each channel read from a delay line whose time a sine LFO sweeps; channels' LFOs
/// run a quarter turn apart so a stereo chorus widens.
public final class ChorusNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `chorus`.
    public static let descriptor = NodeDescriptor(
        name: "chorus", displayName: "Chorus", kind: .effect, subtype: "chor", tags: ["Modulation"],
        summary: "Thickens with a delay swept by a slow sine (rate, depth, delay, mix).",
        parameters: [
            ParameterDefinition(id: "rate", name: "Rate", unit: .hertz, minimum: 0.05, maximum: 10, defaultValue: 0.8, decimals: 2),
            ParameterDefinition(id: "depth", name: "Depth", unit: .milliseconds, minimum: 0, maximum: 10, defaultValue: 3, decimals: 2),
            ParameterDefinition(id: "delay", name: "Centre delay", unit: .milliseconds, minimum: 5, maximum: 30, defaultValue: 12, decimals: 1),
            ParameterDefinition(id: "mix", name: "Wet mix", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 0.5, decimals: 2),
        ])

    /// The live parameters.
    public let parameters = NodeParameters(ChorusNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var channelCount = 0
    private var lines = UnsafeStorage<Float>()
    private var mask = 0
    private var writeIndex = 0
    private var phase = 0.0
    private var centre = LinearRamp(0), depth = LinearRamp(0), mix = LinearRamp(0)
    private var rampFrames = 960

    /// Creates a gentle chorus.
    public init() {}

    /// Off the audio thread: allocates a delay ring per channel for the longest sweep.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        channelCount = format.channelCount
        let needed = Int(frames(milliseconds: 42, sampleRate: sampleRate)) + 4
        var size = 1
        while size < needed { size <<= 1 }
        lines.allocate(size * channelCount, fill: 0)
        mask = size - 1
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate))
        centre.jump(to: Float(frames(milliseconds: parameters.value(2), sampleRate: sampleRate)))
        depth.jump(to: Float(frames(milliseconds: parameters.value(1), sampleRate: sampleRate)))
        mix.jump(to: Float(parameters.value(3)))
        reset()
    }

    /// Audio thread: sweeps, reads between frames, mixes.
    public func process(_ context: inout RenderContext) {
        let increment = Float(parameters.value(0) / sampleRate)
        centre.setTarget(Float(frames(milliseconds: parameters.value(2), sampleRate: sampleRate)), frames: rampFrames)
        depth.setTarget(Float(frames(milliseconds: parameters.value(1), sampleRate: sampleRate)), frames: rampFrames)
        mix.setTarget(Float(parameters.value(3)), frames: rampFrames)
        let size = mask + 1
        guard let base = lines.pointer else { return }
        var ce = centre, de = depth, wet = mix
        for c in 0..<min(channelCount, context.output.count) {
            ce = centre; de = depth; wet = mix
            let line = base + c * size, input = context.input[c], output = context.output[c]
            var w = writeIndex
            var t = Float(phase) + Float(c) * 0.25
            for i in 0..<context.frameCount {
                let x = input[i]
                line[w] = x
                let delay = ce.next() + de.next() * fastSine(turns: t)
                t += increment
                let whole = Int(delay)
                let fraction = delay - Float(whole)
                let a = line[(w - whole) & mask], b = line[(w - whole - 1) & mask]
                let m = wet.next()
                output[i] = x * (1 - m) + (a + (b - a) * fraction) * m
                w = (w + 1) & mask
            }
        }
        centre = ce; depth = de; mix = wet
        writeIndex = (writeIndex + context.frameCount) & mask
        phase = wrapTurns(phase + Double(context.frameCount) * Double(increment))
    }

    /// Audio thread: silences the lines and restarts the LFO.
    public func reset() { lines.fill(0); writeIndex = 0; phase = 0 }

    /// Off the audio thread.
    public func release() { lines.free() }
}
