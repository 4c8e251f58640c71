import Foundation

/// Tone generator: sine, square or saw at a frequency and level, added to every channel.
/// Square and saw use PolyBLEP corrections so their edges alias far less than naive ones.
public final class ToneNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `tone`.
    public static let descriptor = NodeDescriptor(
        name: "tone", displayName: "Tone generator", kind: .generator, subtype: "tone", tags: ["Generator", "Test"],
        summary: "A sine, square or saw test tone (band-limited edges), added to the signal.",
        parameters: [
            ParameterDefinition(id: "frequency", name: "Frequency", unit: .hertz, minimum: 1, maximum: 20_000, defaultValue: 440, decimals: 1),
            .choice(id: "wave", name: "Waveform", choices: ["sine", "square", "saw"]),
            ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -96, maximum: 0, defaultValue: -12),
        ])

    /// The live parameters.
    public let parameters = NodeParameters(ToneNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var phase = 0.0
    private var level = LinearRamp(0)
    private var scratch = UnsafeStorage<Float>()
    private var rampFrames = 960

    /// Creates a 440 Hz sine at -12 dBFS.
    public init() {}

    /// Off the audio thread: allocates one block of scratch.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        scratch.allocate(maxFrames, fill: 0)
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate))
        level.jump(to: gainOf(decibels: parameters.value(2)))
        phase = 0
    }

    /// PolyBLEP residual at phase `t` (turns) for an increment `dt`.
    @inline(__always) static func blep(_ t: Double, _ dt: Double) -> Double {
        if t < dt { let x = t / dt; return x + x - x * x - 1 }
        if t > 1 - dt { let x = (t - 1) / dt; return x * x + x + x + 1 }
        return 0
    }

    /// Audio thread: renders the wave once, adds it to every channel.
    public func process(_ context: inout RenderContext) {
        let n = min(context.frameCount, scratch.count)
        guard let s = scratch.pointer else { return }
        let dt = min(parameters.value(0) / sampleRate, 0.5)
        let wave = Int(parameters.value(1))
        level.setTarget(gainOf(decibels: parameters.value(2)), frames: rampFrames)
        var t = phase
        switch wave {
        case 1:
            for i in 0..<n {
                var v = t < 0.5 ? 1.0 : -1.0
                v += Self.blep(t, dt) - Self.blep(wrapTurns(t + 0.5), dt)
                s[i] = Float(v) * level.next()
                t = wrapTurns(t + dt)
            }
        case 2:
            for i in 0..<n {
                s[i] = Float(2 * t - 1 - Self.blep(t, dt)) * level.next()
                t = wrapTurns(t + dt)
            }
        default:
            for i in 0..<n {
                s[i] = Float(sin(2 * Double.pi * t)) * level.next()
                t = wrapTurns(t + dt)
            }
        }
        phase = t
        for c in 0..<context.output.count {
            let input = context.input[c], output = context.output[c]
            for i in 0..<n { output[i] = input[i] + s[i] }
        }
    }

    /// Audio thread: restarts the wave at phase 0.
    public func reset() { phase = 0 }

    /// Off the audio thread.
    public func release() { scratch.free() }
}
