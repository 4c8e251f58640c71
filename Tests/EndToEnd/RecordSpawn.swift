import Foundation
import XCTest

/// A child process started with `posix_spawn` and reaped with `waitpid` by the test itself.
///
/// Foundation's `Process` loses track of a child whose own child (a daemonised `jackd`) lives
/// on, and test threads block signals that children would inherit; this does neither.
struct SpawnedChild {
    let pid: pid_t

    /// Starts `argv` with `environment` added, stdout to `stdoutPath` and stderr to
    /// `stderrPath` (or /dev/null), and a clean signal mask.
    init(_ argv: [String], environment: [String: String], stdoutPath: String? = nil, stderrPath: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, argv[0], &actions, &attr, cArgs, cEnv)
        guard code == 0 else { throw NSError(domain: NSPOSIXErrorDomain, code: Int(code)) }
        pid = child
    }

    /// Waits at most `timeoutSeconds`; returns the wait status, or nil when still running.
    func wait(timeoutSeconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        var status: Int32 = 0
        repeat {
            if waitpid(pid, &status, WNOHANG) == pid { return status }
            usleep(10_000)
        } while Date() < deadline
        return nil
    }

    /// Whether it still runs, read from /proc without reaping it (a later ``wait(timeoutSeconds:)``
    /// still gets its status): gone, or a zombie, is ended.
    var isRunning: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        // The state follows the command name: "pid (name) S ...".
        return stat[stat.index(after: close)...].split(separator: " ").first.map { $0 != "Z" && $0 != "X" } ?? false
    }

    /// Sends `signal` and reaps the child (bounded).
    func kill(_ signal: Int32) -> Int32? {
        _ = Glibc.kill(pid, signal)
        return wait(timeoutSeconds: 10)
    }
}

/// A private JACK server with the dummy driver, for the paced `jacktap` device; stopped when
/// the test ends.
struct JackServer {
    let name: String
    let pid: pid_t

