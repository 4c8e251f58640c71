/// Pan/balance: moves a stereo image left or right.
///
/// On a stereo (or wider) signal it is a balance control on the first channel pair: the side
/// turned away from is attenuated, the other stays at unity, so centre is exactly unity. A mono
/// signal has nowhere to go and passes unchanged (the mixer's pan law places mono tracks).
public final class PanNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `pan`.
    public static let descriptor = NodeDescriptor(
        name: "pan", displayName: "Pan / balance", kind: .effect, subtype: "pan ", tags: ["Utility", "Stereo"],
        summary: "Balances a stereo signal between left (-1) and right (+1).",
        parameters: [
            ParameterDefinition(id: "position", name: "Position", unit: .pan, minimum: -1, maximum: 1,
                                defaultValue: 0, decimals: 2),
        ])

    /// The live parameters (`position`, -1…+1).
    public let parameters = NodeParameters(PanNode.descriptor.parameters)
    private var left = LinearRamp(1)
    private var right = LinearRamp(1)
    private var rampFrames = 960

    /// Creates a centred node.
    public init() {}

    /// Off the audio thread: remembers the ramp length.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: format.sampleRate))
        let g = Self.gains(parameters.value(0))
        left.jump(to: g.left)
        right.jump(to: g.right)
    }

    /// Linear balance: the far side falls to silence at the extreme, the near side stays at 1.
    static func gains(_ position: Double) -> (left: Float, right: Float) {
        (Float(min(1, 1 - position)), Float(min(1, 1 + position)))
    }

    /// Audio thread: applies the balance to channels 0 and 1, copies the rest.
    public func process(_ context: inout RenderContext) {
        let n = context.frameCount
        let g = Self.gains(parameters.value(0))
        left.setTarget(g.left, frames: rampFrames)
        right.setTarget(g.right, frames: rampFrames)
        if context.output.count >= 2 {
            applyGain(context.input[0], context.output[0], count: n, ramp: &left)
            applyGain(context.input[1], context.output[1], count: n, ramp: &right)
        }
        let first = context.output.count >= 2 ? 2 : 0
        for c in first..<context.output.count where UnsafePointer(context.output[c]) != UnsafePointer(context.input[c]) {
            context.output[c].update(from: context.input[c], count: n)
        }
    }

    /// Audio thread: lands on the targets.
    public func reset() { left.jump(to: left.target); right.jump(to: right.target) }

    /// Nothing to free.
    public func release() {}
}
