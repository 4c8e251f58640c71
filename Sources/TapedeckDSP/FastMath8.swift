/// Eight-lane versions of ``fastLog2(_:)`` and ``fastExp2(_:)``: the same operations in the
/// same order on every lane (so each lane gives the scalar function's result), for loops
/// that need one per frame (the compressor's level detector and gain).
///
/// Why bits instead of comparisons and conversions: in this toolchain the standard library's
/// SIMD float comparisons (`.<`, `.<=`) and float↔integer conversions compile to a loop over
/// the lanes through memory — slower than the scalar code (measured in the compressor). So
/// choices are made from sign bits (``pick(_:_:whereNegative:)``) and small integers move
/// between the two through the bits of 2^23 + k, which is exact.

/// 2^23: a float at or above it has no fraction bits, and 2^23 + k (0 ≤ k < 2^23) holds k in
/// its mantissa.
private let twoTo23: Float = 8_388_608

/// Audio thread: `b` in the lanes where `sign` is negative (its sign bit set), `a` elsewhere.
@inline(__always) func pick(_ a: SIMD8<Float>, _ b: SIMD8<Float>, whereNegative sign: SIMD8<Float>) -> SIMD8<Float> {
    let mask = unsafeBitCast(sign, to: SIMD8<Int32>.self) &>> 31
    let bitsA = unsafeBitCast(a, to: SIMD8<Int32>.self), bitsB = unsafeBitCast(b, to: SIMD8<Int32>.self)
    return unsafeBitCast((bitsA & ~mask) | (bitsB & mask), to: SIMD8<Float>.self)
}

/// Audio thread: log2 of eight positive floats (see ``fastLog2(_:)``).
@inline(__always) func fastLog2(_ x: SIMD8<Float>) -> SIMD8<Float> {
    let bits = unsafeBitCast(x, to: SIMD8<Int32>.self)
    let exponentField = unsafeBitCast(((bits &>> 23) & 0xFF) | 0x4B00_0000, to: SIMD8<Float>.self) - twoTo23
    let mantissa = bits & 0x007F_FFFF
    // All ones where the mantissa lies above √2 (1.41421356 is 0x3FB504F3): those are halved
    // (one off the exponent field, exact) and count one more in the exponent.
    let folded = (0x0035_04F3 &- mantissa) &>> 31
    let m = unsafeBitCast((mantissa | 0x3F80_0000) &- (folded & 0x0080_0000), to: SIMD8<Float>.self)
    let e = (exponentField - 127) + unsafeBitCast(folded & 0x3F80_0000, to: SIMD8<Float>.self)
    let s = (m - 1) / (m + 1), s2 = s * s
    let third: Float = 1.0 / 3, seventh: Float = 1.0 / 7
    var series: SIMD8<Float> = s2 * seventh
    series = s2 * (series + 0.2)
    series = s2 * (series + third)
    let ln: SIMD8<Float> = 2 * s * (series + 1)
    let scale: Float = 1.44269504
    return e + ln * scale
}

/// Audio thread: 2^x on eight lanes (see ``fastExp2(_:)``).
@inline(__always) func fastExp2(_ x: SIMD8<Float>) -> SIMD8<Float> {
    let low = SIMD8<Float>(repeating: -126), high = SIMD8<Float>(repeating: 127)
    let clamped = pick(pick(x, low, whereNegative: x - low), high, whereNegative: high - x)
    // Round to a whole number (adding and taking away 1.5 × 2^23), then step down where that
    // went up: floor, exactly.
    let magic: Float = 12_582_912
    let rounded = (clamped + magic) - magic
    let xi = pick(rounded, rounded - 1, whereNegative: clamped - rounded)
    let f = clamped - xi
    // The scalar polynomial, Horner's rule from the inside out.
    let c5: Float = 0.0013333, c4: Float = 0.0096181, c3: Float = 0.0555041, c2: Float = 0.2402265, c1: Float = 0.6931472
    var p: SIMD8<Float> = f * c5
    p = f * (p + c4)
    p = f * (p + c3)
    p = f * (p + c2)
    p = f * (p + c1)
    p = p + 1
    // xi + 127 is a whole number in 1…254: its bits above 2^23 are the exponent field.
    let field = unsafeBitCast((xi + 127) + twoTo23, to: SIMD8<Int32>.self) & 0x007F_FFFF
    return p * unsafeBitCast(field &<< 23, to: SIMD8<Float>.self)
}

/// Audio thread: |x| on eight lanes (the sign bit cleared).
@inline(__always) func magnitude8(_ x: SIMD8<Float>) -> SIMD8<Float> {
    unsafeBitCast(unsafeBitCast(x, to: SIMD8<Int32>.self) & 0x7FFF_FFFF, to: SIMD8<Float>.self)
}

/// Audio thread: max(x, 0) on eight lanes (negative lanes, −0 included, become +0).
@inline(__always) func positivePart8(_ x: SIMD8<Float>) -> SIMD8<Float> {
    let bits = unsafeBitCast(x, to: SIMD8<Int32>.self)
    return unsafeBitCast(bits & ~(bits &>> 31), to: SIMD8<Float>.self)
}