    /// Starts one (about a second) or skips the test when JACK is missing or will not start.
    static func start(_ test: XCTestCase, folder: String) throws -> JackServer {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") else { throw XCTSkip("jackd2 is not installed") }
        let name = "td-\(getpid())-\(UUID().uuidString.prefix(6))"
        let script = Tapedeck.packageRoot.appendingPathComponent("Tests/Fixtures/jack-dummy.sh").path
        let pidFile = folder + "/jack.pid"
        let starter = try SpawnedChild(["/bin/bash", script, "start", name], environment: [:], stdoutPath: pidFile)
        guard let status = starter.wait(timeoutSeconds: 30), status == 0,
              let pid = Int32(((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) else {
            _ = starter.kill(SIGKILL)
            throw XCTSkip("the private JACK server did not start (see /tmp/jackd-\(name).log)")
        }
        test.addTeardownBlock { [weak test] in
            kill(pid, SIGTERM)
            for _ in 0..<300 where kill(pid, 0) == 0 { usleep(10_000) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
            // The server's log is kept for a test that failed, else removed: every test with a
            // server left one in /tmp (hundreds after a few runs of the suite).
            if let run = test?.testRun, run.totalFailureCount == 0 { unlink("/tmp/jackd-\(name).log") }
        }
        return JackServer(name: name, pid: pid)
    }

    /// The environment a client needs to use this server (and never start another).
    var environment: [String: String] {
        RecordSupport.environment.merging(["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"]) { $1 }
    }

    /// A client on this server that only counts the xruns the server reports (any client's:
    /// JACK tells them all), which a client of ALSA's JACK plugin (`jacktap`) is never told:
    /// `td-jack-loop`, unconnected. Stopped when the test ends.
    func xrunCounter(_ test: XCTestCase, folder: String) throws -> JackXrunCounter {
        let tool = Tapedeck.binary.replacingOccurrences(of: "/tapedeck", with: "/td-jack-loop", options: .backwards)
        let counter = JackXrunCounter(outPath: folder + "/xrun-counter.out")
        let child = try SpawnedChild([tool, "tdxruns"], environment: environment, stdoutPath: counter.outPath,
                                     stderrPath: folder + "/xrun-counter.err")
        test.addTeardownBlock {
            _ = child.kill(SIGTERM)
            _ = child.wait(timeoutSeconds: 5)
        }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !counter.text.contains("ready") { usleep(20_000) }
        guard counter.text.contains("ready") else { throw XCTSkip("the xrun counter did not start on JACK") }
        return counter
    }
}

/// How many xruns a JACK server has reported and where, as ``JackServer/xrunCounter(_:folder:)``
/// counts them.
struct JackXrunCounter {
    let outPath: String
    var text: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    /// All it printed so far (it prints each xrun within 10 ms).
    var report: JackLoopReport { JackLoopReport(text) }
    /// So far.
    var count: Int { report.xruns }
}

/// What a `td-jack-loop` printed (Sources/td-jack-loop/main.c), read in one place for every
/// test that runs one: the xruns the server told it of, each with JACK's frame time as it was
/// told; with `--sine`, the spans of frame time it was not run for; and JACK's clock against
/// the monotonic clock. Frame times are JACK's own 32-bit ones, as printed (a private server
/// starts near 0 and wraps after a day at 48 kHz: the tests do not unwrap them).
struct JackLoopReport {
    /// Xruns told so far.
    var xruns = 0
    /// JACK's frame time when each was told (at or after the late cycle), in order; an xrun
    /// it could not place (none so far) is missing here but counted in ``xruns``.
    var xrunFrames: [Int64] = []
    /// The spans of JACK's frame time a `--sine` was not run for (it played nothing there).
    var skippedSpans: [Range<Int64>] = []
    /// Every 250 ms: the frame time of the last cycle it ran and CLOCK_MONOTONIC (µs) when it ran it.
    var clocks: [(frame: Int64, microseconds: Int64)] = []

    /// Frames of frame time the sine was not run for.
    var skippedFrames: Int64 { skippedSpans.map { $0.upperBound - $0.lowerBound }.reduce(0, +) }

    init(_ text: String) {
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            switch f.first {
            case "xruns":
                guard f.count >= 2, let n = Int(f[1]) else { continue }
                xruns = n
                if f.count == 4, f[2] == "at", let at = Int64(f[3]) { xrunFrames.append(at) }
            case "skipped":
                guard f.count == 5, f[1] == "from", f[3] == "to", let from = Int64(f[2]), let to = Int64(f[4]), to >= from else { continue }
                skippedSpans.append(from..<to)
            case "clock":
                guard f.count == 3, let frame = Int64(f[1]), let us = Int64(f[2]) else { continue }
                clocks.append((frame, us))
            default:
                continue
            }
        }
    }

    init(contentsOfFile path: String) {
        self.init((try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
    }

    /// JACK's frame time at `microseconds` of the monotonic clock (`JackLoopReport.now()`), by
    /// the clock reading nearest it; nil before the first. Good to a few periods (a cycle runs
    /// a little after it begins; the frame time follows the cycles, not the monotonic clock).
    func frameTime(atMicroseconds microseconds: Int64, rate: Int) -> Int64? {
        guard let near = clocks.min(by: { abs($0.microseconds - microseconds) < abs($1.microseconds - microseconds) }) else { return nil }
        return near.frame + (microseconds - near.microseconds) * Int64(rate) / 1_000_000
    }

    /// CLOCK_MONOTONIC now in microseconds, as td-jack-loop's clock lines read it.
    static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1_000_000 + Int64(t.tv_nsec) / 1000
    }
}

/// `tapedeck record … --json` run to its end while the test watches its status lines: each
/// says where the playhead is (the audio thread's position, not the frames written so far,
/// which lag by the writer's chunks: 0.44 s seen), and the moment the test first sees it
/// (never before it was written) places the take on JACK's clock
/// (``takeStartFrameTime(by:rate:timelineStartFrame:)``).
struct WatchedRecord {
    /// Its exit status (as `waitpid` gives it), nil when it did not end in time and was killed.
    var status: Int32?
    var stdout: String
    var stderr: String
    /// Each status line's playhead (timeline frame) and the monotonic time (µs) it was first seen.
    var sightings: [(microseconds: Int64, positionFrame: Int64)]

    /// Runs `tapedeck args` with `environment` added (stdout and stderr kept in `folder`),
    /// calling `meanwhile` with the seconds since it started about every 10 ms.
    static func run(_ args: [String], environment: [String: String], folder: String, timeout: Double = 60,
                    meanwhile: (Double) -> Void = { _ in }) throws -> WatchedRecord {
        let out = folder + "/record.out", err = folder + "/record.err"
        let child = try SpawnedChild([Tapedeck.binary] + args, environment: environment, stdoutPath: out, stderrPath: err)
        var sightings: [(microseconds: Int64, positionFrame: Int64)] = []
        let began = Date()
        var status: Int32?
        while status == nil && Date().timeIntervalSince(began) < timeout {
            let now = JackLoopReport.now()
            for line in ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n") where line.contains("\"status\"") {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["event"] as? String == "status",
                      let position = (o["position_frame"] as? NSNumber)?.int64Value,
                      !sightings.contains(where: { $0.positionFrame == position }) else { continue }
                sightings.append((now, position))
            }
            meanwhile(Date().timeIntervalSince(began))
            status = child.wait(timeoutSeconds: 0.005)
        }
        if status == nil { _ = child.kill(SIGKILL) }
        return WatchedRecord(status: status, stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                             stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "", sightings: sightings)
    }

    /// The exit code, or -1 when it did not exit by itself.
    var exitCode: Int32 { status.map { ($0 & 0x7f) == 0 ? ($0 >> 8) & 0xff : -1 } ?? -1 }

    /// JACK's frame time at the take's first frame (the playhead at `timelineStartFrame`), by
    /// `clock`'s readings of JACK's clock: the earliest any status line allows (each was seen a
    /// little after it was written). Coarse, for telling which repeat of a pattern the take
    /// began in, never for judging a frame.
    func takeStartFrameTime(by clock: JackLoopReport, rate: Int, timelineStartFrame: Int64) -> Int64? {
        sightings.compactMap { s in
            clock.frameTime(atMicroseconds: s.microseconds, rate: rate).map { $0 - (s.positionFrame - timelineStartFrame) }
        }.min()
    }
}
