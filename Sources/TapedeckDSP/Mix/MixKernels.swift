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

    /// Writes `source × gain` to `destination` (what ``accumulate(_:into:frameCount:startGain:endGain:)``
    /// adds to a silent buffer, bit for bit, without clearing it first).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func copy(_ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>,
                            frameCount: Int, gain: Float) {
        if gain == 0 {
            destination.update(repeating: 0, count: frameCount)
            return
        }
        let g = SIMD8<Float>(repeating: gain)
        var i = 0
        while i + 8 <= frameCount {
            store(load(source, i) * g, destination, i)
            i += 8
        }
        while i < frameCount { destination[i] = source[i] * gain; i += 1 }
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

    /// Multiplies `buffer` in place by `start + step × i` at frame `i`: a straight piece of
    /// automation, whose step per frame is worked out once with the piece (``ramp(_:frameCount:from:to:)``
    /// divides for it again at every call). Compiled into the caller.
    ///
    /// Audio thread: no allocation, no locks.
    @inlinable @inline(__always)
    public static func ramp(_ buffer: UnsafeMutablePointer<Float>, frameCount: Int, start: Float, step: Float) {
        let lanes = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        var g = SIMD8<Float>(repeating: start) + lanes * step
        let stride = SIMD8<Float>(repeating: 8 * step)
        var i = 0
        while i + 8 <= frameCount {
            let p = UnsafeMutableRawPointer(buffer + i)
            p.storeBytes(of: p.loadUnaligned(as: SIMD8<Float>.self) * g, as: SIMD8<Float>.self)
            g += stride
            i += 8
        }
        while i < frameCount { buffer[i] *= start + step * Float(i); i += 1 }
    }

    /// Adds `source × (start + step × i)` at frame `i` into `destination` (see
    /// ``ramp(_:frameCount:start:step:)``). Compiled into the caller.
    ///
    /// Audio thread: no allocation, no locks.
    @inlinable @inline(__always)
    public static func accumulate(_ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>,
                                  frameCount: Int, start: Float, step: Float) {
        let lanes = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        var g = SIMD8<Float>(repeating: start) + lanes * step
        let stride = SIMD8<Float>(repeating: 8 * step)
        var i = 0
        while i + 8 <= frameCount {
            let d = UnsafeMutableRawPointer(destination + i)
            let x = UnsafeRawPointer(source + i).loadUnaligned(as: SIMD8<Float>.self)
            d.storeBytes(of: d.loadUnaligned(as: SIMD8<Float>.self) + x * g, as: SIMD8<Float>.self)
            g += stride
            i += 8
        }
        while i < frameCount { destination[i] += source[i] * (start + step * Float(i)); i += 1 }
    }

    /// Largest absolute sample in `buffer` (0 for an empty one; NaN samples are passed over).
    ///
    /// Worked on the samples' bits: with the sign cleared, finite floats and infinity order
    /// as their bit patterns do, and NaNs lie above infinity's (they are zeroed). Swift's SIMD
    /// float comparisons compile to a loop over the lanes through memory here, which made
    /// every meter's peak the slowest pass of a track (measured); integer subtracts and
    /// shifts stay in vector registers.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    public static func peak(_ buffer: UnsafePointer<Float>, frameCount: Int) -> Float {
        let infinityBits: Int32 = 0x7F80_0000
        var lanes = SIMD8<Int32>()
        var i = 0
        while i + 8 <= frameCount {
            var bits = unsafeBitCast(load(buffer, i), to: SIMD8<Int32>.self) & 0x7FFF_FFFF
            bits &= ~((infinityBits &- bits) &>> 31)
            // max(lanes, bits): both lie in 0…infinity, so the difference cannot overflow.
            let difference = lanes &- bits
            lanes &-= difference & (difference &>> 31)
            i += 8
        }
        var m: Int32 = 0
        for k in 0..<8 where lanes[k] > m { m = lanes[k] }
        var result = Float(bitPattern: UInt32(m))
        while i < frameCount {
            let a = abs(buffer[i])
            if a > result { result = a }
            i += 1
        }
        return result
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
