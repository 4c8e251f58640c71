import TapedeckEngine

/// Conversions between ALSA's interleaved device samples and the engine's non-interleaved
/// 32-bit float. Integer scaling matches `AudioFileWriter` (divide by 2^(bits−1) in, multiply
/// and round out), so a captured integer sample written at the same depth is bit-identical.
enum SampleConversion {
    /// Device bytes → float channels.
    ///
    /// Audio thread: no allocation, no locks.
    static func toFloat(_ raw: UnsafeRawPointer, format: DeviceSampleFormat, channelCount: Int,
                        frameCount: Int, into channels: UnsafePointer<UnsafeMutablePointer<Float>>,
                        frameOffset: Int) {
        let c = channelCount
        switch format {
        case .float32:
            let p = raw.assumingMemoryBound(to: Float.self)
            for ch in 0..<c { let out = channels[ch] + frameOffset; for i in 0..<frameCount { out[i] = p[i * c + ch] } }
        case .s32:
            let p = raw.assumingMemoryBound(to: Int32.self)
            let k: Float = 1.0 / 2147483648.0
            for ch in 0..<c { let out = channels[ch] + frameOffset; for i in 0..<frameCount { out[i] = Float(Int32(littleEndian: p[i * c + ch])) * k } }
        case .s24:
            let p = raw.assumingMemoryBound(to: Int32.self)
            let k: Float = 1.0 / 8388608.0
            for ch in 0..<c {
                let out = channels[ch] + frameOffset
                for i in 0..<frameCount { out[i] = Float((Int32(littleEndian: p[i * c + ch]) << 8) >> 8) * k }
            }
        case .s24Packed:
            let p = raw.assumingMemoryBound(to: UInt8.self)
            let k: Float = 1.0 / 8388608.0
            for ch in 0..<c {
                let out = channels[ch] + frameOffset
                for i in 0..<frameCount {
                    let b = p + (i * c + ch) * 3
                    let u = Int32(b[0]) | Int32(b[1]) << 8 | Int32(b[2]) << 16
                    out[i] = Float((u << 8) >> 8) * k
                }
            }
        case .s16:
            let p = raw.assumingMemoryBound(to: Int16.self)
            let k: Float = 1.0 / 32768.0
            for ch in 0..<c { let out = channels[ch] + frameOffset; for i in 0..<frameCount { out[i] = Float(Int16(littleEndian: p[i * c + ch])) * k } }
        }
    }

    /// Float channels → device bytes, rounded and clipped.
    ///
    /// Audio thread: no allocation, no locks.
    static func fromFloat(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameOffset: Int,
                          format: DeviceSampleFormat, channelCount: Int, frameCount: Int,
                          into raw: UnsafeMutableRawPointer) {
        let c = channelCount
        switch format {
        case .float32:
            let p = raw.assumingMemoryBound(to: Float.self)
            for ch in 0..<c { let src = channels[ch] + frameOffset; for i in 0..<frameCount { p[i * c + ch] = src[i] } }
        case .s32:
            let p = raw.assumingMemoryBound(to: Int32.self)
            for ch in 0..<c { let src = channels[ch] + frameOffset; for i in 0..<frameCount { p[i * c + ch] = Int32(clamped(src[i], bits: 32)).littleEndian } }
        case .s24:
            let p = raw.assumingMemoryBound(to: Int32.self)
            for ch in 0..<c { let src = channels[ch] + frameOffset; for i in 0..<frameCount { p[i * c + ch] = Int32(clamped(src[i], bits: 24)).littleEndian } }
        case .s24Packed:
            let p = raw.assumingMemoryBound(to: UInt8.self)
            for ch in 0..<c {
                let src = channels[ch] + frameOffset
                for i in 0..<frameCount {
                    let v = UInt32(bitPattern: Int32(clamped(src[i], bits: 24)))
                    let b = p + (i * c + ch) * 3
                    b[0] = UInt8(truncatingIfNeeded: v); b[1] = UInt8(truncatingIfNeeded: v >> 8); b[2] = UInt8(truncatingIfNeeded: v >> 16)
                }
            }
        case .s16:
            let p = raw.assumingMemoryBound(to: Int16.self)
            for ch in 0..<c { let src = channels[ch] + frameOffset; for i in 0..<frameCount { p[i * c + ch] = Int16(clamped(src[i], bits: 16)).littleEndian } }
        }
    }

    /// `sample × 2^(bits−1)`, rounded, clipped to the integer range, NaN as 0.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func clamped(_ sample: Float, bits: Int) -> Int64 {
        let scale = Double(Int64(1) << (bits - 1))
        let v = (Double(sample) * scale).rounded()
        if v.isNaN { return 0 }
        if v >= scale { return Int64(scale) - 1 }
        if v < -scale { return -Int64(scale) }
        return Int64(v)
    }
}
