/// The inner loops of mixing, written with Swift's `SIMD8<Float>` (eight samples a step, the
/// tail one by one) and kept free of closures and existentials, so they run as vector code
/// however the optimiser feels about the scalar loop.
public enum MixKernels {
    @inline(__always)
    private static func load(_ p: UnsafePointer<Float>, _ i: Int) -> SIMD8<Float> {
        UnsafeRawPointer(p + i).loadUnaligned(as: SIMD8<Float>.self)
    }

    @inline(__always)
    private static func store(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>, _ i: Int) {
        UnsafeMutableRawPointer(p + i).storeBytes(of: v, as: SIMD8<Float>.self)
    }

    /// The lane offsets 0…7, for gain ramps.
    private static let laneIndex = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)

    /// Adds `source × gain` into `destination`, the gain moving linearly from `startGain` to
    /// `endGain` across the block so a gain change never clicks.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func accumulate(_ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>,
                                  frameCount: Int, startGain: Float, endGain: Float) {
        var i = 0
        if startGain == endGain {
            if startGain == 0 { return }
            let g = SIMD8<Float>(repeating: startGain)
            while i + 8 <= frameCount {
                store(load(destination, i) + load(source, i) * g, destination, i)
                i += 8
            }
            while i < frameCount { destination[i] += source[i] * startGain; i += 1 }
            return
        }
        let step = (endGain - startGain) / Float(max(frameCount, 1))
        while i + 8 <= frameCount {
            let g = SIMD8<Float>(repeating: startGain) + (SIMD8<Float>(repeating: Float(i)) + laneIndex) * step
            store(load(destination, i) + load(source, i) * g, destination, i)
            i += 8
        }
        while i < frameCount { destination[i] += source[i] * (startGain + step * Float(i)); i += 1 }
    }

    /// Multiplies `buffer` by `gain` in place.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func scale(_ buffer: UnsafeMutablePointer<Float>, frameCount: Int, gain: Float) {
        if gain == 1 { return }
        var i = 0
        let g = SIMD8<Float>(repeating: gain)
        while i + 8 <= frameCount {
            store(load(buffer, i) * g, buffer, i)
            i += 8
        }
        while i < frameCount { buffer[i] *= gain; i += 1 }
    }

    /// Multiplies `buffer` in place by a gain gliding from `from` to `to` across the block
    /// (frame i gets `from + (to − from) × (i + 1) / frameCount`, reaching `to` on the last).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func ramp(_ buffer: UnsafeMutablePointer<Float>, frameCount: Int, from: Float, to: Float) {
        if from == to {
            scale(buffer, frameCount: frameCount, gain: to)
            return
        }
        let step = (to - from) / Float(max(frameCount, 1))
        var i = 0
        while i + 8 <= frameCount {
            let g = SIMD8<Float>(repeating: from) + (SIMD8<Float>(repeating: Float(i + 1)) + laneIndex) * step
            store(load(buffer, i) * g, buffer, i)
            i += 8
        }
        while i < frameCount { buffer[i] *= from + step * Float(i + 1); i += 1 }
    }

    /// Largest absolute sample in `buffer` (0 for an empty one; NaN samples are passed over).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func peak(_ buffer: UnsafePointer<Float>, frameCount: Int) -> Float {
        var lanes = SIMD8<Float>()
        var i = 0
        while i + 8 <= frameCount {
            let v = load(buffer, i)
            // A comparison with NaN is false, so NaN lanes never raise the peak.
            lanes.replace(with: v, where: v .> lanes)
            lanes.replace(with: -v, where: -v .> lanes)
            i += 8
        }
        var m = lanes.max()
        while i < frameCount {
            let a = abs(buffer[i])
            if a > m { m = a }
            i += 1
        }
        return m
    }

    /// Sum of squares of `buffer`, for RMS meters (eight partial sums, added at the end).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func sumOfSquares(_ buffer: UnsafePointer<Float>, frameCount: Int) -> Double {
        var lanes = SIMD8<Float>()
        var i = 0
        while i + 8 <= frameCount {
            let v = load(buffer, i)
            lanes += v * v
            i += 8
        }
        var s = lanes.sum()
        while i < frameCount { s += buffer[i] * buffer[i]; i += 1 }
        return Double(s)
    }
}
