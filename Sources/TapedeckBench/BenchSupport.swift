import Foundation
import TapedeckIO

/// Timing, process spawning and reporting shared by the benchmarks.
public enum BenchSupport {
    /// Wall-clock seconds one run of `executable ARGS` takes, from spawning it to reaping it;
    /// throws when it fails. Spawned and reaped directly: Foundation's `Process` on Linux
    /// waits for a child by polling its run loop every 50 ms, which rounded every run up to
    /// the next 50 ms (measured: `/bin/true` took 0.051 s through it) — a large share of a
    /// 0.1 s export and a small one of its peer's, so the ratios were skewed against the
    /// shorter run.
    static func time(_ executable: String, _ args: [String]) throws -> Double {
        try measure(executable, args).wall
    }

    /// ``time(_:_:)`` with the child's CPU time (user + system, from `wait4`'s usage) beside
    /// its wall time, in seconds.
    static func measure(_ executable: String, _ args: [String]) throws -> (wall: Double, cpu: Double) {
        let errPath = NSTemporaryDirectory() + "tapedeck-bench-\(UUID().uuidString).err"
        defer { unlink(errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let start = monotonicSeconds()
        let code = posix_spawn(&child, executable, &actions, nil, argv, environ)
        guard code == 0 else {
            throw BenchError("cannot start \(executable): \(String(cString: strerror(code)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = monotonicSeconds() - start
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        // WIFEXITED / WEXITSTATUS by hand: Glibc's macros do not reach Swift.
        let exited = status & 0x7f == 0
        let exitCode = (status >> 8) & 0xff
        if !exited || exitCode != 0 {
            let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
            let how = exited ? "\(exitCode)" : "signal \(status & 0x7f)"
            throw BenchError("\(executable) \(args.joined(separator: " ")) failed (\(how)): \(err.prefix(300))")
        }
        return (seconds, cpu)
    }

    /// The median of `values` (mean of the middle two when even).
    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The `p`-quantile (0…1) of `values`, nearest rank.
    static func quantile(_ values: [Double], _ p: Double) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s[min(s.count - 1, max(0, Int((p * Double(s.count)).rounded(.up)) - 1))]
    }

    /// Runs `a` and `b` alternately `runs` times each (a, b, a, b, …) so both see the same
    /// machine weather; returns their median wall times.
    static func alternate(runs: Int, _ a: () throws -> Double, _ b: () throws -> Double) rethrows -> (a: Double, b: Double) {
        var ta: [Double] = [], tb: [Double] = []
        for _ in 0..<runs {
            ta.append(try a())
            tb.append(try b())
        }
        return (median(ta), median(tb))
    }

    /// Full path of a program on `PATH`, or nil.
    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    /// This executable's path.
    static var tapedeckPath: String {
        let arg0 = CommandLine.arguments[0]
        if arg0.contains("/") { return URL(fileURLWithPath: arg0).standardizedFileURL.path }
        return which(arg0) ?? arg0
    }

    /// Writes a deterministic `seconds`-long 16-bit stereo test track: a chord of tones plus
    /// quiet noise, different per `seed`.
    static func writeTestTrack(path: String, seconds: Int, sampleRate: Int, seed: Int, channels: Int = 2) throws {
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .int16,
                                         sampleRate: sampleRate, channelCount: channels),
                                         expectedFrameCount: Int64(seconds * sampleRate))
        let block = 4096
        let buffers = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer { buffers.forEach { $0.deallocate() } }
        var state = UInt32(truncatingIfNeeded: 0x9E37_79B9 &* UInt32(seed + 1))
        let f1 = 110.0 * Double(seed + 2), f2 = f1 * 1.5
        var frame = 0
        let total = seconds * sampleRate
        while frame < total {
            let n = min(block, total - frame)
            for c in 0..<channels {
                for i in 0..<n {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    let t = Double(frame + i) / Double(sampleRate)
                    let noise = Double(Int32(bitPattern: state)) / Double(Int32.max)
                    buffers[c][i] = Float(0.2 * sin(2 * .pi * f1 * t + Double(c)) + 0.15 * sin(2 * .pi * f2 * t) + 0.05 * noise)
                }
            }
            try writer.write(buffers.map { UnsafePointer($0) }, frameCount: n)
            frame += n
        }
        try writer.close()
    }

    /// Prints a table with a header row, columns padded.
    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for r in all { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        return all.map { r in
            r.enumerated().map { i, c in c + String(repeating: " ", count: widths[i] - c.count) }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `1.234` with `digits` decimals.
    static func fixed(_ v: Double, _ digits: Int = 2) -> String {
        let scale = pow(10.0, Double(digits))
        let r = (v * scale).rounded() / scale + 0  // + 0: no "-0.0"
        var s = "\(r)"
        if let dot = s.firstIndex(of: ".") {
            let decimals = s.distance(from: dot, to: s.endIndex) - 1
            if decimals < digits { s += String(repeating: "0", count: digits - decimals) }
        } else if digits > 0 {
            s += "." + String(repeating: "0", count: digits)
        }
        return s
    }
}

/// A benchmark that could not run; one line.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// One row of the `make bench` table.
/// One row of the benchmark table.
public struct BenchResult {
    public var name: String
    public var measured: String
    public var peer: String
    public var ratio: String
    public var goal: String
    /// Whether the goal was met (nil: no goal, or not run).
    public var met: Bool?

    public init(name: String, measured: String, peer: String, ratio: String, goal: String, met: Bool?) {
        self.name = name
        self.measured = measured
        self.peer = peer
        self.ratio = ratio
        self.goal = goal
        self.met = met
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
