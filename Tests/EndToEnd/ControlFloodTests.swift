import Foundation
import XCTest
import TapedeckRemote

/// Clients that flood the control socket and never read cannot delay the recorder: its
/// status lines keep their pace (the socket's I/O is not the recorder's loop), a good
/// `ctl status` still answers quickly, SIGTERM is honoured at once, memory stays bounded,
/// and the take is bit for bit its input.
final class ControlFloodTests: XCTestCase {
    /// One flooding client: connects, sends `status` lines as fast as the socket takes
    /// them, never reads, and connects again when it is let go.
    private final class Flooder: @unchecked Sendable {
        let path: String
        private let stop = NSLock()
        private var stopped = false
        private(set) var connections = 0
        init(path: String) { self.path = path }

        var isStopped: Bool { stop.lock(); defer { stop.unlock() }; return stopped }
        func finish() { stop.lock(); stopped = true; stop.unlock() }

        func run() {
            let chunk = Array(String(repeating: "status\n", count: 500).utf8)
            while !isStopped {
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                guard fd >= 0 else { usleep(10_000); continue }
                if UnixSocketAddress.with(path, { connect(fd, $0, $1) }) == 0 {
                    connections += 1
                    while !isStopped {
                        let n = chunk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                        if n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { break }
                        if n < 0 { usleep(1000) }
                    }
                }
                close(fd)
                usleep(1000)
            }
        }
    }

    /// Notes when each `status` line of a `--json` run appears in its output file (read every
    /// 20 ms): the recorder's loop writes one a second, so a gap between them is its stall.
    private final class StatusWatch: @unchecked Sendable {
        let path: String
        private let lock = NSLock()
        private var stopped = false
        private var times: [Date] = []
        init(path: String) { self.path = path }

        func finish() -> [Date] { lock.lock(); defer { lock.unlock() }; stopped = true; return times }

        func run() {
            var seen = 0
            while true {
                lock.lock()
                if stopped { lock.unlock(); return }
                lock.unlock()
                let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
                // Only whole lines count: a line half written is seen on the next read.
                let count = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                    .filter { $0.contains("\"event\":\"status\"") }.count
                if count > seen {
                    lock.lock()
                    times += Array(repeating: Date(), count: count - seen)
                    lock.unlock()
                    seen = count
                }
                usleep(20_000)
            }
        }
    }

    private func residentKilobytes(_ pid: pid_t) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    func testSixteenFloodingClientsNeitherDelayTheRecorderNorGrowItsMemory() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let run = dir.path + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let env = RecordSupport.environment.merging(["XDG_RUNTIME_DIR": run]) { $1 }
        let jack = try JackServer.start(self, folder: dir.path)
        let input = RecordSupport.signal(frames: 48_000 * 60, channels: 1, bits: 16, seed: 24)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let take = dir.path + "/take.wav"
        let out = dir.path + "/out.jsonl"
        let child = try SpawnedChild([Tapedeck.binary, "record", "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                      "--bits", "16", "--out", take, "--json"],
                                     environment: env.merging(jack.environment) { $1 }, stdoutPath: out, stderrPath: dir.path + "/err.txt")
        let path = run + "/tapedeck/\(child.pid).sock"
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: path) { usleep(10_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        usleep(500_000)
        let before = residentKilobytes(child.pid)

        let watch = StatusWatch(path: out)
        Thread { watch.run() }.start()
        let flooders = (0..<16).map { _ in Flooder(path: path) }
        let threads = flooders.map { f in Thread { f.run() } }
        threads.forEach { $0.start() }
        defer { flooders.forEach { $0.finish() } }
        usleep(1_000_000)
        var slowest = 0.0
        for _ in 0..<12 {
            let started = Date()
            let status = try Tapedeck.run(["ctl", "status"], environment: env, timeout: 10)
            slowest = max(slowest, Date().timeIntervalSince(started))
            XCTAssertEqual(status.status, 0, status.stderr)
            XCTAssertTrue(status.stdout.contains("\"recording\""), status.stdout)
            usleep(500_000)
        }
        // A `ctl status` process takes 0.1–0.2 s on a quiet machine: ten times that.
        XCTAssertLessThan(slowest, 2.0, "a good client is answered within two seconds under the flood")
        let times = watch.finish()
        let gaps = zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
        print("status line gaps under the flood: \(gaps.map { (($0 * 100).rounded() / 100) })")
        XCTAssertGreaterThan(times.count, 8, "status lines kept coming under the flood")
        XCTAssertLessThan(gaps.max() ?? 99, 3.0,
                          "the status line keeps its 1 s pace under the flood (gaps: \(gaps.map { (($0 * 100).rounded() / 100) }))")
        let during = residentKilobytes(child.pid)
        XCTAssertLessThan(during - before, 20_000, "memory stays bounded (\(before) kB → \(during) kB)")

        let asked = Date()
        kill(child.pid, SIGTERM)
        let ended = child.wait(timeoutSeconds: 10)
        let took = Date().timeIntervalSince(asked)
        flooders.forEach { $0.finish() }
        if ended == nil { _ = child.kill(SIGKILL) }
        XCTAssertLessThan(took, 5.0, "SIGTERM ends the recorder within 5 s under the flood (0.1–0.3 s quiet)")
        XCTAssertEqual(ended.map { ($0 >> 8) & 0xff }, 0, (try? String(contentsOfFile: dir.path + "/err.txt", encoding: .utf8)) ?? "")
        XCTAssertGreaterThan(flooders.map(\.connections).reduce(0, +), 16, "the flooders were let go and came back (\(flooders.map(\.connections)))")

        let lines = RecordSupport.jsonLines((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
        let frames = try XCTUnwrap(lines.last { $0["event"] as? String == "done" }?["frames"] as? Int)
        let got = try RecordSupport.readInts(take, bits: 16)
        XCTAssertEqual(got.frames, frames)
        XCTAssertGreaterThan(frames, 48_000)
        XCTAssertTrue(got.values == Array(input[0..<frames]), "the take is bit for bit its input")
    }
}
