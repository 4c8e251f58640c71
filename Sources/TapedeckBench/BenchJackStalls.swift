import CJACKProbe
import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTransport
import TapedeckDevices
#if canImport(Glibc)
import Glibc
#endif

/// JACK under load: a take of another client's sine (played by JACK's transport frame) on a
/// private `jackd -d dummy` server, with a busy process per core, a 60 ms stall of Tapedeck's
/// own thread injected and the server itself stopped for 200 ms (SIGSTOP); the take judged by
/// the sine's phase at every frame. Goal: its silence is exactly the frames the xruns were
/// said to cost, and not one sample is off its frame (what JACK's clock could not tell at
/// once was held until it could; see `RenderCore.deviceHolds`).
public enum BenchJackStalls {
    public static func run(seconds: Double) throws -> BenchResult {
        let server = try PrivateServer(periodFrames: 256)
        defer { server.stop() }
        let folderPath = NSTemporaryDirectory() + "tapedeck-bench-stalls-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: folderPath) }
        let folder = SessionFolder(path: folderPath + "/s.tapedeck")
        var session = Session(sampleRate: BenchJack.sampleRate)
        session.tracks.append(Track(name: "Vocal", inputChannels: [1], armed: true))
        try folder.create(session)
        guard let source = td_jack_probe_open("source", 0, 1, 997, 0.25, 0, 48000) else {
            throw BenchError("the benchmark's own JACK client could not open")
        }
        defer { td_jack_probe_close(source) }
        var options = TransportOptions()
        options.engine.stallAtFrame = 96000
        options.engine.stallMilliseconds = 60
        let device = try JACKDevice(request: JACKRequest(
            deviceName: "jack", clientName: "tapedeck", ports: JACKPortLayout.named(inputs: 1, outputs: 2, tracks: [("Vocal", [1])]),
            connection: .none, sampleRate: BenchJack.sampleRate, transportSync: true, timebaseMaster: false, tempoMap: nil))
        let transport = try Transport(session: session, folder: folder, device: device, deviceName: "jack", options: options)
        defer { transport.close() }
        guard td_jack_probe_connect(source, "source:out_1", "tapedeck:Vocal_in") == 0 else { throw BenchError("jack_connect failed") }
        let frames = Int64(max(seconds, 3) * Double(BenchJack.sampleRate))
        let hogs = BenchHogs(count: ProcessInfo.processInfo.activeProcessorCount)
        defer { hogs.stop() }
        let load0 = BenchHogs.loadAverage()
        var request = RecordRequest(fromFrame: 0)
        request.maxFrames = frames
        request.stopsWhenDone = true
        _ = try transport.record(request)
        let deadline = Date().addingTimeInterval(Double(frames) / Double(BenchJack.sampleRate) + 20)
        while transport.snapshot().positionFrame <= 0 && Date() < deadline { usleep(20_000) }
        while transport.snapshot().positionFrame < 2 * Int64(BenchJack.sampleRate) && Date() < deadline { usleep(20_000) }
        kill(server.pid, SIGSTOP)
        usleep(200_000)
        kill(server.pid, SIGCONT)
        while transport.snapshot().state != .stopped && Date() < deadline { usleep(20_000) }
        hogs.stop()
        let load = max(load0, BenchHogs.loadAverage())
        guard let take = transport.collectFinishedTakes().first else { throw BenchError("no take was recorded") }
        var recorded: [Float] = []
        try AudioFileReader(path: folder.absolutePath(of: take.region.file)).forEachBlock { channels, n in
            recorded += UnsafeBufferPointer(start: channels[0], count: n)
        }
        let xruns = transport.events.filter { $0.kind == .deviceXrun }
        // What xruns cost inside the take (one told while the transport stood, before JACK's
        // rolled, or after the take's end costs the take nothing; one whose lost frames run
        // past the take's end costs it only the frames up to there: the take stops at its length).
        let lost = xruns.filter { !$0.whileStopped && $0.frame >= 0 && $0.frame < Int64(recorded.count) }
            .reduce(Int64(0)) { $0 + min($1.frames, Int64(recorded.count) - $1.frame) }
        // Silence is runs of zeros: a lone zero, or a zero where the sine itself is near
        // zero, is a frame like any other (the sine never holds 0 for eight frames; a frame
        // lost where the sine crossed zero was once left out of the count, 7167 of 7168).
        var silent = 0, beside = 0, elsewhere = 0, run = 0
        var inSilence = [Bool](repeating: false, count: recorded.count)
        for k in 0...recorded.count {
            if k < recorded.count && recorded[k] == 0 { run += 1; continue }
            if run >= 8 {
                silent += run
                for j in (k - run)..<k { inSilence[j] = true }
            }
            run = 0
        }
        for (k, s) in recorded.enumerated() {
            if inSilence[k] { continue }
            let want = Float(0.25 * cos(2 * Double.pi * 997 * Double(k) / Double(BenchJack.sampleRate)))
            guard abs(s - want) >= 1e-4 else { continue }
            let frame = Int64(k) + take.region.timelineStartFrame
            if xruns.contains(where: { frame >= $0.frame - 768 && frame < $0.frame + $0.frames + 768 }) { beside += 1 } else { elsewhere += 1 }
        }
        return BenchResult(name: "JACK take under load, a 60 ms stall and a 200 ms server stop",
                           measured: "\(xruns.count) xruns, \(lost) frames lost, \(silent) silent; \(elsewhere + beside) off their frame (\(beside) beside an xrun)",
                           peer: "load \(BenchSupport.fixed(load, 1)) on \(ProcessInfo.processInfo.activeProcessorCount) cores",
                           ratio: "\(elsewhere + beside) misplaced",
                           goal: "silence = frames lost; 0 off their frame",
                           met: Int64(silent) == lost && elsewhere + beside == 0 && recorded.count == Int(frames))
    }
}

/// Busy processes at normal priority, one per core, as on a laptop building something.
final class BenchHogs {
    private var pids: [pid_t] = []

    init(count: Int) {
        for _ in 0..<max(1, count) {
            var pid: pid_t = 0
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup("while :; do :; done"), nil]
            defer { argv.forEach { free($0) } }
            if posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 { pids.append(pid) }
        }
        usleep(300_000)
    }

    func stop() {
        for pid in pids {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        pids = []
    }

    /// The one-minute load average.
    static func loadAverage() -> Double {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) > 0 ? loads[0] : 0
    }
}
