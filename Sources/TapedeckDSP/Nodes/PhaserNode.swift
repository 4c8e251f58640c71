import Foundation

/// Phaser: four first-order allpass stages whose corner an LFO sweeps from 200 Hz up to
/// 200 Hz × 16^depth, with feedback; mixed with the dry signal the phase shifts become moving
/// notches. Coefficients are recomputed every 16 frames.
public final class PhaserNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `phaser`.
    public static let descriptor = NodeDescriptor(
        name: "phaser", displayName: "Phaser", kind: .effect, subtype: "phas", tags: ["Modulation"],
        summary: "Four-stage swept allpass phaser (rate, depth, feedback, mix).",
        parameters: [
            ParameterDefinition(id: "rate", name: "Rate", unit: .hertz, minimum: 0.02, maximum: 5, defaultValue: 0.5, decimals: 2),
            ParameterDefinition(id: "depth", name: "Depth", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 0.7, decimals: 2),
            ParameterDefinition(id: "feedback", name: "Feedback", unit: .fraction, minimum: 0, maximum: 0.9, defaultValue: 0.5, decimals: 2),
            ParameterDefinition(id: "mix", name: "Wet mix", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 0.5, decimals: 2),
        ])

    static let stages = 4
    static let chunkFrames = 16
    static let lowestHertz = 200.0

    /// The live parameters.
    public let parameters = NodeParameters(PhaserNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var channelCount = 0
    private var state = UnsafeStorage<Float>()     // per channel: 4 stage memories + last output
    private var phase = 0.0
    private var mix = LinearRamp(0)
    private var rampFrames = 960

    /// Creates a phaser.
    public init() {}

    /// Off the audio thread: allocates stage memory per channel.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        channelCount = format.channelCount
        state.allocate((Self.stages + 1) * channelCount, fill: 0)
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate))
        mix.jump(to: Float(parameters.value(3)))
    }

    /// Audio thread: sweeps the allpass chain in 16-frame chunks.
    public func process(_ context: inout RenderContext) {
        let rate = parameters.value(0), depth = parameters.value(1)
        let fb = Float(parameters.value(2))
        mix.setTarget(Float(parameters.value(3)), frames: rampFrames)
        let channels = min(channelCount, context.output.count)
        guard let s = state.pointer else { return }
        var start = 0
        var wet = mix
        while start < context.frameCount {
            let count = min(Self.chunkFrames, context.frameCount - start)
            let lfo = 0.5 - 0.5 * cos(2 * Double.pi * phase)
            let f = Self.lowestHertz * pow(16, depth * lfo)
            let t = tan(Double.pi * min(f, sampleRate * 0.45) / sampleRate)
            let a = Float((t - 1) / (t + 1))
            for c in 0..<channels {
                wet = mix
                let input = context.input[c] + start, output = context.output[c] + start
                let m = s + c * (Self.stages + 1)
                for i in 0..<count {
                    let x = input[i]
                    var v = x + fb * m[Self.stages]
                    for k in 0..<Self.stages {
                        let y = a * v + m[k]
                        m[k] = v - a * y
                        v = y
                    }
                    m[Self.stages] = v
                    let w = wet.next()
                    output[i] = x * (1 - w) + v * w
                }
            }
            mix = wet
            phase = wrapTurns(phase + Double(count) * rate / sampleRate)
            start += count
        }
        for k in 0..<state.count where abs(s[k]) < 1e-20 { s[k] = 0 }
    }

    /// Audio thread: clears stage memory and restarts the sweep.
    public func reset() { state.fill(0); phase = 0 }

    /// Off the audio thread.
    public func release() { state.free() }
}
