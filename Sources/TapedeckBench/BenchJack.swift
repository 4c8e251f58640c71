import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckTransport
import TapedeckDevices
#if canImport(Glibc)
import Glibc
#endif

/// JACK round trip: how much delay Tapedeck adds between a JACK input port and a JACK output
/// port while it monitors an armed track, measured by JACK's own `jack_iodelay` on a private
/// `jackd -d dummy` server — first looped straight back (JACK's own loop: one period, since a
/// client's output reaches the start of the graph one cycle later), then looped through
/// Tapedeck (`jack_delay:out → tapedeck:In_in`, `tapedeck:out_L → jack_delay:in`). Goal: the
/// same number of frames both ways, i.e. Tapedeck renders its input to its output in the
/// cycle it arrives, with no buffering of its own.
public enum BenchJack {
    /// Server buffer sizes measured, one private server each.
    static let periods = [64, 256, 1024]
    static let sampleRate = 48000

    public static func run(seconds: Double) throws -> [BenchResult] {
        for tool in ["jackd", "jack_iodelay", "jack_connect", "jack_wait", "stdbuf"] where BenchSupport.which(tool) == nil {
            throw BenchError("\(tool) is not installed (apt-get install jackd2 coreutils)")
        }
        return try periods.map { try measure(periodFrames: $0, seconds: seconds) }
    }

    /// One server at `periodFrames`: JACK's own loop, then the loop through Tapedeck.
    static func measure(periodFrames: Int, seconds: Double) throws -> BenchResult {
        let server = try PrivateServer(periodFrames: periodFrames)
        defer { server.stop() }
        let device = try JACKDevice(request: JACKRequest(
            deviceName: "jack", clientName: "tapedeck",
            ports: JACKPortLayout.named(inputs: 1, outputs: 2, tracks: [("In", [1])]),
            connection: .none, sampleRate: sampleRate, transportSync: false, timebaseMaster: false, tempoMap: nil))
        var session = Session(sampleRate: sampleRate)
        session.tracks.append(Track(name: "In", inputChannels: [1], armed: true, monitoring: .input))
        let transport = try Transport(session: session, folder: nil, device: device, deviceName: "jack")
        defer { transport.close() }

        let log = NSTemporaryDirectory() + "tapedeck-iodelay-\(getpid())-\(periodFrames).txt"
        defer { unlink(log) }
        // stdbuf: jack_iodelay prints with printf and is killed, so its output must not wait in a buffer.
        let iodelay = try server.spawn(["stdbuf", "-o0", "jack_iodelay"], stdout: log)
        defer { server.terminate(iodelay) }
        try server.waitForPort("jack_delay:out")

        try server.jack("jack_connect", "jack_delay:out", "jack_delay:in")
        let own = try latestRoundTrip(log: log, after: seconds)
        try server.jack("jack_disconnect", "jack_delay:out", "jack_delay:in")
        try server.jack("jack_connect", "jack_delay:out", "tapedeck:In_in")
        try server.jack("jack_connect", "tapedeck:out_L", "jack_delay:in")
        let through = try latestRoundTrip(log: log, after: seconds)
        // jack_iodelay reads a fraction of a frame either way on a busy machine: shown to a
        // tenth, and a tenth below zero is no negative zero.
        let added = ((through - own) * 10).rounded() / 10 + 0
        let sign = added < 0 ? "" : "+"
        return BenchResult(name: "JACK round trip, \(periodFrames)-frame period",
                           measured: "\(BenchSupport.fixed(through, 1)) frames through Tapedeck",
                           peer: "\(BenchSupport.fixed(own, 1)) frames jack_iodelay looped",
                           ratio: "\(sign)\(BenchSupport.fixed(added, 1)) frames",
                           goal: "+0 frames (no buffering beyond JACK's period)", met: abs(added) < 0.5)
    }

