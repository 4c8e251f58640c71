import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO

/// `tapedeck info SESSION`: the session's settings, every strip with its regions and routing,
/// and the delay compensation the routing gets, as text or (`--json`) as one JSON document.
extension InfoCommand {
    /// The delay compensation of `session`'s routing, or why it could not be worked out (a
    /// chain that does not parse). Regions play no part in it, so they are left out: `info`
    /// opens no audio file and renders no stretched region to learn it.
    static func latency(of session: Session, folder: SessionFolder) -> Result<DelayCompensation, InfoLatencyError> {
        var routing = session
        for i in routing.tracks.indices {
            routing.tracks[i].regions = []
            routing.tracks[i].activeTakes = []
            routing.tracks[i].frozen = nil
        }
        do {
            return .success(try GraphSpec(session: routing, folder: folder).delayCompensation(sampleRate: session.sampleRate))
        } catch {
            return .failure(InfoLatencyError(description: String(describing: error)))
        }
    }

    /// `240 frames (5.00 ms)`.
    static func framesText(_ frames: Int, sampleRate: Int) -> String {
        "\(frames) frame\(frames == 1 ? "" : "s") (\(String(format: "%.2f", Double(frames) * 1000 / Double(max(sampleRate, 1)))) ms)"
    }

    func describe(session: Session, folder: SessionFolder, _ context: CommandContext) throws {
        if json { return try RoutingText.printJSON(InfoCommand.sessionJSON(session, folder: folder), to: context.console) }
        let map = session.tempoMap
        func clock(_ f: Int64) -> String { TimeText.clock(frames: f, sampleRate: session.sampleRate) }
        func range(_ r: FrameRange?, _ on: Bool) -> String {
            guard let r else { return "none" }
            return "\(clock(r.startFrame))-\(clock(r.endFrame))\(on ? " (on)" : " (off)")"
        }
        let busCount = session.buses.count
        var lines = [
            "session   \(folder.path.terminalSafe)",
            "rate      \(session.sampleRate) Hz",
            "tempo     \(session.tempoBPM) BPM, \(session.timeSignature)"
                + (session.tempoMap.isConstant ? "" : "\n" + session.tempoMapListing.split(separator: "\n").dropFirst().map { "          " + $0 }.joined(separator: "\n")),
            "origin    \(session.timeOfDayOrigin.map { "\(TimeOfDay.text(frames: $0, sampleRate: session.sampleRate)) (the time of day at 0:00)" } ?? "none (no time of day)")",
            "timecode  \(session.timecodeRate.rawValue) fps",
            "length    \(clock(session.endFrame)) (\(session.endFrame) frames, bar \(map.barsBeatsTicks(ofFrame: session.endFrame)))",
            "loop      \(range(session.loopRange, session.loopEnabled))",
            "punch     \(range(session.punchRange, session.punchEnabled))",
            "markers   \(session.markers.isEmpty ? "none" : session.markers.map { "\($0.isLostInput ? "lost input: " : "")\($0.name.terminalSafe)@\(clock($0.frame))" }.joined(separator: ", "))",
            "master    fader \(Fader.text(session.masterGainDecibels)) dB, \(session.masterChain.isEmpty ? "no effects" : session.masterChain.terminalSafe)",
            "tracks    \(session.tracks.count)\(busCount == 0 ? "" : " (\(busCount) bus\(busCount == 1 ? "" : "es"))")",
        ] + (session.midiBindings.isEmpty ? [] : ["MIDI      " + session.midiBindings.map(\.description).joined(separator: ", ")])
        let downmixes = InfoCommand.downmixes(session: session, folder: folder)
        for (i, t) in session.tracks.enumerated() {
            var flags = [String]()
            if t.armed { flags.append("armed") }
            if t.mute { flags.append("muted") }
            if t.solo { flags.append("solo") }
            if t.isSoloSafe { flags.append("solo-safe") }
            if let f = t.frozen { flags.append("frozen: \(f.file.terminalSafe)") }
            let input = t.isBus ? "bus, \(RoutingText.width(t))" : t.isMIDI ? "MIDI" : InputChannels.text(t.inputChannels)
            lines.append("  \(i + 1). \(t.name.terminalSafe)  \(input)  \(Fader.text(t.gainDecibels)) dB  pan \(Pan.text(t.pan))\(flags.isEmpty ? "" : "  [" + flags.joined(separator: " ") + "]")")
            if !t.inputChain.isEmpty { lines.append("       input chain: \(t.inputChain.terminalSafe)") }
            if !t.playbackChain.isEmpty { lines.append("       chain: \(t.playbackChain.terminalSafe)") }
            if t.isBus { lines.append("       fed by: \(RoutingText.feedersText(of: i, in: session))") }
            if t.output != .master { lines.append("       output: \(t.output.description.terminalSafe)") }
            for send in t.sends { lines.append("       send to \(send.bus.terminalSafe): \(RoutingText.settings(send))") }
            if !t.automation.isEmpty {
                let lanes = t.automation.map { "\($0.parameter.description.terminalSafe) (\($0.mode.rawValue), \($0.points.count) point\($0.points.count == 1 ? "" : "s"))" }
                lines.append("       automation: \(lanes.joined(separator: ", "))")
            }
            for r in RegionCommand.timelineOrder(t).map({ t.regions[$0] }) {
                var extra = ""
                if r.gainDecibels != 0 { extra += "  \(Fader.text(r.gainDecibels)) dB" }
                if r.fadeInFrames > 0 || r.fadeOutFrames > 0 { extra += "  fades \(clock(r.fadeInFrames))/\(clock(r.fadeOutFrames))" }
                if r.rate != 1 { extra += "  rate \(r.rate)×" }
                if let g = r.takeGroup, let n = r.takeNumber { extra += "  take \(g).\(n)\(t.isActive(r) ? " (active)" : "")" }
                if let v = r.recordedSpeed { extra += "  recorded at \(v)×" }
                if r.isMIDI { extra += "  MIDI" }
                if !r.isMIDI, let d = downmixes[r.file] { extra += "  \(d.layout.channelCount) ch, downmixed to stereo" }
                lines.append("       \(clock(r.timelineStartFrame))-\(clock(r.timelineEndFrame))  \(r.file.terminalSafe)  (from \(r.sourceOffsetFrame), \(r.lengthFrames) frames)\(extra)")
            }
        }
        // Each wide file once, with the gains it is heard at (the regions above say which).
        for file in downmixes.keys.sorted() {
            guard let d = downmixes[file] else { continue }
            lines.append("downmix   \(file.terminalSafe): \(d.layout.channelCount) ch (\(d.layout.summary)) → stereo, \(d.description)")
        }
        switch InfoCommand.latency(of: session, folder: folder) {
        case .success(let dc):
            lines.append("latency   \(InfoCommand.framesText(dc.outputLatencyFrames, sampleRate: session.sampleRate)) from the timeline to the outputs (delay compensation)")
            for (i, frames) in dc.outputDelayFrames.enumerated() where frames != 0 && i < session.tracks.count {
                lines.append("          \(RoutingText.label(session, i)) output \(InfoCommand.framesText(frames, sampleRate: session.sampleRate)) late, lined up where it is summed")
            }
        case .failure(let problem):
            lines.append("latency   unknown: \(problem.description.terminalSafe)")
        }
        context.console.out(lines.joined(separator: "\n"))
    }

