import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckDevices

/// Recording headroom: `--record N` tracks record at once, each from its own input of an
/// N-channel device, while the engine benchmark's 128 tracks play — on the offline clock
/// *paced* in real time (64-frame periods, as a real interface would call), so the capture
/// writer and the playback reader have exactly the time they would have. DSP load is the
/// audio thread's CPU time per period ÷ the period; dropped frames are input the capture
/// rings could not hold (goal 0: the audio thread never waits for the disk, so a slow
/// writer would show here). Takes are written to the bench folder and deleted.
public enum BenchRecording {
    static let goalP999 = 1.0

    /// Runs once for `seconds` and reports.
    public static func run(folder: String, size: BenchEngine.Size, recordTracks: Int) throws -> BenchResult {
        let sessionFolder = try BenchEngine.prepare(folder: folder, size: size)
        var session = try sessionFolder.load()
        let first = session.tracks.count
        for k in 0..<recordTracks {
            session.tracks.append(Track(name: "rec\(k + 1)", inputChannels: [k + 1], armed: true, monitoring: .off))
        }
        let spec = try GraphSpec(session: session, folder: sessionFolder)
        let rate = BenchEngine.sampleRate
        let frames = Int64((size.seconds * Double(rate)).rounded())
        let periods = Int((frames + Int64(size.periodFrames) - 1) / Int64(size.periodFrames))
        let device = OfflineClockDevice(sampleRate: rate, captureChannels: recordTracks, playbackChannels: 2,
                                        periodFrames: size.periodFrames, capacityPeriods: 2 * periods + 4096, paced: true)
        var options = EngineOptions()
        options.playbackRingSeconds = 2
        let engine = Engine(device: device, options: options)
        try engine.start(spec, position: 0)
        let takeFolder = folder + "/recording-takes"
        try FileManager.default.createDirectory(atPath: takeFolder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: takeFolder) }
        let requests = (0..<recordTracks).map { k in
            TakeRequest(track: first + k, channelCount: 1, path: "\(takeFolder)/take\(k + 1).wav", container: .wav, encoding: .int24)
        }
        let set = try engine.startTakes(requests, gate: TakeGate(recordPoint: 0, maxFrames: frames))
        engine.play()
        var rolledFrom: Int64?
        var rolledTo: Int64 = 0
        while engine.isRunning && !set.hasEnded {
            let s = engine.status()
            if s.transport == .rolling && rolledFrom == nil { rolledFrom = s.deviceFrame }
            rolledTo = s.deviceFrame
            usleep(2000)
        }
        let outcomes = engine.finish(set)
        let status = engine.status()
        engine.close()
        let firstPeriod = Int((rolledFrom ?? 0) / Int64(size.periodFrames))
        let lastPeriod = Int(rolledTo / Int64(size.periodFrames))
        var loads = device.cpuLoads()
        if firstPeriod < lastPeriod && lastPeriod <= loads.count { loads = Array(loads[firstPeriod..<lastPeriod]) }
        let p50 = BenchSupport.quantile(loads, 0.5), p999 = BenchSupport.quantile(loads, 0.999)
        let dropped = outcomes.reduce(0) { $0 + $1.droppedFrames }
        let complete = outcomes.allSatisfy { $0.frameCount == frames && $0.error == nil }
        func pct(_ v: Double) -> String { "\(BenchSupport.fixed(v * 100, 1)) %" }
        return BenchResult(
            name: "engine recording (\(recordTracks) tracks from \(recordTracks) ch while \(size.tracks) \(size.channelWord) tracks × "
                + "\(size.chain) play, \(size.periodFrames)-frame periods, paced, \(BenchSupport.fixed(size.seconds, 0)) s)",
            measured: "DSP load p50 \(pct(p50)), p99.9 \(pct(p999)); \(dropped) dropped frames",
            peer: "no peer; \(status.xrunCount) xruns, \(status.underrunFrames) playback frames late, capture ring high water "
                + "\(status.captureRingHighWaterFrames) frames, takes \(complete ? "complete" : "INCOMPLETE")",
            ratio: "—", goal: "p99.9 < 100 %, 0 dropped",
            met: p999 < goalP999 && dropped == 0 && complete)
    }
}
