import Foundation

/// Saturation: a tanh waveshaper. Small signals gain `drive`; loud ones round off smoothly
/// towards ±1, so the shaped signal never exceeds full scale before the output gain.
public final class SaturationNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `saturate`.
    public static let descriptor = NodeDescriptor(
        name: "saturate", displayName: "Saturation", kind: .effect, subtype: "satu", tags: ["Distortion"],
        summary: "Soft tanh clipping with drive, wet mix and output level.",
        parameters: [
            ParameterDefinition(id: "drive", name: "Drive", unit: .decibels, minimum: 0, maximum: 36, defaultValue: 6),
            ParameterDefinition(id: "mix", name: "Wet mix", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 1, decimals: 2),
            ParameterDefinition(id: "output", name: "Output level", unit: .decibels, minimum: -24, maximum: 12, defaultValue: 0),
        ])

    /// The live parameters.
    public let parameters = NodeParameters(SaturationNode.descriptor.parameters)
    private var drive = LinearRamp(1), mix = LinearRamp(1), output = LinearRamp(1)
    private var rampFrames = 960

    /// Creates a mild saturator.
    public init() {}

    /// Off the audio thread.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: format.sampleRate))
        drive.jump(to: gainOf(decibels: parameters.value(0)))
        mix.jump(to: Float(parameters.value(1)))
        output.jump(to: gainOf(decibels: parameters.value(2)))
    }

    /// `pow` only when a level moved.
    private var driveGain = DecibelGain(), outputGain = DecibelGain()

    /// Audio thread: shapes every channel.
    public func process(_ context: inout RenderContext) {
        drive.setTarget(driveGain.of(parameters.value(0)), frames: rampFrames)
        mix.setTarget(Float(parameters.value(1)), frames: rampFrames)
        output.setTarget(outputGain.of(parameters.value(2)), frames: rampFrames)
        var g = drive, m = mix, o = output
        for c in 0..<context.output.count {
            g = drive; m = mix; o = output
            let input = context.input[c], out = context.output[c]
            for i in 0..<context.frameCount {
                let x = input[i]
                let w = m.next()
                out[i] = (x * (1 - w) + tanhf(x * g.next()) * w) * o.next()
            }
        }
        drive = g; mix = m; output = o
    }

    /// Audio thread: lands on the targets.
    public func reset() {
        drive.jump(to: drive.target); mix.jump(to: mix.target); output.jump(to: output.target)
    }

    /// Nothing to free.
    public func release() {}
}
