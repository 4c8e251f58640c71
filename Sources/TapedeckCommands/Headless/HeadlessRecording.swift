import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTransport
import TapedeckRemote

/// `record`'s run once the pass started: the banner or JSON lines while it records, then the
/// takes placed on their tracks and the report.
struct HeadlessRecording {
    let transport: Transport
    let target: RecordTarget
    let start: RecordingStart
    let json: Bool
    let device: DeviceConfiguration
    let monitor: MonitoringMode
    /// OSC surfaces (`--osc`), served as the control socket is.
    var osc: OSCServer? = nil

    /// A take's placement as JSON: its total and where each part came from.
    static func json(_ l: TakeLatency) -> [String: Any] {
        ["frames": l.totalFrames, "backend": l.backend, "capture_frames": l.captureFrames, "playback_frames": l.playbackFrames,
         "residual_frames": l.residualFrames, "graph_frames": l.outputFrames, "playing": l.playing]
    }

    func run() throws -> Int32 {
        let rate = device.sampleRate
        var line = StatusLine(label: "recording", file: start.paths.first ?? "", sampleRate: rate, json: json)
        let channels = target.tracks.map { transport.session.tracks[$0].inputChannels }
        if json {
            line.emit(["event": "start", "device": device.name, "sample_rate": rate, "device_channels": device.captureChannels,
                       "channels": channels.first ?? [], "tracks": target.tracks.map { $0 + 1 },
                       "format": device.captureFormat?.rawValue ?? "", "period_frames": device.periodFrames,
                       "periods": device.periodCount, "latency_frames": start.latencyFrames,
                       "latency": start.latencies.map { Self.json($0) }, "file": start.paths.first ?? "",
                       "files": start.paths, "monitor": monitor.rawValue, "monitor_latency_frames": start.monitorLatencyFrames ?? 0,
                       // The MIDI ports a MIDI take listens on (the line the text output prints).
                       "midi": target.tracks.contains { transport.session.tracks[$0].isMIDI } ? transport.midiInputLine : NSNull()])
        } else {
            Terminal.err("recording from \(device)\n")
            if target.tracks.count > 1 { Terminal.err("recording \(target.tracks.count) tracks at once: \(target.tracks.map { "\($0 + 1)" }.joined(separator: ", "))\n") }
            if target.tracks.contains(where: { transport.session.tracks[$0].isMIDI }) {
                Terminal.err(transport.midiInputLine + "\n")
            }
        }
        var seen = 0
        var failuresSeen = transport.takeFailures.count
        var written = HeadlessAutomation()
        var last = transport.snapshot()
        say(last)
        // `tapedeck ctl` is answered between status lines; its stop is Ctrl-C's.
        let remote = HeadlessRemote(role: .record, transport: transport, sessionPath: target.folder?.path, json: json)
        defer { remote.close() }
        let surfaces = HeadlessOSC.serving(osc, remote: remote, json: json)
        while transport.isRecording {
            if StopSignals.requested { transport.stop() }
            last = transport.snapshot()
            say(last)
            let events = Array(transport.events.dropFirst(seen))
            seen = transport.events.count
            // `record` rolls only to record: rolling on after its pass ended (the disk stopped
            // the take, and an unpaced device rendered ahead of this line) is not playing.
            var shown = last
            if shown.state == .playing { shown.state = .stopped }
            line.update(shown, levels: levels(last), events: events, elapsedFrames: transport.recordedFrames)
            sayFailures(from: &failuresSeen)
            written.collect(from: transport)
            surfaces?.service(last)
            remote.wait(milliseconds: 50)
        }
        surfaces?.service(last)  // the surfaces see it stop (the state comes from the engine)
        remote.close()
        sayFailures(from: &failuresSeen)
        // The pass's end hands over what controllers wrote while it played.
        _ = transport.snapshot()
        written.collect(from: transport)
        let takes = transport.collectFinishedTakes()
        let frames = takes.map(\.region.lengthFrames).max() ?? 0
        let failures = transport.lastPassFailures
        // The banner's last word is what happened: a take was recorded (or the disk stopped it).
        var final = last
        if frames > 0 { final.state = failures.isEmpty ? .recording : .stopped }
        line.update(final, levels: levels(last), events: Array(transport.events.dropFirst(seen)), elapsedFrames: frames, force: true)
        line.finish()
        let lanes: [String]
        do { lanes = try target.place(takes, automation: written.writes) } catch {
            // The takes are whole and still marked: `recover` (or the next open) places them.
            let names = takes.map { $0.region.file.terminalSafe }.joined(separator: ", ")
            throw RecordFailure(message: "\(names): recorded and kept, but not placed on \(takes.count == 1 ? "its track" : "their tracks"): \(error); 'tapedeck recover' places \(takes.count == 1 ? "it" : "them")")
        }
        HeadlessAutomation.say(lanes, json: json)
        let problems = transport.lastPassProblems
        let files = takes.map { take -> (path: String, frames: Int64, channels: Int) in
            let path = target.folder?.absolutePath(of: take.region.file) ?? take.region.file
            let reader = try? AudioFileReader(path: path, blockFrames: 16)
            return (path, reader?.frameCount ?? 0, reader?.channelCount ?? 0)
        }
        // A split take is one finished take per piece: its length is theirs together.
        let firstTrack = takes.first?.trackIndex
        let firstTake = zip(takes, files).filter { $0.0.trackIndex == firstTrack }.map(\.1)
        let takeFrames = firstTake.reduce(Int64(0)) { $0 + $1.frames }
        // Where input was lost (xruns, dropped spans): marked on the timeline and in the takes.
        let marks = takes.flatMap(\.markers).sorted { $0.frame < $1.frame }
        let session = transport.session
        if json {
            var pieces: [String: Any] = [:]
            if firstTake.count > 1 { pieces["pieces"] = firstTake.map(\.path) }
            if let m = transport.lastPassMirrors.first {
                pieces["mirror"] = ["file": m.path, "frames": m.frameCount, "pieces": m.pieceCount, "dropped_frames": m.droppedFrames,
                                    "error": m.error.map { $0 as Any } ?? NSNull()] as [String: Any]
            }
            line.emit(pieces.merging(["event": "done", "frames": takeFrames, "xruns": line.xruns.count, "xrun_frames": line.xruns,
                       "file": start.paths.first ?? "", "files": start.paths, "latency_frames": transport.lastPassLatencies.first?.totalFrames ?? start.latencyFrames,
                       "latency": transport.lastPassLatencies.map { Self.json($0) },
                       "dropped_frames": last.droppedFrames, "disk_full": failures.contains { $0.isDiskFull },
                       "markers": marks.map { ["name": $0.name, "frame": $0.frame] as [String: Any] },
                       "error": problems.isEmpty ? NSNull() : problems.joined(separator: "; ") as Any]) { $1 })
        } else if takes.isEmpty {
            // A take whose own disk kept nothing may be whole in its mirror (said below).
            if !transport.lastPassMirrors.contains(where: { $0.frameCount > 0 }) { Terminal.err("nothing was recorded\n") }
        } else {
            for (k, (take, file)) in zip(takes, files).enumerated() {
                let passes = take.passCount > 1 ? " as \(take.passCount) loop takes" : ""
                let onTrack = target.isFileTake ? "" : " on track \(take.trackIndex + 1)"
                let clock = TimeText.clock(frames: file.frames, sampleRate: rate)
                var xruns = k == takes.count - 1 ? "; xruns: \(line.xruns.count)" : ""
                if k == takes.count - 1 && !marks.isEmpty {
                    xruns += "; marked: " + marks.map { "\($0.name) at \(session.clockText($0.frame))" }.joined(separator: ", ")
                }
                Terminal.err("recorded \(clock) (\(file.frames) frames, \(file.channels) ch) to \(file.path.terminalSafe)\(onTrack)\(passes)\(xruns)\n")
            }
        }
        // A refused write is an I/O error (EX_IOERR), whatever else happened.
        if !problems.isEmpty {
            throw RecordFailure(message: problems.joined(separator: "; "), status: failures.isEmpty ? ExitCode.failure : ExitCode.ioError)
        }
        // A mirror that stopped (said once, as it happened) leaves the take whole but
        // unprotected: not all that was asked was done.
        if transport.lastPassMirrors.contains(where: { $0.error != nil }) { return ExitCode.failure }
        return ExitCode.ok
    }

