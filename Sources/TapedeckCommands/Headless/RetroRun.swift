import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckTransport
import TapedeckRemote

/// `record --retro SECONDS`: listens without recording (playing the session with `--play`),
/// keeping the last SECONDS of every recorded track's input in memory; every SIGUSR1 turns
/// them into takes placed where they were played. Ends on SIGINT/SIGTERM/SIGHUP or --duration.
struct RetroRun {
    let transport: Transport
    var target: RecordTarget
    let json: Bool
    let seconds: Double
    /// OSC surfaces (`--osc`): stop ends the run, as on the control socket.
    var osc: OSCServer? = nil

    /// Runs until stopped; returns how many keeps made takes.
    mutating func run(maxFrames: Int64?, play: Bool, from: Int64) throws -> Int {
        StopSignals.installKeepSignal()
        let rate = transport.session.sampleRate
        if play { transport.play(from: from) } else { transport.locate(to: from) }
        var seen = StopSignals.keepRequests
        var kept = 0
        if !json {
            Terminal.err("listening: the last \(TimeText.clock(frames: Int64(seconds * Double(rate)), sampleRate: rate)) of input are kept; kill -USR1 \(getpid()) keeps them as a take\n")
        }
        var line = StatusLine(label: "listening", file: target.isFileTake ? "" : target.folder?.path ?? "", sampleRate: rate, json: json)
        let started = transport.engine.status().deviceFrame
        let remote = HeadlessRemote(role: .listen, transport: transport, sessionPath: target.folder?.path, json: json)
        defer { remote.close() }
        let surfaces = HeadlessOSC.serving(osc, remote: remote, json: json)
        while !StopSignals.requested && !remote.stopRequested && transport.engine.isRunning {
            if let maxFrames, transport.engine.status().deviceFrame - started >= maxFrames { break }
            let requests = StopSignals.keepRequests
            if requests != seen {
                seen = requests
                kept += try keep(number: kept + 1)
            }
            let snap = transport.snapshot()
            line.update(snap, levels: target.tracks.flatMap { $0 < snap.trackLevels.count ? snap.trackLevels[$0] : [] }, events: [],
                        elapsedFrames: transport.engine.status().deviceFrame - started)
            surfaces?.service(snap)
            remote.wait(milliseconds: 20)
        }
        // A keep asked for at the very end still counts.
        if StopSignals.keepRequests != seen { kept += try keep(number: kept + 1) }
        line.finish()
        transport.stop()
        return kept
    }

    /// Writes the kept seconds to the next take files and places them; 1 when something was kept.
    private mutating func keep(number: Int) throws -> Int {
        var paths: [Int: String] = [:]
        if target.isFileTake, let out = transport.session.tracks.indices.first {
            paths[out] = number == 1 ? target.outPath : TakeFiles.numbered(target.outPath, number)
        }
        let takes: [FinishedTake]
        do { takes = try transport.keepRetro(paths: paths) } catch let e as TransportError {
            if !json { Terminal.err("\r\(e.description)\n") }
            return 0
        }
        _ = transport.collectFinishedTakes()
        // A track made for the take is saved with its first kept take, not before: a run that
        // keeps nothing leaves the session as it was.
        if !takes.isEmpty { try target.saveNewTrack() }
        try target.place(takes)
        let rate = transport.session.sampleRate
        for take in takes {
            if json {
                // Where it is silent for device time that passed unheard (xruns), as `done` says a take's.
                let markers: [[String: Any]] = take.markers.map { ["name": $0.name, "frame": $0.frame] }
                StatusLine.emitLine(["event": "kept", "file": take.region.file, "frames": take.region.lengthFrames,
                                     "timeline_frame": take.region.timelineStartFrame, "markers": markers])
            } else {
                let lost = take.markers.map { "\($0.name) at \(TimeText.clock(frames: $0.frame, sampleRate: rate))" }
                Terminal.err("\rkept \(TimeText.clock(frames: take.region.lengthFrames, sampleRate: rate)) played at \(TimeText.clock(frames: take.region.timelineStartFrame, sampleRate: rate)) → \(take.region.file.terminalSafe)\(lost.isEmpty ? "" : " (silent where \(lost.joined(separator: ", ")))")\n")
            }
        }
        return takes.isEmpty ? 0 : 1
    }
}
