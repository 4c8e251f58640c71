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

/// The constant-power law from a table, for automation that moves the pan every 32 frames on
/// the audio thread: cos and sin cost a tenth of automation's time at 256 tracks. Linear
/// between 4096 steps of the quarter turn, within 2e-8 of ``PanLaw/mono(pan:)`` (below a
/// Float's resolution at unity).
public enum PanTable {
    /// Steps of the quarter turn (``mono(pan:table:)`` spells it out, to be compiled into its callers).
    static let steps = 4096
    /// cos over [0, π/2] at `steps` + 1 points (sin is the table read backwards).
    nonisolated(unsafe) private static let table: UnsafeMutablePointer<Float> = {
        let t = UnsafeMutablePointer<Float>.allocate(capacity: steps + 2)
        for i in 0...steps { t[i] = Float(cos(Double(i) * Double.pi / 2 / Double(steps))) }
        t[steps] = 0  // cos(π/2) is 6e-17 in Double: hard over is silence, exactly
        t[steps + 1] = 0
        return t
    }()

    /// Builds the table (allocates once): call on the control thread before the audio thread
    /// reads it.
    public static func prepare() { _ = table }

    /// The table, for a reader that keeps it (see ``mono(pan:table:)``). Control thread,
    /// after ``prepare()``.
    public static var storage: UnsafePointer<Float> { UnsafePointer(table) }

    /// Left and right gains for a mono source at `pan` (−1…+1).
    ///
    /// Audio thread (after ``prepare()``): no allocation, no locks.
    @inline(__always)
    public static func mono(pan: Double) -> (left: Float, right: Float) {
        mono(pan: pan, table: UnsafePointer(table))
    }

    /// ``mono(pan:)`` from `t`, the table (``storage``), compiled into the caller: the
    /// lazily made table costs a call and a check that it is made at every read (automation
    /// reads it at every strip's every period).
    ///
    /// Audio thread: loads and arithmetic.
    @inlinable @inline(__always)
    public static func mono(pan: Double, table t: UnsafePointer<Float>) -> (left: Float, right: Float) {
        let steps = 4096
        let x = (min(max(pan, -1), 1) + 1) / 2 * Double(steps)
        let i = min(Int(x), steps - 1)
        let f = Float(x - Double(i))
        let left = t[i] + (t[i + 1] - t[i]) * f
        let j = steps - i
        let right = t[j] + (t[j - 1] - t[j]) * f
        return (left, right)
    }
}
