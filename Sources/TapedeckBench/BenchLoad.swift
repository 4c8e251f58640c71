import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckDevices
#if canImport(Glibc)
import Glibc
#endif

/// The load that matters: each period's wall time against its deadline on a paced device — a
/// private `jackd -d dummy` server, Tapedeck a JACK client of it — beside the audio thread's
/// CPU time, the periods that missed their deadline and the xruns JACK reported. Every row
/// runs with `--threads 1` and with all the threads asked for, runs alternating, so both see
/// the same machine.
///
/// `bench engine`'s DSP load is the audio thread's CPU time on a clock with no deadline: it
/// cannot miss one, and on several threads it leaves the workers' share out.
public enum BenchLoad {
    static let sampleRate = 48000

    /// One row: a generated session (``BenchEngine/Size``) at a period, with its goal.
    public struct Row {
        var name: String
        var size: BenchEngine.Size
        /// The goal on all threads: p99.9 wall time below this share of the period, and
        /// (when `noXruns`) no xrun and no missed deadline.
        var p999Goal: Double?
        var noXruns: Bool
    }

    /// The rows: 1,024 mono tracks × 4 nodes at 256-frame periods (0 xruns on 2 cores), the
    /// routing row at 32 frames (p99.9 < 60 %), and the engine and automation rows.
    public static func rows(seconds: Double?, tracks: Int?) -> [Row] {
        var big = BenchEngine.Size(tracks: tracks ?? 1024, periodFrames: 256, seconds: seconds ?? 60)
        let seconds = seconds ?? 15
        big.ringSeconds = 1
        var routing = BenchEngine.Size.routing(seconds: seconds)
        routing.ringSeconds = 1
        if let tracks { routing.tracks = tracks }
        var headroom = BenchEngine.Size(tracks: tracks ?? 128, periodFrames: 64, seconds: seconds)
        headroom.ringSeconds = 1
        var automation = BenchEngine.Size.automation(seconds: seconds)
        automation.ringSeconds = 1
        if let tracks { automation.tracks = tracks }
        return [
            Row(name: "\(big.tracks) mono tracks × \(big.chain), 256-frame periods", size: big, p999Goal: nil, noXruns: true),
            Row(name: "routing: \(routing.tracks) tracks\(routing.routingWord), 32-frame periods", size: routing, p999Goal: 0.6,
                noXruns: false),
            Row(name: "headroom: \(headroom.tracks) mono tracks × \(headroom.chain), 64-frame periods", size: headroom, p999Goal: nil,
                noXruns: false),
            Row(name: "automation: \(automation.tracks) tracks\(automation.routingWord), 32-frame periods", size: automation,
                p999Goal: nil, noXruns: false),
        ]
    }

    /// What one run measured.
    struct Measured {
        /// Each period's wall and CPU time as a share of the period.
        var wall: [Double]
        var cpu: [Double]
        /// Each period's strips rendered ahead whose chains it ran itself (the workers had
        /// not reached them).
        var aheadMisses: [Int]
        var xruns: Int
        var underrunFrames: Int64
        /// The process's CPU over the run ÷ its wall time: cores kept busy.
        var cores: Double

        var misses: Int { wall.filter { $0 > 1 }.count }
    }

    /// What the strip DSP rows' names begin with.
    static func stripsName(_ strips: Int) -> String { "strip DSP: \(strips) mono strips" }

    /// The rows' names as `--row` picks them (a row is run when its name holds the text):
    /// the strip DSP rows', then the paced rows'.
    public static func names(tracks: Int?) -> [String] {
        [stripsName(tracks ?? 1024)] + rows(seconds: nil, tracks: tracks).map(\.name)
    }

    /// Runs each row `runs` times on one thread and on `threads`, alternating, `seconds` each.
    public static func run(folder: String, runs: Int, seconds: Double?, threads: Int, tracks: Int? = nil,
                           only: String? = nil) throws -> [BenchResult] {
        // `only` picks rows by name (``names(tracks:)``).
        let strips = tracks ?? 1024
        let paced = rows(seconds: seconds, tracks: tracks).filter { row in only.map { row.name.contains($0) } ?? true }
        let measuresStrips = only.map { stripsName(strips).contains($0) } ?? true
        // The strips' DSP alone first: what the big row's chains cost in CPU, device aside.
        var results: [BenchResult] = []
        if measuresStrips {
            results += try BenchStrips.run(runs: runs, seconds: min(seconds ?? 10, 10), strips: strips)
        }
        guard !paced.isEmpty else { return results }
        for tool in ["jackd", "jack_wait"] where BenchSupport.which(tool) == nil {
            throw BenchError("\(tool) is not installed (apt-get install jackd2)")
        }
        for row in paced {
            let session = try BenchEngine.prepare(folder: folder, size: row.size)
            let server = try PrivateServer(periodFrames: row.size.periodFrames)
            defer { server.stop() }
            var one: [Measured] = [], all: [Measured] = []
            for _ in 0..<max(runs, 1) {
                one.append(try measure(session: session, size: row.size, threads: 1))
                all.append(try measure(session: session, size: row.size, threads: threads))
            }
            results.append(result(row, one: one, all: all, threads: threads))
        }
        return results
    }

