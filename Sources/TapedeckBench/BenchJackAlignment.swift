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

/// Overdub alignment on JACK: on private `jackd -d dummy` servers at 64, 256 and 1024 frames,
/// a session plays single-frame clicks while an armed track records them back through a
/// loopback cable that reports its latency as a sound card does (`td_jack_loop_open`), its
/// ports connected when the client opens and, again, patched after it started. Each take is
/// judged by where every click came back. Goal: 0 frames off in every take (the one latency
/// model: capture latency + playback latency as JACK reports them now + the residual).
public enum BenchJackAlignment {
    static let clicks: [Int64] = [33_331, 41_017, 52_009, 60_013, 71_993, 80_021]
    static let delayFrames = 100

    public static func run() throws -> BenchResult {
        var worst: Int64 = 0
        var cells: [String] = []
        var judged = 0, expected = 0
        for period in BenchJack.periods {
            for patched in [false, true] {
                let offsets = try take(periodFrames: period, patched: patched)
                judged += offsets.count
                expected += clicks.count
                let off = offsets.map { abs($0) }.max() ?? 0
                worst = max(worst, off)
                cells.append("\(period)\(patched ? "p" : "c"): \(offsets.isEmpty ? "none heard" : "\(off)")")
            }
        }
        return BenchResult(name: "JACK overdub alignment, 64/256/1024 frames × connected/patched",
                           measured: "worst \(worst) frames off (\(cells.joined(separator: ", ")))",
                           peer: "\(judged) of \(expected) clicks judged",
                           ratio: "\(worst) frames", goal: "0 frames off in every take", met: worst == 0 && judged * 10 >= expected * 7)
    }

    /// One take through the loopback on a server at `periodFrames`: where each click landed
    /// from its frame.
    static func take(periodFrames: Int, patched: Bool) throws -> [Int64] {
        let server = try PrivateServer(periodFrames: periodFrames)
        defer { server.stop() }
        guard let loop = td_jack_loop_open("tdloop", 1, delayFrames, 1, 0) else { throw BenchError("the loopback client could not open") }
        defer { td_jack_loop_close(loop) }
        let rate = BenchJack.sampleRate
        let path = NSTemporaryDirectory() + "tapedeck-bench-align-\(getpid())-\(periodFrames)\(patched ? "p" : "c")"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let folder = SessionFolder(path: path + "/s.tapedeck")
        var session = Session(sampleRate: rate)
        session.tracks = [Track(name: "Clicks", inputChannels: [2]), Track(name: "Vocal", inputChannels: [1], armed: true)]
        try folder.create(session)
        let frames = 2 * rate
        var clickTrack = [Float](repeating: 0, count: frames)
        for c in clicks { clickTrack[Int(c)] = 0.5 }
        let format = AudioFileFormat(container: .wav, encoding: .float32, sampleRate: rate, channelCount: 1)
        let writer = try AudioFileWriter(path: folder.absolutePath(of: "audio/clicks.wav"), format: format)
        try clickTrack.withUnsafeBufferPointer { b in try writer.write([b.baseAddress!], frameCount: frames) }
        try writer.close()
        session.tracks[0].regions = [Region(file: "audio/clicks.wav", timelineStartFrame: 0, lengthFrames: Int64(frames))]
        try folder.save(session)
        let device = try JACKDevice(request: JACKRequest(
            deviceName: "jack", clientName: "tapedeck",
            ports: JACKPortLayout.named(inputs: 1, outputs: 2, tracks: [("Vocal", [1])]),
            connection: patched ? .none : .pattern("tdloop:"), sampleRate: rate, transportSync: true, timebaseMaster: false, tempoMap: nil))
        let transport = try Transport(session: session, folder: folder, device: device, deviceName: "jack")
        defer { transport.close() }
        var request = RecordRequest(fromFrame: 0)
        request.maxFrames = Int64(frames)
        request.stopsWhenDone = true
        _ = try transport.record(request)
        if patched {
            // As a patchbay does, once the take runs (before the first click).
            try server.jack("jack_connect", "tapedeck:out_L", "tdloop:in_1")
            try server.jack("jack_connect", "tdloop:out_1", "tapedeck:Vocal_in")
        }
        // The take begins once the graph is built and JACK's transport rolls: until it has
        // begun, "stopped" is the state before it (a debug build once read it so, and
        // measured nothing), not its end.
        let deadline = Date().addingTimeInterval(20)
        var began = false
        while Date() < deadline {
            td_jack_loop_service(loop)
            let state = transport.snapshot().state
            if state != .stopped { began = true } else if began { break }
            usleep(20_000)
        }
        guard let take = transport.collectFinishedTakes().first else { throw BenchError("no take was recorded") }
        var recorded: [Float] = []
        try AudioFileReader(path: folder.absolutePath(of: take.region.file)).forEachBlock { channels, n in
            recorded += UnsafeBufferPointer(start: channels[0], count: n)
        }
        var offsets: [Int64] = []
        for c in clicks {
            let at = Int(c - take.region.timelineStartFrame + take.region.sourceOffsetFrame)
            let lo = max(0, at - 1500), hi = min(recorded.count, at + 1500)
            guard hi > lo else { continue }
            var loudest = lo
            for i in lo..<hi where abs(recorded[i]) > abs(recorded[loudest]) { loudest = i }
            if abs(recorded[loudest]) > 0.1 { offsets.append(Int64(loudest - at)) }
        }
        return offsets
    }
}
