import Foundation
import XCTest

/// A private JACK server with the dummy driver, for tests that need a device paced in real
/// time (`jacktap`). Skips the test when jackd is not installed or does not start.
struct JackFixture {
    let name: String
    let pid: Int32

    static func start(_ test: XCTestCase) throws -> JackFixture {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") else { throw XCTSkip("jackd2 is not installed") }
        let name = "tdtr\(getpid())x\(Int.random(in: 0..<1_000_000))"
        let pidFile = NSTemporaryDirectory() + "\(name).pid"
        defer { unlink(pidFile) }
        guard JackFixture.run(["/bin/bash", TransportFixture.jackScript, "start", name], stdoutPath: pidFile) == 0,
              let pid = Int32(((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw XCTSkip("the private JACK server did not start (see /tmp/jackd-\(name).log)")
        }
        setenv("JACK_DEFAULT_SERVER", name, 1)
        setenv("JACK_NO_START_SERVER", "1", 1)
        test.addTeardownBlock {
            kill(pid, SIGTERM)
            for _ in 0..<300 where kill(pid, 0) == 0 { usleep(10_000) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
            unsetenv("JACK_DEFAULT_SERVER")
        }
        return JackFixture(name: name, pid: pid)
    }

    /// Runs `args` to its end with stdout to `stdoutPath`; its exit status. The child gets an
    /// empty signal mask: test threads block most signals, and JACK's tools hang without them.
    static func run(_ args: [String], stdoutPath: String) -> Int32 {
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
        guard posix_spawn(&pid, args[0], &actions, &attributes, &argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return (status >> 8) & 0xff
    }
}
