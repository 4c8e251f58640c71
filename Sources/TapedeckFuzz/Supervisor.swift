import Foundation
import TapedeckCore

/// Runs a target's cases in worker processes (this same program, `worker` mode) and watches
/// them: a worker that dies by a signal crashed on the case it had started; one that starts
/// no new case for ``hangSeconds`` hangs on it and is killed. Either way the case is saved
/// to the findings folder and a new worker carries on from the next case.
struct Supervisor {
    static let hangSeconds = 10.0

    /// One thing found: a crash, a hang, or an unclear message.
    struct Finding {
        var kind: String
        var target: String
        var index: Int
        var detail: String
    }

    let target: String
    let seed: UInt64
    let findingsFolder: String
    /// Inputs from a corpus folder instead of generated ones.
    let corpus: String?

    /// Runs cases `start..<count`; returns what was found.
    func run(count: Int, start: Int = 0, progress: (Int) -> Void) -> [Finding] {
        var findings: [Finding] = []
        var next = start
        while next < count {
            var args = ["worker", target, "--seed", String(seed), "--from", String(next), "--cases", String(count - next)]
            if let corpus { args += ["--corpus", corpus] }
            guard let worker = Worker(args) else {
                findings.append(Finding(kind: "error", target: target, index: next, detail: "cannot start a worker"))
                break
            }
            var current = next
            var finished = false
            var lastStart = Date()
            while true {
                let lines = worker.readLines(timeoutSeconds: 0.5)
                for line in lines {
                    let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
                    switch parts.first {
                    case "S":
                        current = Int(parts[1]) ?? current
                        lastStart = Date()
                        if current % 1000 == 0 { progress(current) }
                    case "U":
                        findings.append(Finding(kind: "unclear", target: target, index: Int(parts[1]) ?? current,
                                                detail: parts.count > 2 ? parts[2] : ""))
                    case "D":
                        finished = true
                    default:
                        break
                    }
                }
                if finished || worker.ended { break }
                if Date().timeIntervalSince(lastStart) > Supervisor.hangSeconds {
                    worker.kill()
                    findings.append(Finding(kind: "hang", target: target, index: current, detail: "no answer in \(Int(Supervisor.hangSeconds)) s"))
                    break
                }
            }
            let status = worker.wait()
            if finished { break }
            if findings.last?.kind != "hang" || findings.last?.index != current {
                let signal = status & 0x7f
                findings.append(Finding(kind: signal != 0 ? "crash" : "error", target: target, index: current,
                                        detail: signal != 0 ? "killed by signal \(signal)" : "worker exited \(status >> 8)"))
            }
            save(findings.last!)
            next = current + 1
        }
        for f in findings where f.kind == "unclear" { save(f) }
        return findings
    }

    /// Writes the input of a finding where a person can look at it and replay it.
    private func save(_ finding: Finding) {
        guard corpus == nil else { return }
        try? FileManager.default.createDirectory(atPath: findingsFolder, withIntermediateDirectories: true)
        let path = "\(findingsFolder)/\(target)-\(seed)-\(finding.index).\(finding.kind)"
        if let t = try? Targets.make(target) {
            _ = FileManager.default.createFile(atPath: path, contents: Data(t.input(seed: seed, index: finding.index)))
        }
    }
}

/// A worker process with its stdout on a pipe.
final class Worker {
    let pid: pid_t
    private let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var ended = false

    init?(_ args: [String]) {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let me = "/proc/self/exe"
        let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: me)) ?? CommandLine.arguments[0]
        let argv = [CommandLine.arguments[0]] + args
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var child: pid_t = 0
        // A crash is expected here and reported by the supervisor: skip Swift's slow backtrace.
        let env = (ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }).map { "\($0.key)=\($0.value)" }
        let cEnv = env.map { strdup($0) } + [nil]
        defer { cEnv.forEach { free($0) } }
        let code = posix_spawn(&child, resolved, &actions, nil, cArgs, cEnv)
        close(pipeFDs[1])
        guard code == 0 else { close(pipeFDs[0]); return nil }
        pid = child
        fd = pipeFDs[0]
    }

    deinit { close(fd) }

    /// The complete lines that arrive within `timeoutSeconds`.
    func readLines(timeoutSeconds: Double) -> [String] {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeoutSeconds * 1000)) > 0 else { return [] }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = read(fd, &chunk, chunk.count)
        if n <= 0 { ended = true; return [] }
        buffer += chunk[0..<n]
        var lines: [String] = []
        while let nl = buffer.firstIndex(of: 0x0A) {
            lines.append(String(decoding: buffer[..<nl], as: UTF8.self))
            buffer.removeSubrange(...nl)
        }
        return lines
    }

    func kill() { _ = Glibc.kill(pid, SIGKILL) }

    /// Reaps the worker; its wait status.
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}
