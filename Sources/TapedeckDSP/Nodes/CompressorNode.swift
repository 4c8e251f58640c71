import CMixKernels
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
        cached = CachedSettings()
        makeup.jump(to: gainOf(decibels: parameters.value(5)))
        reductionDecibels = 0
    }

    /// What the block's settings cost to turn into coefficients (an `exp` or `pow` each),
    /// worked out again only when a setting moves: at 32-frame periods they were a fifth
    /// of the node's time.
    private struct CachedSettings {
        var attackMilliseconds = Double.nan, releaseMilliseconds = Double.nan, makeupDecibels = Double.nan
        var attack = 0.0, release = 0.0
        var makeupGain: Float = 1
    }
    private var cached = CachedSettings()

    /// The attack and release as eight-frame steps (`td_detector_step`, as ``DetectorStep``),
    /// remade with them.
    /// [0] the attack's, [1] the release's; allocated once (the audio thread passes them to C
    /// without taking an inout access to a stored property).
    private let steps: UnsafeMutablePointer<td_detector_step> = {
        let p = UnsafeMutablePointer<td_detector_step>.allocate(capacity: 2)
        p.initialize(repeating: td_detector_step(), count: 2)
        td_detector_step_init(p, 0)
        td_detector_step_init(p + 1, 0)
        return p
    }()

    deinit { steps.deallocate() }

    /// Audio thread: arithmetic only.
    @inline(__always)
    private func updateCache(attackMilliseconds a: Double, releaseMilliseconds r: Double, makeupDecibels m: Double) {
        if a != cached.attackMilliseconds {
            cached.attackMilliseconds = a
            cached.attack = onePoleCoefficient(milliseconds: a, sampleRate: sampleRate)
            td_detector_step_init(steps, Float(cached.attack))
        }
        if r != cached.releaseMilliseconds {
            cached.releaseMilliseconds = r
            cached.release = onePoleCoefficient(milliseconds: r, sampleRate: sampleRate)
            td_detector_step_init(steps + 1, Float(cached.release))
        }
        if m != cached.makeupDecibels {
            cached.makeupDecibels = m
            cached.makeupGain = gainOf(decibels: m)
        }
    }

    /// Audio thread: computes one gain per frame from the loudest channel, applies it to all.
    ///
    /// The static curve, the detector and the gains run in C (`td_comp_gains`), eight frames
    /// at a time in Float where the detector's branch holds, then the makeup here. Against the
    /// textbook curve in Double the reduction differs by Float rounding (about 1e-5 dB).
    public func process(_ context: inout RenderContext) {
        let p = parameters
        let t = p.value(0), r = p.value(1), w = p.value(4)
        updateCache(attackMilliseconds: p.value(2), releaseMilliseconds: p.value(3), makeupDecibels: p.value(5))
        makeup.setTarget(cached.makeupGain, frames: Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate)))
        let n = min(context.frameCount, gains.count)
        let channels = context.output.count
        guard let g = gains.pointer, channels > 0 else { return }
        let slope = Float(1 - 1 / r), kneeScale = w > 0 ? Float((1 - 1 / r) / (2 * w)) : 0
        let tF = Float(t), wF = Float(w)
        // The static curve, the detector and the gains, in C (CCompKernel.h says why); the
        // same arithmetic as ``referenceGains`` (CompressorReference.swift), bit for bit.
        let inputs = UnsafeRawPointer(context.input.baseAddress).map { $0.assumingMemoryBound(to: UnsafePointer<Float>?.self) }
        let y = td_comp_gains(inputs, Int32(channels), n, g, Float(reductionDecibels), tF, wF, slope, kneeScale, steps, steps + 1)
        reductionDecibels = y < 1e-9 ? 0 : Double(y)
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
    }
}