    /// Each take the disk stopped, the moment the transport says so: a JSON event with what
    /// was kept (the banner's reader gets the line on stderr from ``say(_:)``, or at the end).
    private func sayFailures(from seen: inout Int) {
        let reports = transport.takeFailures.dropFirst(seen)
        seen = transport.takeFailures.count
        guard json else { return }
        let rate = Double(max(device.sampleRate, 1))
        for r in reports {
            StatusLine.emitLine(["event": "take_stopped", "file": r.failure.request.path, "track": r.track.map { $0 + 1 as Any } ?? NSNull(),
                       "reason": r.failure.reason, "disk_full": r.failure.isDiskFull, "kept_frames": r.failure.keptFrames,
                       "kept_seconds": Double(r.failure.keptFrames) / rate, "recording_stopped": r.stoppedPass, "text": r.text])
        }
    }

    /// The recorded tracks' input meters, channel after channel.
    private func levels(_ snap: TransportSnapshot) -> [ChannelLevel] {
        target.tracks.flatMap { $0 < snap.trackLevels.count ? snap.trackLevels[$0] : [] }
    }

    /// Problems and news on stderr (the JSON reader gets them as events). The pass's own
    /// failures are left for the last line, where they decide the exit status.
    private func say(_ snap: TransportSnapshot) {
        if let notice = snap.notice {
            if json { StatusLine.emitLine(["event": "notice", "text": notice]) } else { Terminal.err("\r\u{1B}[2K" + notice + "\n") }
        }
        let final = Set(transport.lastPassProblems)
        for error in (snap.lastError ?? "").components(separatedBy: "; ") where !error.isEmpty && !final.contains(error) {
            if json { StatusLine.emitLine(["event": "problem", "text": error]) } else { Terminal.err("\r\u{1B}[2K" + error + "\n") }
        }
    }
}
