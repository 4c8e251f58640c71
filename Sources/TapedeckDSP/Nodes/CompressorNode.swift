import Foundation

/// Compressor: feed-forward, soft knee, stereo-linked, after Giannoulis, Massberg & Reiss,
/// "Digital Dynamic Range Compressor Design — A Tutorial and Analysis" (JAES 2012): a static
/// gain computer in dB followed by a smooth branching peak detector on the gain reduction.
public final class CompressorNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `comp`.
    public static let descriptor = NodeDescriptor(
        name: "comp", displayName: "Compressor", kind: .effect, subtype: "comp", tags: ["Dynamics"],
        summary: "Reduces level above the threshold by the ratio (soft knee, linked channels).",
        parameters: [
            ParameterDefinition(id: "threshold", name: "Threshold", unit: .decibels, minimum: -60, maximum: 0, defaultValue: -18),
            ParameterDefinition(id: "ratio", name: "Ratio", unit: .ratio, minimum: 1, maximum: 20, defaultValue: 4),
            ParameterDefinition(id: "attack", name: "Attack", unit: .milliseconds, minimum: 0.05, maximum: 200, defaultValue: 10, decimals: 2),
            ParameterDefinition(id: "release", name: "Release", unit: .milliseconds, minimum: 5, maximum: 2000, defaultValue: 100, decimals: 0),
            ParameterDefinition(id: "knee", name: "Knee width", unit: .decibels, minimum: 0, maximum: 24, defaultValue: 6),
            ParameterDefinition(id: "makeup", name: "Makeup gain", unit: .decibels, minimum: 0, maximum: 24, defaultValue: 0),
        ])

    /// The live parameters.
    public let parameters = NodeParameters(CompressorNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var reductionDecibels = 0.0
    private var gains = UnsafeStorage<Float>()
    /// Per frame of a block: the gain reduction the static curve asks for, then the
    /// detector's output (dB).
    private var levels = UnsafeStorage<Double>()
    private var makeup = LinearRamp(1)

    /// Creates a compressor at -18 dB, 4:1.
    public init() {}

    /// The static curve: output level in dB for a steady input level `x` (no makeup).
    public static func staticCurve(inputDecibels x: Double, thresholdDecibels t: Double, ratio r: Double, kneeDecibels w: Double) -> Double {
        let over = x - t
        if 2 * over < -w { return x }
        if w > 0 && 2 * abs(over) <= w {
            let d = over + w / 2
            return x + (1 / r - 1) * d * d / (2 * w)
        }
        return t + over / r
    }

    /// Off the audio thread: allocates the per-frame gain buffer.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        gains.allocate(maxFrames, fill: 1)
        levels.allocate(maxFrames, fill: 0)
        makeup.jump(to: gainOf(decibels: parameters.value(5)))
        reductionDecibels = 0
    }

    /// Audio thread: computes one gain per frame from the loudest channel, applies it to all.
    public func process(_ context: inout RenderContext) {
        let p = parameters
        let t = p.value(0), r = p.value(1), w = p.value(4)
        let attack = onePoleCoefficient(milliseconds: p.value(2), sampleRate: sampleRate)
        let release = onePoleCoefficient(milliseconds: p.value(3), sampleRate: sampleRate)
        makeup.setTarget(gainOf(decibels: p.value(5)), frames: Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate)))
        let n = min(context.frameCount, gains.count)
        let channels = context.output.count
        guard let g = gains.pointer, let level = levels.pointer else { return }
        // Below the knee's foot nothing happens, so most quiet frames skip the logarithm.
        let kneeFoot = Float(pow(10, (t - w / 2) / 20))
        // Three passes, the same arithmetic as one: only the detector depends on the frame
        // before, so the curve and the gains run free of its chain (twice as fast measured).
        for i in 0..<n {
            var peak: Float = 0
            for c in 0..<channels { peak = max(peak, abs(context.input[c][i])) }
            var xL = 0.0
            if peak > kneeFoot {
                let x = Double(decibelsPerOctave * fastLog2(peak))
                xL = x - Self.staticCurve(inputDecibels: x, thresholdDecibels: t, ratio: r, kneeDecibels: w)
            }
            level[i] = xL
        }
        var yL = reductionDecibels
        for i in 0..<n {
            let xL = level[i]
            let coefficient = xL > yL ? attack : release
            yL = coefficient * yL + (1 - coefficient) * xL
            level[i] = yL
        }
        for i in 0..<n {
            let y = level[i]
            g[i] = y < 1e-6 ? 1 : fastExp2(Float(-y) / decibelsPerOctave)
        }
        reductionDecibels = yL < 1e-9 ? 0 : yL
        var channelMakeup = makeup
        for c in 0..<channels {
            channelMakeup = makeup
            let input = context.input[c], output = context.output[c]
            if channelMakeup.isSteady {
                let m = channelMakeup.current
                for i in 0..<n { output[i] = input[i] * g[i] * m }
            } else {
                for i in 0..<n { output[i] = input[i] * g[i] * channelMakeup.next() }
            }
        }
        makeup = channelMakeup
    }

    /// The gain reduction in dB right now (for meters). Any thread; may be a block stale.
    public var currentReductionDecibels: Double { reductionDecibels }

    /// Audio thread: forgets the detector state.
    public func reset() { reductionDecibels = 0; makeup.jump(to: makeup.target) }

    /// Off the audio thread.
    public func release() {
        gains.free()
        levels.free()
    }
}