    /// What rendering ahead missed: the periods that ran some strips' chains themselves.
    static func aheadText(_ runs: [Measured]) -> String {
        let periods = runs.map { $0.aheadMisses.filter { $0 > 0 }.count }.reduce(0, +)
        guard periods > 0 else { return "" }
        let strips = runs.map { $0.aheadMisses.reduce(0, +) }.reduce(0, +)
        return "; \(periods) periods ran \(strips) strips not rendered ahead"
    }

    /// The row's line: all threads measured, one thread as the peer, p99.9 wall beside.
    static func result(_ row: Row, one: [Measured], all: [Measured], threads: Int) -> BenchResult {
        func text(_ runs: [Measured]) -> String {
            let q = { (p: Double, key: KeyPath<Measured, [Double]>) in BenchSupport.median(runs.map { BenchSupport.quantile($0[keyPath: key], p) }) }
            let max = runs.map { $0.wall.max() ?? 0 }.max() ?? 0
            return "wall p50 \(BenchEngine.pct(q(0.5, \.wall))), p99.9 \(BenchEngine.pct(q(0.999, \.wall))), max \(BenchEngine.pct(max)); "
                + "audio thread CPU p50 \(BenchEngine.pct(q(0.5, \.cpu))), p99.9 \(BenchEngine.pct(q(0.999, \.cpu))); "
                + "\(BenchSupport.fixed(BenchSupport.median(runs.map(\.cores)), 2)) cores busy; "
                + "\(runs.map(\.misses).reduce(0, +)) missed, \(runs.map(\.xruns).reduce(0, +)) xruns"
                + (runs.contains { $0.underrunFrames > 0 } ? ", \(runs.map(\.underrunFrames).reduce(0, +)) underrun frames" : "")
                + aheadText(runs)
                + " (\(runs.first?.wall.count ?? 0) periods a run)"
        }
        let oneP = BenchSupport.median(one.map { BenchSupport.quantile($0.wall, 0.999) })
        let allP = BenchSupport.median(all.map { BenchSupport.quantile($0.wall, 0.999) })
        var goals: [String] = []
        var met = true
        if let g = row.p999Goal {
            goals.append("p99.9 < \(Int(g * 100)) % on \(threads) threads")
            met = met && allP < g
        }
        if row.noXruns {
            goals.append("0 xruns on \(threads) threads")
            met = met && all.allSatisfy { $0.xruns == 0 && $0.misses == 0 }
        }
        return BenchResult(name: "paced JACK: \(row.name), \(row.size.seconds) s", measured: "\(threads) threads: " + text(all),
                           peer: "--threads 1: " + text(one), ratio: "p99.9 \(BenchSupport.fixed(allP / max(oneP, 1e-9), 2))",
                           goal: goals.isEmpty ? "—" : goals.joined(separator: ", "), met: goals.isEmpty ? nil : met)
    }

    /// One run of `size` on the private server, the engine on `threads` threads.
    static func measure(session folder: SessionFolder, size: BenchEngine.Size, threads: Int) throws -> Measured {
        let session = try folder.load()
        let spec = try GraphSpec(session: session, folder: folder)
        let device = try JACKDevice(request: JACKRequest(
            deviceName: "jack", clientName: "tapedeck", ports: JACKPortLayout.named(inputs: 0, outputs: 2, tracks: []),
            connection: .none, sampleRate: sampleRate, transportSync: false, timebaseMaster: false, tempoMap: nil))
        let periods = Int(size.seconds * Double(sampleRate)) / max(device.configuration.periodFrames, 1) + 64
        let times = PeriodTimes(capacity: periods)
        var options = EngineOptions()
        options.renderThreads = threads
        options.playbackRingSeconds = size.ringSeconds
        options.periodTimes = times
        let engine = Engine(device: device, options: options)
        defer { engine.close() }
        try engine.start(spec, position: 0)
        // Round the loop for as long as asked (the material is shorter).
        engine.setLoop(FrameRange(startFrame: 0, endFrame: Int64(BenchEngine.sourceSeconds * sampleRate)), enabled: true)
        engine.play()
        let deadline = Date().addingTimeInterval(30)
        while engine.status().transport != .rolling && Date() < deadline { usleep(10_000) }
        guard engine.status().transport == .rolling else { throw BenchError("the engine did not roll on the JACK server") }
        // A second to settle (the disk's first refills, the workers' first blocks ahead).
        usleep(1_000_000)
        let before = engine.status()
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpuBefore = seconds(usage)
        let began = monotonicSeconds()
        times.arm()
        usleep(UInt32(size.seconds * 1_000_000))
        times.disarm()
        let wall = monotonicSeconds() - began
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = seconds(usage) - cpuBefore
        let after = engine.status()
        engine.stop()
        if let error = after.lastError { throw BenchError("engine run failed: \(error)") }
        let period = Double(device.configuration.periodFrames) / Double(sampleRate) * 1e9
        let kept = times.periods()
        return Measured(wall: kept.wall.map { Double($0) / period }, cpu: kept.cpu.map { Double($0) / period },
                        aheadMisses: kept.aheadMisses,
                        xruns: after.xrunCount - before.xrunCount, underrunFrames: after.underrunFrames - before.underrunFrames,
                        cores: cpu / max(wall, 1e-9))
    }

    private static func seconds(_ usage: rusage) -> Double {
        Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
