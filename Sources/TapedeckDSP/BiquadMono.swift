/// The mono biquad two frames a step: the filter of ``BiquadCoefficients/process(_:_:count:z1:z2:)``
/// with the recurrence waiting once per two frames.
extension BiquadCoefficients {
    /// Audio thread: filters `count` frames of one channel, in place or not; `state` holds
    /// (z1, z2) of the transposed form, as ``process(_:_:count:z1:z2:)`` keeps them.
    ///
    /// Why: in the transposed form each output waits on the one before through a multiply and
    /// a subtract (≈ 7 cycles a frame), and a mono high-pass was that long whatever else the
    /// core had free. As ``process2(_:_:_:_:count:state:)`` does for two channels, the first two
    /// frames run in the transposed form (they give the last two inputs and outputs), then
    /// direct form I two frames a step: y[n] and y[n+1] both follow from y[n−1] and y[n−2]
    /// (y[n+1] through a1² − a2 and a1·a2, worked out once), so the chain is one multiply and
    /// one add per two frames; y[n]'s and y[n+1]'s sums run side by side in one register's
    /// lanes. The same filter: sums grouped differently round differently in Double
    /// (≈ 1e-16 relative), which a Float output seldom shows (FilterTests compare it with the
    /// transposed form). The state is handed back in the transposed form, so glides and the
    /// EQ's cascade continue from it.
    @inline(__always)
    func processPairs(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int,
                      state: UnsafeMutablePointer<Double>) {
        guard count > 2 else {
            process(input, output, count: count, z1: &state[0], z2: &state[1])
            return
        }
        typealias V = SIMD2<Double>
        // The first two frames in the transposed form; the inputs are kept (in place, the
        // outputs overwrite them).
        var u = state[0], s2 = state[1]
        let x0 = Double(input[0]), x1 = Double(input[1])
        let y0 = b0 * x0 + u
        u = b1 * x0 + s2
        s2 = b2 * x0 - a2 * y0
        let y1 = (b0 * x1 + u) - a1 * y0
        output[0] = Float(y0)
        output[1] = Float(y1)
        // Lanes: (frame n, frame n + 1). xPair holds the inputs before this step, (x[n−2], x[n−1]).
        var xPair = V(x0, x1)
        var yPrevious = y1, yOlder = y0
        // y[n]   = f[n] − a1·y[n−1] − a2·y[n−2]
        // y[n+1] = (f[n+1] − a1·f[n]) + (a1² − a2)·y[n−1] + a1·a2·y[n−2]
        let p = V(-a1, a1 * a1 - a2), q = V(-a2, a1 * a2)
        let h1 = -a1
        var i = 2
        while i + 2 <= count {
            let xs = UnsafeRawPointer(input + i).loadUnaligned(as: SIMD2<Float>.self)
            let xa = Double(xs[0]), xb = Double(xs[1])
            // f for both frames: b0·x + b1·x(−1) + b2·x(−2), lane by lane.
            let now = V(xa, xb), one = V(xPair[1], xa), two = V(xPair[0], xPair[1])
            let f: V = (b0 * now + b1 * one) + b2 * two
            let g = V(f[0], f[1] + h1 * f[0])
            let y: V = (g + q * yOlder) + p * yPrevious
            UnsafeMutableRawPointer(output + i).storeBytes(of: SIMD2<Float>(y), as: SIMD2<Float>.self)
            xPair = now
            yOlder = y[0]
            yPrevious = y[1]
            i += 2
        }
        if i < count {
            let x = Double(input[i])
            let f = (b0 * x + b1 * xPair[1]) + b2 * xPair[0]
            let y = (f - a2 * yOlder) - a1 * yPrevious
            output[i] = Float(y)
            xPair = V(xPair[1], x)
            yOlder = yPrevious
            yPrevious = y
        }
        // Back to the transposed form's state after the last frame.
        let s1 = ((b1 * xPair[1] - a1 * yPrevious) + b2 * xPair[0]) - a2 * yOlder
        let last2 = b2 * xPair[1] - a2 * yPrevious
        state[0] = abs(s1) < 1e-20 ? 0 : s1
        state[1] = abs(last2) < 1e-20 ? 0 : last2
    }
}
