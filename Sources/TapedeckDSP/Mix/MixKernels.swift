/// The inner loops of mixing, kept free of closures and existentials so they vectorise.
public enum MixKernels {
    /// Adds `source × gain` into `destination`, the gain moving linearly from `startGain` to
    /// `endGain` across the block so a gain change never clicks.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func accumulate(_ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>,
                                  frameCount: Int, startGain: Float, endGain: Float) {
        if startGain == endGain {
            if startGain == 1 {
                for i in 0..<frameCount { destination[i] += source[i] }
            } else if startGain != 0 {
                for i in 0..<frameCount { destination[i] += source[i] * startGain }
            }
            return
        }
        let step = (endGain - startGain) / Float(max(frameCount, 1))
        for i in 0..<frameCount { destination[i] += source[i] * (startGain + step * Float(i)) }
    }

    /// Multiplies `buffer` by `gain` in place.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func scale(_ buffer: UnsafeMutablePointer<Float>, frameCount: Int, gain: Float) {
        if gain == 1 { return }
        for i in 0..<frameCount { buffer[i] *= gain }
    }

    /// Largest absolute sample in `buffer` (0 for an empty one).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func peak(_ buffer: UnsafePointer<Float>, frameCount: Int) -> Float {
        var m: Float = 0
        for i in 0..<frameCount { m = max(m, abs(buffer[i])) }
        return m
    }

    /// Sum of squares of `buffer`, for RMS meters.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func sumOfSquares(_ buffer: UnsafePointer<Float>, frameCount: Int) -> Double {
        var s: Float = 0
        for i in 0..<frameCount { s += buffer[i] * buffer[i] }
        return Double(s)
    }
}
