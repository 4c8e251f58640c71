import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO

/// `record --retro SECONDS`: listens without recording, keeping the last SECONDS of input in
/// memory; every SIGUSR1 turns them into a take placed where it was played (on the session
/// track when recording into a session). Ends on SIGINT/SIGTERM/SIGHUP or --duration.
struct RetroListener {
    let target: TakeTarget
    let engine: Engine
    let channels: [Int]
    let encoding: SampleEncoding
    let json: Bool
    let line: StatusLine

    /// Runs until stopped; returns how many takes were kept.
    func run(maxFrames: Int64?) throws -> Int {
        StopSignals.installKeepSignal()
        var seen = StopSignals.keepRequests
        var kept = 0
        var status = line
        let rate = engine.configuration.sampleRate
        Terminal.err(json ? "" : "listening: the last \(TimeText.clock(frames: Int64(engine.retroBuffer?.keepFrames ?? 0), sampleRate: rate)) of input are kept; kill -USR1 \(getpid()) keeps them as a take\n")
        try engine.start()
        while !engine.isDone {
            if StopSignals.requested { engine.stop() }
            if let maxFrames, (engine.retroBuffer?.framesWritten ?? 0) >= maxFrames { engine.stop() }
            let requests = StopSignals.keepRequests
            if requests != seen {
                seen = requests
                try keep(number: kept + 1)
                kept += 1
            }
            let s = engine.status()
            status.update(s, newXruns: engine.drainXruns(), elapsedFrames: engine.retroBuffer?.framesWritten ?? 0)
            usleep(20_000)
        }
        // A keep asked for at the very end still counts.
        if StopSignals.keepRequests != seen { try keep(number: kept + 1); kept += 1 }
        let summary = try engine.finish()
        status.finish()
        if let error = summary.error { throw RecordFailure(message: error) }
        return kept
    }

    /// Writes the kept seconds to the next take file and places it.
    private func keep(number: Int) throws {
        guard let buffer = engine.retroBuffer else { return }
        let path = number == 1 ? target.audioPath : RetroListener.numbered(target.audioPath, number)
        let format = AudioFileFormat(container: target.container, encoding: encoding,
                                     sampleRate: engine.configuration.sampleRate, channelCount: channels.count)
        let (first, count) = try buffer.keep(to: path, format: format,
                                             metadata: target.metadata(device: engine.configuration.name, deviceChannels: channels,
                                                                       timelineFrame: engine.retroTimelineOrigin,
                                                                       latencyFrames: engine.takeLatencyFrames))
        let timelineStart = engine.retroTimelineOrigin + first
        if let folder = target.folder, let index = target.trackIndex, count > 0 {
            var session = try folder.load()
            if session.tracks.indices.contains(index) {
                let relative = "audio/" + (path as NSString).lastPathComponent
                // A part played before the timeline's start keeps only what lies after it.
                let skip = max(0, -timelineStart)
                if Int64(count) > skip {
                    session.tracks[index].regions.append(Region(file: relative, timelineStartFrame: timelineStart + skip,
                                                                sourceOffsetFrame: skip, lengthFrames: Int64(count) - skip))
                    try folder.save(session)
                }
            }
        }
        let rate = engine.configuration.sampleRate
        if json {
            line.emit(["event": "kept", "file": path, "frames": count, "timeline_frame": timelineStart])
        } else {
            Terminal.err("\rkept \(TimeText.clock(frames: Int64(count), sampleRate: rate)) played at \(TimeText.clock(frames: max(0, timelineStart), sampleRate: rate)) → \(path)\n")
        }
    }

    /// `take.wav` → `take-2.wav`.
    static func numbered(_ path: String, _ n: Int) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return path + "-\(n)" }
        return String(path[..<dot]) + "-\(n)" + String(path[dot...])
    }
}
