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

    /// The attack and release as eight-frame steps (``DetectorStep``), remade with them.
    private var attackStep = DetectorStep(coefficient: 0)
    private var releaseStep = DetectorStep(coefficient: 0)

    /// Audio thread: arithmetic only.
    @inline(__always)
    private func updateCache(attackMilliseconds a: Double, releaseMilliseconds r: Double, makeupDecibels m: Double) {
        if a != cached.attackMilliseconds {
            cached.attackMilliseconds = a
            cached.attack = onePoleCoefficient(milliseconds: a, sampleRate: sampleRate)
            attackStep = DetectorStep(coefficient: Float(cached.attack))
        }
        if r != cached.releaseMilliseconds {
            cached.releaseMilliseconds = r
            cached.release = onePoleCoefficient(milliseconds: r, sampleRate: sampleRate)
            releaseStep = DetectorStep(coefficient: Float(cached.release))
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
        // Pass 2: the smooth branching peak detector. Its recurrence waits on the frame before
        // (it was 30 % of a 1,024-track period, frame after frame in Double); eight frames at
        // a time while the branch holds (DetectorStep), frame by frame where it turns.
        var y = Float(reductionDecibels)
        i = 0
        while i + 8 <= n {
            let x = UnsafeRawPointer(g + i).loadUnaligned(as: SIMD8<Float>.self)
            let rising = x[0] > y
            let out = (rising ? attackStep : releaseStep).apply(x, from: y)
            if DetectorStep.holds(x, out, from: y, rising: rising) {
                UnsafeMutableRawPointer(g + i).storeBytes(of: out, as: SIMD8<Float>.self)
                y = out[7]
            } else {
                for k in i..<(i + 8) { y = detect(g[k], y) ; g[k] = y }
            }
            i += 8
        }
        while i < n {
            y = detect(g[i], y)
            g[i] = y
            i += 1
        }
        reductionDecibels = y < 1e-9 ? 0 : Double(y)
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

    /// One frame of the detector: towards `x` at the attack's pace when it rises above the
    /// state `y`, at the release's otherwise. Audio thread: arithmetic.
    @inline(__always)
    private func detect(_ x: Float, _ y: Float) -> Float {
        x > y ? attackStep.c * y + attackStep.rest * x : releaseStep.c * y + releaseStep.rest * x
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

/// Eight frames of a one-pole smoother `y ← c·y + (1 − c)·x` at once: the recurrence
/// unrolled, each output a sum over the frames before it (`y_j = c^j·y + Σ (1 − c)·c^(j−m)·x_m`),
/// so nothing waits on the frame before. The compressor's detector takes it where its branch
/// (attack while the input rises above the state, release otherwise) holds for all eight.
struct DetectorStep {
    let c: Float
    let rest: Float
    /// Lane j: c^(j+1).
    private let powers: SIMD8<Float>
    /// Column m, lane j: (1 − c)·c^(j−m) for j ≥ m, else 0.
    private let columns: (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>,
                          SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)

    /// Audio thread, when a coefficient changes: arithmetic only.
    init(coefficient: Float) {
        c = coefficient
        rest = 1 - coefficient
        var p = SIMD8<Float>()
        var k: Float = 1
        for j in 0..<8 {
            k *= coefficient
            p[j] = k
        }
        powers = p
        func column(_ m: Int) -> SIMD8<Float> {
            var v = SIMD8<Float>()
            var k: Float = 1 - coefficient
            for j in m..<8 {
                v[j] = k
                k *= coefficient
            }
            return v
        }
        columns = (column(0), column(1), column(2), column(3), column(4), column(5), column(6), column(7))
    }

    /// The eight outputs from state `y` over inputs `x`. Audio thread: arithmetic.
    @inline(__always)
    func apply(_ x: SIMD8<Float>, from y: Float) -> SIMD8<Float> {
        var out = powers * y
        out += columns.0 * x[0]
        out += columns.1 * x[1]
        out += columns.2 * x[2]
        out += columns.3 * x[3]
        out += columns.4 * x[4]
        out += columns.5 * x[5]
        out += columns.6 * x[6]
        out += columns.7 * x[7]
        return out
    }

    /// Whether each frame took the branch `rising` says: its input above the state before it
    /// (the previous output) exactly when rising. Audio thread: arithmetic.
    @inline(__always)
    static func holds(_ x: SIMD8<Float>, _ out: SIMD8<Float>, from y: Float, rising: Bool) -> Bool {
        let before = SIMD8<Float>(y, out[0], out[1], out[2], out[3], out[4], out[5], out[6])
        let above = x .> before
        return rising ? all(above) : !any(above)
    }
}
