import Foundation
import XCTest

/// A child process started with `posix_spawn` and reaped with `waitpid` by the test itself.
///
/// Foundation's `Process` loses track of a child whose own child (a daemonised `jackd`) lives
/// on, and test threads block signals that children would inherit; this does neither.
struct SpawnedChild {
    let pid: pid_t

    /// Starts `argv` with `environment` added, stdout to `stdoutPath` (or /dev/null), stderr to
    /// /dev/null, and a clean signal mask.
    init(_ argv: [String], environment: [String: String], stdoutPath: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
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
