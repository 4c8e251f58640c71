import Foundation

/// The true peak of a signal at 32× oversampling, frame by frame: for each frame `f` the
/// highest magnitude of the band-limited signal on the 32 points `f, f + 1/32, …, f + 31/32`,
/// over all channels. BS.1770's true-peak meter (and libebur128's) oversamples 4×, which
/// can read a tone near a quarter of the sample rate 0.2 dB or more under its real peak; a
/// ceiling kept at 4× is not kept at 32×.
///
/// A windowed-sinc interpolator (Kaiser, 128 taps, 32 fixed phases), not libsamplerate:
/// `SRC_SINC_BEST_QUALITY` upsampling by 32 ran at 5 s per second of stereo audio here (a
/// one-hour episode would take five hours, and normalising measures it more than once),
/// because it recomputes its filter per output sample for any ratio; a fixed ratio needs
/// only this table. Its passband reaches 0.47 of the sample rate (22.5 kHz at 48 kHz).
///
/// Frames whose 128 neighbours cannot interpolate above ``threshold`` (their largest sample
/// times the filter's worst-case gain is no higher) are not interpolated: they report their
/// sample peak, a lower bound. Everything above the threshold is exact, and that is all the
/// limiter and a maximum need. Offline only: it allocates as it goes.
public final class OversampledPeak {
    /// The oversampling factor.
    public static let factor = 32
    /// Taps on each side of the interpolated point.
    static let halfTaps = 64
    /// `coefficients[p * 2H + j]`: the weight of sample `f − H + 1 + j` at point `f + p/32`.
    static let coefficients: [Float] = {
        let h = halfTaps, beta = 10.0
        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0, k = 1.0
            while term > 1e-12 * sum { term *= (x / (2 * k)) * (x / (2 * k)); sum += term; k += 1 }
            return sum
        }
        var c = [Float](repeating: 0, count: factor * 2 * h)
        for p in 0..<factor {
            for j in 0..<(2 * h) {
                let t = Double(p) / Double(factor) - Double(j - h + 1)  // distance from the tap
                let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
                let r = t / Double(h)
                let window = abs(r) >= 1 ? 0 : besselI0(beta * (1 - r * r).squareRoot()) / besselI0(beta)
                c[p * 2 * h + j] = Float(sinc * window)
            }
        }
        return c
    }()
    /// The most any point can exceed the largest of its taps: the worst phase's Σ|c|.
    static let worstGain: Float = (0..<factor).map { p in
        (0..<(2 * halfTaps)).reduce(Float(0)) { $0 + abs(coefficients[p * 2 * halfTaps + $1]) }
    }.max() ?? 1

    /// Points that cannot pass this magnitude need not be interpolated (see the type).
    public var threshold: Float
    /// The highest magnitude found so far (exact where it is above ``threshold``).
    public private(set) var maximum: Float = 0
    private let channelCount: Int
    /// Per channel: the input not yet done with; `buffers[c][i]` is frame `start + i − H`, and
    /// frame `start + i` reads taps `i + 1 … i + 2H`.
    private var buffers: [[Float]]
    private var start = 0
    private var finished = false

    /// A detector for `channelCount` channels; see ``threshold``.
    public init(channelCount: Int, threshold: Float = 0) {
        self.channelCount = channelCount
        self.threshold = threshold
        // Before the first frame the signal is silence.
        buffers = Array(repeating: [Float](repeating: 0, count: OversampledPeak.halfTaps), count: channelCount)
    }

    /// Feeds `frameCount` frames; `emit` gets the peaks of the frames now known (they lag
    /// the input by 64 frames), in order.
    public func add(_ channels: [UnsafePointer<Float>], frameCount: Int, emit: ([Float]) throws -> Void) rethrows {
        for c in 0..<channelCount { buffers[c].append(contentsOf: UnsafeBufferPointer(start: channels[c], count: frameCount)) }
        try drain(emit)
    }

    /// Ends the signal (silence after it) and emits the last frames' peaks.
    public func finish(emit: ([Float]) throws -> Void) rethrows {
        guard !finished else { return }
        finished = true
        for c in 0..<channelCount { buffers[c].append(contentsOf: [Float](repeating: 0, count: OversampledPeak.halfTaps)) }
        try drain(emit)
    }

    /// Interpolates every frame whose 2H taps are all in hand, then drops what no frame needs.
    private func drain(_ emit: ([Float]) throws -> Void) rethrows {
        let h = OversampledPeak.halfTaps, taps = 2 * h
        let held = buffers.first?.count ?? 0
        let ready = held - taps   // frames whose taps (i + 1 … i + 2H) are all held
        guard ready > 0 else { return }
        var peaks = [Float](repeating: 0, count: ready)
        OversampledPeak.coefficients.withUnsafeBufferPointer { coeff in
            for c in 0..<channelCount {
                buffers[c].withUnsafeBufferPointer { x in
                    var i = 0
                    while i < ready {
                        // Blocks of 64 frames: one bound over all the taps they read.
                        let n = min(64, ready - i)
                        var bound: Float = 0
                        for j in (i + 1)...(i + n + taps - 1) { bound = max(bound, abs(x[j])) }
                        if bound * OversampledPeak.worstGain <= threshold {
                            for f in i..<(i + n) { peaks[f] = max(peaks[f], abs(x[f + h]), abs(x[f + h + 1])) }
                        } else {
                            for f in i..<(i + n) {
                                var m = abs(x[f + h])   // phase 0 is the sample itself
                                let base = UnsafeRawPointer(x.baseAddress! + f + 1)
                                for p in 1..<OversampledPeak.factor {
                                    // Eight taps a step: a float sum is not vectorised for us
                                    // (its order would change), and this loop was nearly all
                                    // of a loud normalisation's time.
                                    let row = UnsafeRawPointer(coeff.baseAddress! + p * taps)
                                    var acc = SIMD8<Float>()
                                    var j = 0
                                    while j < taps {
                                        acc += row.loadUnaligned(fromByteOffset: j * 4, as: SIMD8<Float>.self)
                                            * base.loadUnaligned(fromByteOffset: j * 4, as: SIMD8<Float>.self)
                                        j += 8
                                    }
                                    m = max(m, abs(acc.sum()))
                                }
                                peaks[f] = max(peaks[f], m)
                            }
                        }
                        i += n
                    }
                }
                buffers[c].removeFirst(ready)
            }
        }
        start += ready
        if let top = peaks.max() { maximum = max(maximum, top) }
        try emit(peaks)
    }
}
