/// Conversions between decibels and linear gain.
public enum Decibels {
    /// Linear amplitude factor of `decibels` (−∞ dB, or anything below −200, is 0).
    @inline(__always)
    public static func toLinear(_ decibels: Double) -> Double {
        decibels <= -200 ? 0 : pow10(decibels / 20)
    }

    /// Decibels of a linear amplitude; 0 gives −∞.
    @inline(__always)
    public static func fromLinear(_ linear: Double) -> Double {
        linear <= 0 ? -Double.infinity : 20 * log10(linear)
    }

    /// `dBFS` text with one decimal, `-inf` for silence.
    public static func text(_ decibels: Double) -> String {
        guard decibels.isFinite else { return decibels > 0 ? "+inf" : "-inf" }
        // Past a million dB no value means anything; print it whole instead of trapping on Int.
        guard abs(decibels) < 1e6 else { return "\(decibels)" }
        let tenths = (decibels * 10).rounded()
        let sign = tenths < 0 ? "-" : ""
        let a = abs(Int(tenths))
        return "\(sign)\(a / 10).\(a % 10)"
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) private func pow10(_ x: Double) -> Double { Glibc.pow(10, x) }
#else
import Foundation
@inline(__always) private func pow10(_ x: Double) -> Double { pow(10, x) }
#endif
