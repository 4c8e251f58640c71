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
        test.addTeardownBlock {
            kill(pid, SIGTERM)
            for _ in 0..<300 where kill(pid, 0) == 0 { usleep(10_000) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
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

/// How many xruns a JACK server has reported, as ``JackServer/xrunCounter(_:folder:)`` counts them.
struct JackXrunCounter {
    let outPath: String
    var text: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    /// So far (it prints "xruns N" within 10 ms of each).
    var count: Int { text.split(separator: "\n").last { $0.hasPrefix("xruns ") }.flatMap { Int($0.dropFirst("xruns ".count)) } ?? 0 }
}
