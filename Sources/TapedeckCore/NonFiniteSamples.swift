/// Keeps NaN and infinite samples out of audio: one such sample, fed into a filter or a
/// reverb, makes its state NaN and every later frame of the mix NaN with it.
public enum NonFiniteSamples {
    /// Replaces every NaN and ±infinity among `count` samples at `samples` with 0 (silence)
    /// and returns how many there were.
    ///
    /// Audio thread: no allocation, no locks. The common case (all finite) costs one
    /// multiply-add per sample, eight lanes at a time: `x * 0` is 0 for every finite `x` and
    /// NaN for NaN and ±inf, so one sum says whether a second, per-sample pass is needed at all.
    @inline(__always)
    public static func replace(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
        // Two sums, sixteen samples a step: one sum's adds wait on each other, two overlap.
        var lanes = SIMD8<Float>(), more = SIMD8<Float>()
        var i = 0
        let raw = UnsafeRawPointer(samples)
        while i + 16 <= count {
            lanes += raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) * 0
            more += raw.loadUnaligned(fromByteOffset: i * 4 + 32, as: SIMD8<Float>.self) * 0
            i += 16
        }
        while i + 8 <= count {
            lanes += raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) * 0
            i += 8
        }
        var probe = (lanes + more).sum()
        while i < count { probe += samples[i] * 0; i += 1 }
        if probe == 0 { return 0 }
        var replaced = 0
        i = 0
        while i < count {
            if !samples[i].isFinite {
                samples[i] = 0
                replaced += 1
            }
            i += 1
        }
        return replaced
    }
}
