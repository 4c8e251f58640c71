import Foundation
import TapedeckCore
import TapedeckEngine

/// What the transport last heard of the device's latency.
final class TransportLatencyFollow {
    /// The device's ``AudioDevice/latencyGeneration`` when last read (-1: never).
    var generation = -1
    /// The round trip of input 1 then, as an overdub is placed.
    var roundTrip: TakeLatency?
}

extension Transport {
    /// Follows the device's latency: when it may have changed (JACK: a port connected or
    /// disconnected, a new buffer size), the round trip in use is read again and said when it
    /// moved, and each take of a running pass is moved to its own new figure from the next
    /// period on (``Engine/setTakeLatency(_:index:frames:)``; the take marks where). Control
    /// thread; cheap when nothing changed (one read of the generation).
    func followLatency() {
        let generation = engine.device.latencyGeneration
        guard generation != latencyFollow.generation else { return }
        let first = latencyFollow.generation < 0
        latencyFollow.generation = generation
        let now = engine.takeLatency(captureChannels: [1], playing: true)
        if !first, let before = latencyFollow.roundTrip, before.totalFrames != now.totalFrames, engine.configuration.captureChannels > 0 {
            notices.append("round trip now \(Transport.latencyWords(now, sampleRate: engine.configuration.sampleRate)) (was \(before.totalFrames) frames)")
        }
        latencyFollow.roundTrip = now
        let report = engine.device.latency
        if !report.unsureCaptureChannels.isEmpty || !report.unsurePlaybackChannels.isEmpty {
            let which = (report.unsureCaptureChannels.map { "input \($0)" } + report.unsurePlaybackChannels.map { "output \($0)" })
                .joined(separator: ", ")
            notices.append("\(report.backend) reports \(which) with latencies that differ (paths of different latency meet there): takes are placed by the longest")
        }
        guard let pass, options.playsSession else { return }
        for (k, take) in pass.takes.enumerated() {
            let moved = engine.takeLatency(captureChannels: take.captureChannels, playing: true)
            guard moved != take.latency else { continue }
            self.pass?.takes[k].latency = moved
            engine.setTakeLatency(pass.set, index: k, frames: moved.totalFrames)
        }
    }

    /// `356 frames (7.4 ms: capture 0 + playback 356 (JACK) + residual 0 + graph 0)`.
    static func latencyWords(_ latency: TakeLatency, sampleRate: Int) -> String {
        let ms = Double(latency.totalFrames) * 1000 / Double(max(sampleRate, 1))
        let parts = latency.text.split(separator: "=", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return "\(latency.totalFrames) frames (\(String(format: "%.1f", ms)) ms: \(parts))"
    }
}
