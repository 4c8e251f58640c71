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

    private func drain(_ emit: ([Float]) throws -> Void) rethrows {
        let window = 2 * lookAhead
        let ready = required.count - window   // frames with their whole window held
        guard ready > 0 else { return }
        var gains = [Float](repeating: 1, count: ready)
        let span = Float(lookAhead)
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
                    for k in i...(i + window) where r[k] < 1 {
                        let distance = Float(abs(k - i - lookAhead))
                        attack = min(attack, r[k] + (1 - r[k]) * distance / span)
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
