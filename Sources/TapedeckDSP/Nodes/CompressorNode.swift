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

    /// Audio thread: arithmetic only.
    @inline(__always)
    private func updateCache(attackMilliseconds a: Double, releaseMilliseconds r: Double, makeupDecibels m: Double) {
        if a != cached.attackMilliseconds {
            cached.attackMilliseconds = a
            cached.attack = onePoleCoefficient(milliseconds: a, sampleRate: sampleRate)
        }
        if r != cached.releaseMilliseconds {
            cached.releaseMilliseconds = r
            cached.release = onePoleCoefficient(milliseconds: r, sampleRate: sampleRate)
        }
        if m != cached.makeupDecibels {
            cached.makeupDecibels = m
            cached.makeupGain = gainOf(decibels: m)
        }
    }

    /// The gain reduction (dB, ≥ 0) the static curve asks for at eight peaks: the knee's
    /// parabola on the part of the excess `over` that lies in the knee, plus `over × slope`
    /// on the part above it — 0 below the knee, the tutorial's curve in it and above it
    /// (written without branches; Float).
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    private static func reduction(peak: SIMD8<Float>, threshold t: Float, knee w: Float, slope: Float,
                                  kneeScale: Float) -> SIMD8<Float> {
        let x = decibelsPerOctave * fastLog2(peak)
        let over = x - t
        let width = SIMD8<Float>(repeating: w)
        let inKnee = positivePart8(over + w / 2)
        let d = pick(inKnee, width, whereNegative: width - inKnee)
        return d * d * kneeScale + slope * positivePart8(over - w / 2)
    }

    /// Audio thread: computes one gain per frame from the loudest channel, applies it to all.
    ///
    /// Three passes, the same arithmetic as one: only the detector depends on the frame
    /// before, so the static curve and the gains run eight frames at a time (in Float; the
    /// detector keeps its state in Double). Against the textbook curve in Double the
    /// reduction differs by Float rounding (about 1e-5 dB).
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
        // Pass 1: the reduction the curve asks for, from the loudest channel.
        var i = 0
        while i < n {
            let lanes = min(8, n - i)
            var peak = SIMD8<Float>()
            for c in 0..<channels {
                let input = context.input[c] + i
                var v = SIMD8<Float>()
                if lanes == 8 {
                    v = UnsafeRawPointer(input).loadUnaligned(as: SIMD8<Float>.self)
                } else {
                    for k in 0..<lanes { v[k] = input[k] }
                }
                let m = magnitude8(v)
                peak = c == 0 ? m : pick(peak, m, whereNegative: peak - m)
            }
            let reduction = Self.reduction(peak: peak, threshold: tF, knee: wF, slope: slope, kneeScale: kneeScale)
            if lanes == 8 {
                UnsafeMutableRawPointer(g + i).storeBytes(of: reduction, as: SIMD8<Float>.self)
            } else {
                for k in 0..<lanes { g[i + k] = reduction[k] }
            }
            i += lanes
        }
        // Pass 2: the smooth branching peak detector, frame after frame.
        // Both branches' next value are worked out and one is kept: the choice then runs
        // beside the multiply instead of before it, on the one chain that waits frame after
        // frame (the same arithmetic, so the same values).
        let attack = cached.attack, release = cached.release
        let attackRest = 1 - attack, releaseRest = 1 - release
        var yL = reductionDecibels
        for i in 0..<n {
            let xL = Double(g[i])
            let rising = attack * yL + attackRest * xL
            let falling = release * yL + releaseRest * xL
            yL = xL > yL ? rising : falling
            g[i] = Float(yL)
        }
        reductionDecibels = yL < 1e-9 ? 0 : yL
        // Pass 3: the reduction as a linear gain.
        i = 0
        while i + 8 <= n {
            let y = UnsafeRawPointer(g + i).loadUnaligned(as: SIMD8<Float>.self)
            let gain = pick(fastExp2(-y / decibelsPerOctave), SIMD8(repeating: 1), whereNegative: y - 1e-6)
            UnsafeMutableRawPointer(g + i).storeBytes(of: gain, as: SIMD8<Float>.self)
            i += 8
        }
        while i < n {
            let y = g[i]
            g[i] = y < 1e-6 ? 1 : fastExp2(-y / decibelsPerOctave)
            i += 1
        }
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
