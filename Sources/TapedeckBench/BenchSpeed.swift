import Foundation
import TapedeckDSP
import TapedeckEngine

/// Transport speed on the mix: the engine benchmark's session, stereo and without track
/// chains (plain playback: regions, fades, faders, pan), played at speeds across the whole
/// range in both modes. Time-pitch runs once, on the mix, so its cost does not grow with the
/// track count; what grows is reading speed × the period from every track. Goal: 128 stereo
/// tracks at any speed 1/32×…32×, stretch or varispeed, p99.9 DSP load < 60 % of one core at
/// 256-frame periods. Tracks per core are reported by the 99th-percentile period (the
/// tracks the measured count would become if a whole period's time were spent), not by
/// the mean, because Rubber Band works in bursts.
public enum BenchSpeed {
    static let goalP999 = 0.6
    static let speeds: [Double] = [1.0 / 32, 0.5, 2, 32]

    /// One row per speed and mode (the stretcher R2, R3 above 4×), then R3 throughout
    /// (`play --quality best`) at 0.5× and 2×.
    public static func run(folder: String, runs: Int, tracks: Int, periodFrames: Int, seconds: Double) throws -> [BenchResult] {
        var cases: [(speed: Double, varispeed: Bool, quality: StretchQuality)] = []
        for speed in speeds { cases.append((speed, false, .fast)) }
        for speed in speeds { cases.append((speed, true, .fast)) }
        for speed in [0.5, 2] { cases.append((speed, false, .best)) }
        return try cases.map { c in
            let size = BenchEngine.Size(tracks: tracks, chain: "", periodFrames: periodFrames, seconds: seconds, stereo: true,
                                        speed: c.speed, varispeed: c.varispeed, quality: c.quality)
            let stats = try BenchEngine.measure(folder: folder, runs: runs, size: size)
            let mode = c.varispeed ? "varispeed"
                : c.quality == .best ? "stretch, --quality best (R3)" : "stretch (\(c.speed > Engine.fineStretchAboveSpeed ? "R3" : "R2"))"
            let perCore = stats.cpuP99 > 0 ? Int(Double(tracks) / stats.cpuP99) : 0
            return BenchResult(
                name: "mix at \(speedText(c.speed)) \(mode) (\(tracks) stereo tracks, \(periodFrames)-frame periods, 48 kHz)",
                measured: "DSP load p50 \(BenchEngine.pct(stats.cpuP50)), p99 \(BenchEngine.pct(stats.cpuP99)), "
                    + "p99.9 \(BenchEngine.pct(stats.cpuP999)); \(perCore) tracks/core by the p99 period",
                peer: "no peer; " + BenchEngine.notes(stats, size: size), ratio: "—",
                goal: "p99.9 < \(Int(goalP999 * 100)) %",
                met: stats.cpuP999 < goalP999 && stats.xruns == 0)
        }
    }

    /// `1/32×`, `0.5×`, `2×`.
    static func speedText(_ speed: Double) -> String {
        speed < 0.25 ? "1/\(Int((1 / speed).rounded()))×" : (speed == speed.rounded() ? "\(Int(speed))×" : "\(speed)×")
    }
}