    /// The session as one JSON object: what the text says, with frames as numbers and levels
    /// in dB (null for -inf).
    static func sessionJSON(_ session: Session, folder: SessionFolder) -> [String: Any] {
        func range(_ r: FrameRange?, _ on: Bool) -> Any {
            guard let r else { return NSNull() }
            return ["start_frame": r.startFrame, "end_frame": r.endFrame, "enabled": on]
        }
        let latency = InfoCommand.latency(of: session, folder: folder)
        let strips: [[String: Any]] = session.tracks.enumerated().map { (i, t) in
            var o: [String: Any]
            if t.isBus {
                o = RoutingText.busJSON(session, i)
                o["kind"] = "bus"
            } else {
                o = ["number": i + 1, "name": t.name, "kind": "track", "input_channels": t.inputChannels, "gain_db": RoutingText.decibels(t.gainDecibels),
                     "pan": t.pan, "mute": t.mute, "solo": t.solo, "armed": t.armed, "midi": t.isMIDI, "monitoring": t.monitoring.rawValue,
                     "input_chain": t.inputChain, "chain": t.playbackChain, "output": t.output.description, "sends": t.sends.map(RoutingText.json),
                     "frozen": t.frozen?.file ?? NSNull()]
                o["regions"] = RegionCommand.timelineOrder(t).map { t.regions[$0] }.map { r -> [String: Any] in
                    ["file": r.file, "start_frame": r.timelineStartFrame, "end_frame": r.timelineEndFrame, "length_frames": r.lengthFrames,
                     "source_offset_frame": r.sourceOffsetFrame, "gain_db": RoutingText.decibels(r.gainDecibels), "rate": r.rate,
                     "fade_in_frames": r.fadeInFrames, "fade_out_frames": r.fadeOutFrames, "midi": r.isMIDI, "active": t.isActive(r)]
                }
            }
            o["automation"] = t.automation.map { ["parameter": $0.parameter.description, "mode": $0.mode.rawValue, "points": $0.points.count] as [String: Any] }
            if case .success(let dc) = latency, i < dc.outputDelayFrames.count { o["output_delay_frames"] = dc.outputDelayFrames[i] }
            return o
        }
        var latencyJSON: [String: Any]
        switch latency {
        case .success(let dc):
            latencyJSON = ["output_frames": dc.outputLatencyFrames,
                           "output_ms": (Double(dc.outputLatencyFrames) * 1000 / Double(max(session.sampleRate, 1)) * 1000).rounded() / 1000,
                           "master_arrival_frames": dc.masterArrivalFrames]
        case .failure(let problem):
            latencyJSON = ["error": problem.description]
        }
        return [
            "session": folder.path, "sample_rate": session.sampleRate, "tempo_bpm": session.tempoBPM,
            "time_signature": "\(session.timeSignature)", "length_frames": session.endFrame,
            "time_of_day_origin_frames": session.timeOfDayOrigin as Any? ?? NSNull(),
            "timecode_rate": session.timecodeRate.rawValue,
            "tempo_changes": session.tempoChanges.map { ["bar": $0.bar, "bpm": $0.bpm, "ramp": $0.ramp,
                                                        "frame": session.tempoMap.frame(bar: $0.bar, beat: 1)] as [String: Any] },
            "meter_changes": session.meterChanges.map { ["bar": $0.bar, "meter": "\($0.signature)",
                                                        "frame": session.tempoMap.frame(bar: $0.bar, beat: 1)] as [String: Any] },
            "loop": range(session.loopRange, session.loopEnabled), "punch": range(session.punchRange, session.punchEnabled),
            "markers": session.markers.map { ["name": $0.name, "frame": $0.frame, "kind": $0.kind.rawValue] as [String: Any] },
            "master": ["gain_db": RoutingText.decibels(session.masterGainDecibels), "chain": session.masterChain] as [String: Any],
            "tracks": strips, "latency": latencyJSON,
        ]
    }
}

/// Why `info` could not work out the delay compensation; one line.
struct InfoLatencyError: Error, CustomStringConvertible {
    let description: String
}
