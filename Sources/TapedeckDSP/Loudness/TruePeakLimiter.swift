import Foundation

/// The gain of a look-ahead true-peak limiter, computed offline from a signal's 32×
/// oversampled peaks (``OversampledPeak``): a gain that is 1 wherever the signal stays under
/// `threshold`, and around a frame that would pass it falls to `threshold / peak` along a
/// straight ramp as long as the look-ahead (no click, nothing before the peak is late), then
/// comes back with an exponential release. The gain at a frame is at most what every frame
/// within the look-ahead on either side needs, so the points between two samples, which
/// depend on the samples around them, are held too (within the margin the caller leaves).
///
/// Feed peaks (``add(_:emit:)``), take gains: the gains lag the peaks by the look-ahead.
/// Offline only: it allocates as it goes.
public final class TruePeakLimiter {
    /// The magnitude no oversampled point may pass.
    public let threshold: Float
    /// Frames of look-ahead (and of the attack ramp).
    public let lookAhead: Int
    private let releaseStep: Float
    /// Required gains (`threshold / peak`, at most 1) of the frames not yet emitted, and the
    /// look-ahead before them; `required[0]` is frame `first − lookAhead`.
    private var required: [Float]
    private var first = 0
    private var lastPeak: Float = 0
    private var gain: Float = 1
    /// The lowest gain given.
    public private(set) var lowestGain: Float = 1
    /// How many frames were turned down by more than 0.1 dB (the release's tail, within
    /// a hair of 1 for a second or more, is not counted).
    public private(set) var limitedFrames = 0

    /// A limiter at `sampleRate`: `lookAheadSeconds` of attack, `releaseSeconds` of release.
    public init(threshold: Float, sampleRate: Int, lookAheadSeconds: Double = 0.002, releaseSeconds: Double = 0.1) {
        self.threshold = threshold
        lookAhead = max(1, Int((lookAheadSeconds * Double(sampleRate)).rounded()))
        releaseStep = Float(1 - exp(-1 / (releaseSeconds * Double(sampleRate))))
        required = [Float](repeating: 1, count: lookAhead)
    }

    /// Feeds the next frames' peaks; `emit` gets the gains of the frames now decided.
    public func add(_ peaks: [Float], emit: ([Float]) throws -> Void) rethrows {
        for p in peaks {
            // A point between frames f−1 and f is read from both: each answers for it.
            let worst = max(p, lastPeak)
            lastPeak = p
            required.append(worst > threshold ? threshold / worst : 1)
        }
        try drain(emit)
    }

    /// Ends the signal and emits the last gains.
    public func finish(emit: ([Float]) throws -> Void) rethrows {
        required.append(contentsOf: [Float](repeating: 1, count: lookAhead))
        try drain(emit)
    }

    /// 0…7, for eight frames' distances at once.
    private static let lanes = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)

    private func drain(_ emit: ([Float]) throws -> Void) rethrows {
        let window = 2 * lookAhead
        let ready = required.count - window   // frames with their whole window held
        guard ready > 0 else { return }
        var gains = [Float](repeating: 1, count: ready)
        let span = Float(lookAhead)
        let inverseSpan = 1 / span
        required.withUnsafeBufferPointer { r in
            // The last frame in reach that needs turning down: where none is, the window's
            // scan is skipped (most of a normalised mix is under the ceiling).
            var lastBelow = -1
            for k in 0..<min(window, r.count) where r[k] < 1 { lastBelow = k }
            for i in 0..<ready {
                if r[i + window] < 1 { lastBelow = i + window }
                // Frame i + lookAhead in `required`: the lowest ramp through it of any frame in reach.
                var attack: Float = 1
                if lastBelow >= i {
                    // Eight frames a step, no branch: a frame needing nothing (r = 1) gives 1.
                    // Under a hard limit every frame scans its window: this was a third of
                    // a −8 LUFS normalisation.
                    let centre = Float(i + lookAhead)
                    let raw = UnsafeRawPointer(r.baseAddress!)
                    // Worked on the bits (generic SIMD comparisons and minimums are not inlined
                    // here): the values are never negative, and non-negative floats order as
                    // their patterns do; the sign bit cleared is the absolute value.
                    var lowest = SIMD8<Int32>(repeating: Int32(bitPattern: Float(1).bitPattern))
                    var k = i
                    while k + 8 <= i + window + 1 {
                        let rk = raw.loadUnaligned(fromByteOffset: k * 4, as: SIMD8<Float>.self)
                        let signed = TruePeakLimiter.lanes + (Float(k) - centre)
                        let distance = unsafeBitCast(unsafeBitCast(signed, to: SIMD8<Int32>.self) & 0x7FFF_FFFF, to: SIMD8<Float>.self)
                        let value = unsafeBitCast(rk + (1 - rk) * distance * inverseSpan, to: SIMD8<Int32>.self)
                        let difference = value &- lowest
                        lowest &+= difference & (difference &>> 31)
                        k += 8
                    }
                    var top = lowest[0]
                    for l in 1..<8 where lowest[l] < top { top = lowest[l] }
                    attack = Float(bitPattern: UInt32(bitPattern: top))
                    while k <= i + window {
                        attack = min(attack, r[k] + (1 - r[k]) * Float(abs(k - i - lookAhead)) / span)
                        k += 1
                    }
                }
                gain = min(attack, gain + (1 - gain) * releaseStep)
                // The release only nears 1; within a millionth (−0.00001 dB) it is there.
                if gain > 0.999999 { gain = 1 }
                gains[i] = gain
                lowestGain = min(lowestGain, gain)
                if gain < 0.98855 { limitedFrames += 1 }
            }
        }
        required.removeFirst(ready)
        first += ready
        try emit(gains)
    }
}
