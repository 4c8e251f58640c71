import Foundation
import XCTest

/// A private JACK server with the dummy driver, for tests that need a device paced in real
/// time (`jacktap`) or JACK itself. Skips the test when jackd is not installed or does not start.
///
/// Every test of this process uses a server of the same name, one at a time, each this
/// process's own child (reaped when the test ends). libjack keeps per-process state bound to
/// the server it last served: after a server is killed under a client (which then cannot be
/// closed), libjack in this process reaches only a server of that name again — so a test
/// that kills its server would otherwise leave every later JACK test unable to connect.
/// Reaping also matters: JACK's shared registry holds eight servers, and a dead one's entry
/// is handed back only by a server of the same name once the dead one is reaped.
struct JackFixture {
    let name: String
    let pid: Int32

    /// The one server name of this test process.
    static let processServerName = "tdtr\(getpid())"

    /// Starts the process's server for `test`, stopped (SIGTERM, reaped) when it ends.
    static func start(_ test: XCTestCase, synchronous: Bool = false) throws -> JackFixture {
        try startOwned(test, synchronous: synchronous)
    }

    /// Starts the process's server as this process's own child, so a test that kills it
    /// (SIGKILL) can reap it and hand its registry entry back.
    static func startOwned(_ test: XCTestCase, synchronous: Bool = false) throws -> JackFixture {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") else { throw XCTSkip("jackd2 is not installed") }
        let name = processServerName
        guard let pid = spawnServer(name, synchronous: synchronous) else { throw XCTSkip("the private JACK server did not start") }
        setenv("JACK_DEFAULT_SERVER", name, 1)
        setenv("JACK_NO_START_SERVER", "1", 1)
        let fixture = JackFixture(name: name, pid: pid)
        test.addTeardownBlock {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            var reaped = false
            for _ in 0..<300 {
                let r = waitpid(pid, &status, WNOHANG)
                if r == pid || r < 0 { reaped = true; break } // < 0: the test reaped it itself
                usleep(10_000)
            }
            if !reaped {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
            }
            // Killed (by the test, or here): a server of the same name hands its entry back.
            if status & 0x7f == SIGKILL { fixture.reclaim() }
            unsetenv("JACK_DEFAULT_SERVER")
        }
        return fixture
    }

    /// Starts `jackd -d dummy` named `name` as a child and waits until it answers.
    /// `synchronous` (`jackd -S`): the server waits for every client each cycle. In JACK2's
    /// default asynchronous mode a client that finishes after the server's cycle has its
    /// results — a timebase master's bars and beats among them — used one cycle late, so
    /// what another client reads lags the frame by a period on a busy machine: JACK2's
    /// scheduling, not Tapedeck's numbers, which the timebase tests check.
    static func spawnServer(_ name: String, synchronous: Bool = false) -> pid_t? {
        let args = ["/usr/bin/jackd"] + (synchronous ? ["-S"] : []) + ["-n", name, "-d", "dummy", "-r", "48000", "-p", "256", "-C", "2", "-P", "2"]
        guard let pid = spawn(args, stdoutPath: "/dev/null", environment: ["JACK_NO_AUDIO_RESERVATION=1", "PATH=/usr/bin:/bin"]) else {
            return nil
        }
        let ready = run(["/usr/bin/env", "JACK_DEFAULT_SERVER=\(name)", "/usr/bin/timeout", "15", "/usr/bin/jack_wait", "-s", name, "-w", "-t", "10"],
                        stdoutPath: "/dev/null") == 0
        if !ready {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            return nil
        }
        return pid
    }

    /// Gives back the registry entry of this (killed, reaped) server: a server of the same
    /// name takes it over and leaves cleanly.
    func reclaim() {
        guard let again = JackFixture.spawnServer(name) else { return }
        kill(again, SIGTERM)
        var status: Int32 = 0
        waitpid(again, &status, 0)
    }

    /// Runs `args` to its end with stdout to `stdoutPath`; its exit status.
    static func run(_ args: [String], stdoutPath: String) -> Int32 {
        guard let pid = spawn(args, stdoutPath: stdoutPath, environment: nil) else { return -1 }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return (status >> 8) & 0xff
    }

    /// Starts `args` with stdout to `stdoutPath` and stderr to /dev/null, in `environment`
    /// ("NAME=value"; nil: this process's). The child gets an empty signal mask and default
    /// signal actions: test threads block most signals, and JACK's tools hang without them.
    private static func spawn(_ args: [String], stdoutPath: String, environment: [String]?) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc: Int32
        if let environment {
            var env: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
            defer { env.forEach { free($0) } }
            rc = posix_spawn(&pid, args[0], &actions, &attributes, &argv, &env)
        } else {
            rc = posix_spawn(&pid, args[0], &actions, &attributes, &argv, environ)
        }
        return rc == 0 ? pid : nil
    }
}