    /// Waits `seconds` (jack_iodelay needs a moment to lock on) and reads the round trip
    /// jack_iodelay printed last ("   256.000 frames …"), from what it printed during the
    /// wait only. A loop carrying no signal ("Signal below threshold…" last) measures nothing.
    static func latestRoundTrip(log: String, after seconds: Double) throws -> Double {
        let before = FileManager.default.contents(atPath: log)?.count ?? 0
        usleep(UInt32(max(1, seconds) * 1_000_000))
        let bytes = FileManager.default.contents(atPath: log) ?? Data()
        let fresh = String(decoding: bytes.count > before ? bytes[before...] : Data(), as: UTF8.self)
        let lines = fresh.split(separator: "\n").filter { $0.contains("total roundtrip latency") || $0.contains("Signal below") }
        guard let last = lines.last, last.contains("total roundtrip latency"),
              let frames = last.split(separator: " ").first.flatMap({ Double($0) }) else {
            throw BenchError("jack_iodelay measured no round trip (the loop carried no signal): \(fresh.suffix(120).split(separator: "\n").last ?? "nothing printed")")
        }
        return frames
    }
}

/// A `jackd -d dummy` server of the benchmark's own, named after the process, that clients of
/// this process (JACK_DEFAULT_SERVER) and the JACK tools it spawns use.
struct PrivateServer {
    let name: String
    let pid: pid_t

    init(periodFrames: Int) throws {
        name = "tdbench\(getpid())p\(periodFrames)"
        setenv("JACK_DEFAULT_SERVER", name, 1)
        setenv("JACK_NO_START_SERVER", "1", 1)
        setenv("JACK_NO_AUDIO_RESERVATION", "1", 1)
        let log = "/tmp/jackd-\(name).log"
        pid = try Self.spawn(["jackd", "-n", name, "-d", "dummy", "-r", "\(BenchJack.sampleRate)", "-p", "\(periodFrames)",
                              "-C", "2", "-P", "2"], stdout: log)
        let waiter = try Self.spawn(["jack_wait", "-s", name, "-w", "-t", "10"], stdout: "/dev/null")
        var status: Int32 = 0
        waitpid(waiter, &status, 0)
        guard status == 0 else {
            stop()
            throw BenchError("the private JACK server did not start (see \(log))")
        }
    }

    /// Starts `arguments` (found on PATH) with stdout to `stdout`, stderr to /dev/null.
    static func spawn(_ arguments: [String], stdout: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
        guard rc == 0 else { throw BenchError("\(arguments[0]) could not start: \(String(cString: strerror(rc)))") }
        return pid
    }

    func spawn(_ arguments: [String], stdout: String) throws -> pid_t { try Self.spawn(arguments, stdout: stdout) }

    /// Runs a JACK tool (`jack_connect A B`) to its end; throws when it fails.
    func jack(_ tool: String, _ arguments: String...) throws {
        var status: Int32 = 0
        waitpid(try spawn([tool] + arguments, stdout: "/dev/null"), &status, 0)
        guard status == 0 else { throw BenchError("\(tool) \(arguments.joined(separator: " ")) failed") }
    }

    /// Waits up to five seconds for a client's port to appear in `jack_lsp`.
    func waitForPort(_ port: String) throws {
        let listing = NSTemporaryDirectory() + "tapedeck-lsp-\(getpid()).txt"
        defer { unlink(listing) }
        for _ in 0..<50 {
            var status: Int32 = 0
            waitpid(try spawn(["jack_lsp"], stdout: listing), &status, 0)
            let ports = (try? String(contentsOfFile: listing, encoding: .utf8)) ?? ""
            if ports.split(separator: "\n").contains(Substring(port)) { return }
            usleep(100_000)
        }
        throw BenchError("\(port) did not appear on the JACK server")
    }

    func terminate(_ child: pid_t) {
        kill(child, SIGTERM)
        var status: Int32 = 0
        waitpid(child, &status, 0)
    }

    func stop() {
        terminate(pid)
        unsetenv("JACK_DEFAULT_SERVER")
    }
}
