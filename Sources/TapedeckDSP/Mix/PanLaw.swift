import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// How a track's pan becomes left and right gains on the stereo master bus.
///
/// - A mono track uses the constant-power sine/cosine law: −3 dB in each side at centre,
///   full level in one side and silence in the other at the extremes. Loudness stays
///   constant as a source moves across the field.
/// - A stereo track uses balance: at centre both sides pass at unity (so a stereo file at
///   unity exports bit-identical), turning right fades the left side linearly to silence at
///   +1, and vice versa.
/// - A track with more than two channels feeds its first two as a stereo pair.
public enum PanLaw {
    /// Left and right gains for a mono source at `pan` (−1…+1).
    @inline(__always)
    public static func mono(pan: Double) -> (left: Double, right: Double) {
        let p = min(max(pan, -1), 1)
        let theta = (p + 1) * Double.pi / 4
        return (cos(theta), sin(theta))
    }

    /// Left and right gains for a stereo source at balance `pan` (−1…+1).
    @inline(__always)
    public static func stereo(pan: Double) -> (left: Double, right: Double) {
        let p = min(max(pan, -1), 1)
        return (p > 0 ? 1 - p : 1, p < 0 ? 1 + p : 1)
    }

    /// Gains for a source of `channelCount` channels at `pan`.
    @inline(__always)
    public static func gains(channelCount: Int, pan: Double) -> (left: Double, right: Double) {
        channelCount == 1 ? mono(pan: pan) : stereo(pan: pan)
    }
}
