import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Time-pitch: how many stereo tracks live stretch sustains on one core, and export stretch
/// time against the `rubberband` command-line tool on the same file.
public enum BenchStretch {
    static let rate = 48000
    static let blockFrames = 256

    /// An endless stereo test signal in memory (no disk in the timing).
    private final class LoopSource: TimePitchSource {
        let samples: [Float]
        var position = 0
        init(seconds: Int) {
            var state: UInt32 = 7
            samples = (0..<(seconds * 48000)).map { i in
                state = state &* 1_664_525 &+ 1_013_904_223
                let t = Double(i) / 48000
                return Float(0.3 * sin(2 * .pi * 220 * t) + 0.2 * sin(2 * .pi * 331 * t))
                    + 0.05 * Float(Int32(bitPattern: state)) / Float(Int32.max)
            }
        }
        func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int {
            for i in 0..<frameCount {
                let v = samples[(position + i) % samples.count]
                channels[0][i] = v
                channels[1][i] = -v
            }
            position += frameCount
            return frameCount
        }
    }

    /// Per-block cost of one stereo live stretcher at `speed` with `quality`'s engine:
    /// the mean block, the 99th-percentile block and the worst, in microseconds.
    static func liveCost(speed: Double, quality: StretchQuality) -> (mean: Double, p99: Double, worst: Double) {
        let source = LoopSource(seconds: 4)
        defer { withExtendedLifetime(source) {} }
        let stretcher = LiveStretcher(sampleRate: rate, channelCount: 2, maxFrames: blockFrames, source: source, quality: quality,
                                      startSpeed: speed)
        // On a machine's first run the other speeds are measured on another thread: not
        // while this one is timed.
        stretcher.waitUntilDelaysMeasured()
        stretcher.set(speed: speed, pitchScale: 1)
        let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        table[0] = .allocate(capacity: blockFrames)
        table[1] = .allocate(capacity: blockFrames)
        defer { table[0].deallocate(); table[1].deallocate(); table.deallocate() }
        for _ in 0..<200 { stretcher.render(into: table, frameCount: blockFrames) }
        var costs: [Double] = []
        costs.reserveCapacity(4000)
        for _ in 0..<4000 {
            let t0 = monotonicSeconds()
            stretcher.render(into: table, frameCount: blockFrames)
            costs.append(monotonicSeconds() - t0)
        }
        let mean = costs.reduce(0, +) / Double(costs.count)
        return (mean * 1e6, BenchSupport.quantile(costs, 0.99) * 1e6, (costs.max() ?? 0) * 1e6)
    }

    /// One row per engine: the stretcher's share of a 256-frame period (5.33 ms) at each speed.
    /// (The engine runs one, on the mix: see `bench speed` for whole sessions.)
    public static func live() -> [BenchResult] {
        let period = Double(blockFrames) / Double(rate) * 1e6
        return [StretchQuality.fast, .best].map { quality in
            let parts = BenchSpeed.speeds.map { speed -> String in
                let c = liveCost(speed: speed, quality: quality)
                return "\(BenchSpeed.speedText(speed)) \(BenchEngine.pct(c.mean / period)) (p99 \(BenchEngine.pct(c.p99 / period)))"
            }
            return BenchResult(name: "live stretch, one stereo stretcher (256-frame blocks, \(quality == .fast ? "R2" : "R3"))",
                               measured: "share of a period: " + parts.joined(separator: ", "),
                               peer: "—", ratio: "—", goal: "—", met: nil)
        }
    }

    /// Export stretched at 0.5× and 2× (pitch kept), R3 and R2, of one stereo file against
    /// the `rubberband` tool on the same file (`-3` or `-2`, `--centre-focus`: the channels
    /// together, as Tapedeck stretches them), judged by CPU time (user + system), runs
    /// alternating; wall times beside.
    public static func export(folder: String, runs: Int) throws -> [BenchResult] {
        guard let rubberband = BenchSupport.which("rubberband") else {
            throw BenchError("the stretch comparison needs the rubberband tool (make bench installs rubberband-cli)")
        }
        let session = SessionFolder(path: folder + "/stretch.tapedeck")
        let seconds = 30
        if !session.exists {
            var s = Session(sampleRate: rate)
            try session.create(s)
            try BenchSupport.writeTestTrack(path: session.audioFolder + "/song.wav", seconds: seconds, sampleRate: rate, seed: 3)
            s.tracks = [Track(name: "song", inputChannels: [1, 2],
                              regions: [Region(file: "audio/song.wav", timelineStartFrame: 0, lengthFrames: Int64(seconds * rate))])]
            try session.save(s)
        }
        let tapedeck = BenchSupport.tapedeckPath
        let source = session.audioFolder + "/song.wav"
        var rows: [BenchResult] = []
        for (speed, engine) in [(0.5, "R3"), (2.0, "R3"), (0.5, "R2"), (2.0, "R2")] {
            var ours: [(wall: Double, cpu: Double)] = [], theirs: [(wall: Double, cpu: Double)] = []
            for _ in 0..<max(runs, 1) {
                ours.append(try BenchSupport.measure(tapedeck, ["export", session.path, "-o", folder + "/stretch-tapedeck.wav", "--bits", "32f",
                                                                "--speed", "\(speed)", "--quality", engine == "R3" ? "best" : "fast"]))
                theirs.append(try BenchSupport.measure(rubberband, ["-q", engine == "R3" ? "-3" : "-2", "--centre-focus", "-t", "\(1 / speed)",
                                                                    source, folder + "/stretch-rubberband.wav"]))
            }
            let cpu = BenchSupport.median(ours.map(\.cpu)), peerCPU = BenchSupport.median(theirs.map(\.cpu))
            let ratio = cpu / max(peerCPU, 1e-9)
            rows.append(BenchResult(
                name: "export stretch \(speed == 0.5 ? "0.5" : "2")× (\(seconds) s stereo, \(engine) offline)",
                measured: "CPU \(BenchSupport.fixed(cpu)) s (wall \(BenchSupport.fixed(BenchSupport.median(ours.map(\.wall)))) s)",
                peer: "rubberband \(engine == "R3" ? "-3" : "-2") CPU \(BenchSupport.fixed(peerCPU)) s (wall \(BenchSupport.fixed(BenchSupport.median(theirs.map(\.wall)))) s)",
                ratio: BenchSupport.fixed(ratio), goal: "≤ 1.10 (CPU)", met: ratio <= 1.10))
        }
        return rows
    }
}
