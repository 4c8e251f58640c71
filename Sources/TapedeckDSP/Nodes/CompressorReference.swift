/// The compressor's gain computer and detector as they were written in Swift, kept as the
/// reference the C kernel (`td_comp_gains`, CCompKernel.h) is held to, bit for bit, by
/// CompressorKernelTests. Not on the node's path.
extension CompressorNode {
    /// The gain reduction (dB, ≥ 0) the static curve asks for at eight peaks: the knee's
    /// parabola on the part of the excess `over` that lies in the knee, plus `over × slope`
    /// on the part above it — 0 below the knee, the tutorial's curve in it and above it
    /// (written without branches; Float).
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    static func reduction(peak: SIMD8<Float>, threshold t: Float, knee w: Float, slope: Float,
                                  kneeScale: Float) -> SIMD8<Float> {
        let x = decibelsPerOctave * fastLog2(peak)
        let over = x - t
        let width = SIMD8<Float>(repeating: w)
        let inKnee = positivePart8(over + w / 2)
        let d = pick(inKnee, width, whereNegative: width - inKnee)
        return d * d * kneeScale + slope * positivePart8(over - w / 2)
    }

    /// The linear gain per frame into `g` (n frames) from the loudest of `channels` inputs,
    /// the detector starting from `y`; returns the detector's state after the last frame.
    /// Three passes, the same arithmetic as one: only the detector depends on the frame
    /// before, so the static curve and the gains run eight frames at a time (in Float).
    /// Against the textbook curve in Double the reduction differs by Float rounding (about
    /// 1e-5 dB). Audio thread: arithmetic only.
    static func referenceGains(inputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, channels: Int, frameCount n: Int,
                               into g: UnsafeMutablePointer<Float>, from y: Float, threshold tF: Float, knee wF: Float,
                               slope: Float, kneeScale: Float, attack: DetectorStep, release: DetectorStep) -> Float {
        // Pass 1: the reduction the curve asks for, from the loudest channel.
        var i = 0
        while i < n {
            let lanes = min(8, n - i)
            var peak = SIMD8<Float>()
            for c in 0..<channels {
                let input = inputs[c] + i
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
        var y = y
        i = 0
        while i + 8 <= n {
            let x = UnsafeRawPointer(g + i).loadUnaligned(as: SIMD8<Float>.self)
            let rising = x[0] > y
            let out = (rising ? attack : release).apply(x, from: y)
            if DetectorStep.holds(x, out, from: y, rising: rising) {
                UnsafeMutableRawPointer(g + i).storeBytes(of: out, as: SIMD8<Float>.self)
                y = out[7]
            } else {
                for k in i..<(i + 8) { y = detect(g[k], y, attack, release) ; g[k] = y }
            }
            i += 8
        }
        while i < n {
            y = detect(g[i], y, attack, release)
            g[i] = y
            i += 1
        }
        // Pass 3: the reduction as a linear gain.
        i = 0
        while i + 8 <= n {
            let r = UnsafeRawPointer(g + i).loadUnaligned(as: SIMD8<Float>.self)
            let gain = pick(fastExp2(-r / decibelsPerOctave), SIMD8(repeating: 1), whereNegative: r - 1e-6)
            UnsafeMutableRawPointer(g + i).storeBytes(of: gain, as: SIMD8<Float>.self)
            i += 8
        }
        while i < n {
            let r = g[i]
            g[i] = r < 1e-6 ? 1 : fastExp2(-r / decibelsPerOctave)
            i += 1
        }
        return y
    }

    /// One frame of the detector: towards `x` at the attack's pace when it rises above the
    /// state `y`, at the release's otherwise. Audio thread: arithmetic.
    @inline(__always)
    static func detect(_ x: Float, _ y: Float, _ attack: DetectorStep, _ release: DetectorStep) -> Float {
        x > y ? attack.c * y + attack.rest * x : release.c * y + release.rest * x
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
