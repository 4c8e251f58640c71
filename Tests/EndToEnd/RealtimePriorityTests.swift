import Foundation
import XCTest

/// Without the right to SCHED_FIFO the engine still runs, and says once what to change.
final class RealtimePriorityTests: XCTestCase {
    func testARefusedRealtimePriorityIsSaidOnceWithTheFix() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.3, frames: 24_000)], to: dir.path + "/a.wav")
        // Root may always take SCHED_FIFO; without CAP_SYS_NICE and with an rtprio limit of 0
        // it is refused, as it is for a user not in the audio group.
        let r = try Tapedeck.run(["--inh-caps=-sys_nice", "--bounding-set=-sys_nice", "prlimit", "--rtprio=0", Tapedeck.binary,
                                  "play", dir.path + "/a.wav", "--device", "filetap:OUT=/dev/null"],
                                 executable: "/usr/bin/setpriv", environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let said = r.stderr.components(separatedBy: "SCHED_FIFO was refused").count - 1
        XCTAssertEqual(said, 1, "said once: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("rtprio"), "with the fix: \(r.stderr)")
        // With the right, nothing is said.
        let fine = try Tapedeck.run(["play", dir.path + "/a.wav", "--device", "filetap:OUT=/dev/null"], environment: RecordSupport.environment)
        XCTAssertEqual(fine.status, 0, fine.stderr)
        XCTAssertFalse(fine.stderr.contains("SCHED_FIFO"), fine.stderr)
    }
}

/// On a JACK server, jackd2's or PipeWire's, the server makes the client's thread real-time;
/// the render workers run one below it, and every thread says what it is (`top -H`). PipeWire
/// makes its data loop real-time with SCHED_RESET_ON_FORK, which the workers once misread as
/// no real-time at all: they ran at normal priority beside a real-time audio thread.
final class JACKThreadPriorityTests: XCTestCase {
    /// Each thread of `pid`: its name, scheduling policy (1: SCHED_FIFO) and real-time priority.
    private func threads(of pid: pid_t) -> [(name: String, policy: Int, priority: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { tid in
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After the name: field 3 (state) on; rt_priority is field 40, policy field 41.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 38, let priority = Int(fields[37]), let policy = Int(fields[38]) else { return nil }
            return (name.trimmingCharacters(in: .whitespacesAndNewlines), policy, priority)
        }
    }

    private func workersFollowTheAudioThread(on kind: LoopbackServer.Kind) throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(kind, period: 256, folder: dir, test: self)
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.3, frames: 48000 * 20)], to: dir + "/a.wav")
        var env = server.environment
        // (PipeWire's socket is in the server's runtime folder: only jackd2's client gets its own.)
        if kind == .jackd2 { env["XDG_RUNTIME_DIR"] = dir }
        let play = try SpawnedChild([Tapedeck.binary, "play", dir + "/a.wav", "--device", "jack", "--threads", "2", "--connect", "none"],
                                    environment: env,
                                    stdoutPath: dir + "/play.out", stderrPath: dir + "/play.err")
        defer { _ = play.kill(SIGTERM); _ = play.wait(timeoutSeconds: 10) }
        var seen: [(name: String, policy: Int, priority: Int)] = []
        let deadline = Date().addingTimeInterval(15)
        repeat {
            usleep(250_000)
            seen = threads(of: play.pid)
        } while Date() < deadline && !(seen.contains { $0.name == "tapedeck-work-1" && $0.policy == 1 })
        let audio = try XCTUnwrap(seen.first { $0.name == "tapedeck-audio" }, "the JACK client's thread is named: \(seen)")
        XCTAssertEqual(audio.policy, 1, "the server made it SCHED_FIFO: \(seen)")
        let worker = try XCTUnwrap(seen.first { $0.name == "tapedeck-work-1" }, "\(seen)")
        XCTAssertEqual(worker.policy, 1, "the worker is real-time too: \(seen)")
        XCTAssertEqual(worker.priority, audio.priority - 1, "one below the audio thread: \(seen)")
        // Every thread of Tapedeck's own says what it is (the main thread and JACK's own keep
        // the program's name); Foundation's Thread.name never reached the kernel.
        for name in ["tapedeck-disk", "tapedeck-writer", "tapedeck-ctl"] {
            XCTAssertTrue(seen.contains { $0.name == name }, "\(name): \(seen)")
        }
    }

    func testOnJackd2() throws { try workersFollowTheAudioThread(on: .jackd2) }

    func testOnPipeWiresJACK() throws { try workersFollowTheAudioThread(on: .pipewire) }
}
