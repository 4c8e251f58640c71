import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine
import TapedeckDSP

/// `tapedeck record` (and `tapedeck --headless --record`): records a take from an ALSA
/// device into a file or onto a session track, showing that it records until it is stopped.
struct RecordCommand: Command {
    static let name = "record"
    static let summary = "record a take from an audio device (headless)"
    static let usage = """
    usage: tapedeck record [SESSION] [options]
           tapedeck --headless --record [SESSION] [options]

    Records from an ALSA device until Ctrl-C, SIGTERM, SIGHUP or --duration, then finishes
    the take (header, peaks, session) and exits 0.

      --out FILE            write the take to FILE (.wav or .flac)
      --session S           record into session S (or give SESSION first); the take goes to
      --track N|NAME        S/audio/ and onto that track (1-based, or its name in any case;
                            default: first armed track, else a new track)
      --device D            ALSA PCM name (default: default; see 'tapedeck devices')
      --channels 1,2        device input channels to record (default: 1)
      --sample-rate HZ      rate when not recording into a session (default 48000)
      --format wav|flac     file type (default: from --out, else wav)
      --bits 16|24|32f      sample depth (default 24)
      --duration TIME       stop after TIME (12.5, 1:02.5, 90000f, 4.2.1)
      --play                play the session while recording (overdub); the take is
                            shifted by the device's round-trip latency
      --period FRAMES       frames per period (default 256)
      --periods N           periods in the device buffer (default 3)
      --device-format F     force the device sample format: float, s32, s24, s24_3, s16
      --json                one JSON object per line on stdout instead of the banner
      --fx CHAIN            record through this input chain (default: the track's input
                            chain when recording into a session)
      --keep wet|dry|both   record the processed input (default), the dry input (the chain
                            is then only heard, with --monitor), or both: the dry copy goes
                            to NAME.dry.wav|flac beside the take
      --at TIME             the record point on the timeline (default: the start)
      --count-in N          N bars of metronome before the record point (default 0); the
                            take starts exactly at the record point
      --click               metronome while recording (accented downbeat; never recorded)
      --click-level DB      its level (default -6); --click-channels 3,4 its own outputs
      --punch A-B           with --play: record only inside A-B, to the frame, with short
                            crossfades against what the track had there
      --loop                with --play: loop the session's loop range; every pass becomes
                            a take on the track (take lanes; stopping mid-pass keeps it)
      --monitor off|input|auto
                            hear the input (after its input chain) on the outputs: input
                            always; auto while recording, in place of the track's own
                            playback (default off); its latency is shown at the start
      --retro SECONDS       retroactive capture: listen without recording, keeping the last
                            SECONDS of input in memory; each SIGUSR1 (kill -USR1 PID) turns
                            them into a take placed where it was played
      --speed R, --mode M, --pitch S
                            with --play: the transport's speed while you record; the take
                            is placed in time, marked with its speed, and plays in time
                            (pitch kept) at 1x

    Environment: TAPEDECK_ALSA_CONFIG=FILE opens devices through that ALSA config only.
    """

    var sessionPath: String?
    var outPath: String?
    var trackText: String?
    var device: DeviceOptions
    var channels: [Int]
    var sampleRate: Int?
    var container: AudioContainer?
    var encoding: SampleEncoding
    var durationText: String?
    var play: Bool
    var json: Bool
    var inputChain: Chain?
    var keepDry: Bool
    var recordsDry: Bool
    var recording: RecordingOptions
    var retroSeconds: Double?

    init(arguments: inout Arguments) throws {
        inputChain = try arguments.option("--fx").map { text throws(ChainError) in try Chain(parsing: text) }
        let keep = try arguments.option("--keep") ?? "wet"
        guard ["wet", "dry", "both"].contains(keep) else { throw UsageError("record: --keep '\(keep)' must be wet, dry or both") }
        keepDry = keep == "both"
        recordsDry = keep == "dry"
        recording = try RecordingOptions(&arguments)
        retroSeconds = try arguments.doubleOption("--retro", in: 1...600)
        let named = try arguments.option("--session")
        outPath = try arguments.option("--out")
        trackText = try arguments.option("--track")
        device = try DeviceOptions(arguments: &arguments)
        channels = try parseChannelList(try arguments.option("--channels") ?? "1", command: "record")
        sampleRate = try arguments.intOption("--sample-rate", in: 1000...768_000)
        if let f = try arguments.option("--format") {
            guard let c = AudioContainer(rawValue: f.lowercased()) else { throw UsageError("record: --format '\(f)' must be wav or flac") }
            container = c
        }
        let bits = try arguments.option("--bits") ?? "24"
        guard let e = SampleEncoding(rawValue: bits) else { throw UsageError("record: --bits '\(bits)' must be 16, 24 or 32f") }
        encoding = e
        durationText = try arguments.option("--duration")
        play = arguments.flag("--play")
        json = arguments.flag("--json")
        let positional = arguments.positional()
        if named != nil, positional != nil { throw UsageError("record: give the session once (SESSION or --session)") }
        sessionPath = named ?? positional
        if sessionPath != nil && outPath != nil { throw UsageError("record: --out and a session exclude each other") }
        if sessionPath == nil && outPath == nil { throw UsageError("record: give --out FILE or a session (see 'tapedeck help record')") }
        if sessionPath == nil && (trackText != nil || play) { throw UsageError("record: --track and --play need a session") }
        if let out = outPath {
            let fromName = AudioContainer(pathExtension: out)
            if fromName == nil && container == nil { throw UsageError("record: --out '\(out)' must end in .wav or .flac (or give --format)") }
            if let c = container, let n = fromName, c != n { throw UsageError("record: --format \(c.rawValue) does not match --out '\(out)'") }
            container = container ?? fromName
        }
        if (container ?? .wav) == .flac && encoding == .float32 { throw UsageError("record: FLAC stores 16 or 24 bits, not 32f") }
    }

    func run() throws -> Int32 {
        StopSignals.install()
        let target = try TakeTarget(command: self)
        let tempo = target.session?.tempoMap ?? TempoMap(sampleRate: target.sampleRate, tempoBPM: 120,
                                                          timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
        var maxFrames: Int64?
        if let d = durationText {
            let frames = try TimeText.frames(from: d, tempoMap: tempo)
            guard frames > 0 else { throw UsageError("record: --duration '\(d)' must be longer than 0") }
            maxFrames = frames
        }
        try recording.validate(play: play)
        let workflow = try RecordingWorkflow(recording, session: target.session, tempo: tempo, play: play)
        // Headless recording often runs with no one listening: monitoring is off unless asked
        // for (the screen follows each track's own setting).
        let monitor = recording.monitorMode ?? .off
        var plan: PlaybackPlan?
        if play, let session = target.session, let folder = target.folder {
            // Auto monitoring: while the take records, its track is heard live, not from disk.
            let silenced: Set<Int> = monitor == .auto ? Set(target.trackIndex.map { [$0] } ?? []) : []
            plan = try PlaybackPlan(session: session, folder: folder, from: workflow.transportStart,
                                    to: workflow.loopRange?.endFrame, loop: workflow.loopRange != nil, silencing: silenced)
            plan?.timePitch = recording.timePitch
        }
        let outputs = max(plan == nil && recording.click == nil && monitor == .off ? 0 : 2,
                          recording.click?.outputChannels.max() ?? 0)
        let dev = try device.open(sampleRate: target.sampleRate, captureChannels: channels.max() ?? 1,
                                  playbackChannels: outputs)
        let config = dev.configuration
        let offsets: LatencyOffsets
        do { offsets = try LatencyOffsets.load() } catch {
            dev.stop()
            throw error
        }
        var options = DeviceOptions.engineOptions()
        options.latencyOffsetFrames = offsets.offset(forDevice: config.name)
        options.click = workflow.click
        options.monitorInput = monitor != .off
        options.transportStartFrame = workflow.transportStart
        if let seconds = retroSeconds {
            options.retro = (seconds, channels)
            let engine: Engine
            do { engine = try Engine(device: dev, take: nil, playback: plan, options: options) } catch {
                dev.stop()
                throw error
            }
            let line = StatusLine(label: "listening", file: target.audioPath, sampleRate: config.sampleRate, json: json)
            let kept = try RetroListener(target: target, engine: engine, channels: channels, encoding: encoding, json: json,
                                         line: line).run(maxFrames: maxFrames)
            if !json { Terminal.err("kept \(kept) take\(kept == 1 ? "" : "s")\n") }
            return ExitCode.ok
        }
        // The round trip as known before the engine exists (for the crash marker); the
        // engine's own figure, which adds the master chain's look-ahead, places the take.
        var latency = plan == nil ? 0 : config.roundTripLatencyFrames + options.latencyOffsetFrames
        let marker = TakeMarker(file: target.markerFile, session: target.folder?.path, trackIndex: target.trackIndex,
                                timelineStartFrame: 0, latencyFrames: latency, sampleRate: config.sampleRate,
                                deviceChannels: channels, startedAtSeconds: Date().timeIntervalSince1970)
        var take = TakeRequest(path: target.audioPath, container: target.container, encoding: encoding,
                               deviceChannels: channels, peakPath: target.peakPath, maxFrames: maxFrames, marker: marker)
        if let inputChain {
            take.inputChain = inputChain
        } else if let session = target.session, let index = target.trackIndex, session.tracks.indices.contains(index) {
            do { take.inputChain = try Chain(parsing: session.tracks[index].inputChain) } catch {
                throw ChainContextError(place: "track \(index + 1) input chain", error: error)
            }
        }
        if keepDry { take.dryPath = RecordCommand.dryPath(for: target.audioPath) }
        take.recordsDry = recordsDry
        take.gate = workflow.gate
        take.metadata = target.metadata(device: config.name, deviceChannels: channels,
                                        timelineFrame: workflow.gate?.startFrame ?? workflow.transportStart,
                                        latencyFrames: latency, speed: recording.timePitch.speed)
        var monitorLatency: Int64 = 0
        let engine: Engine
        do {
            engine = try Engine(device: dev, take: take, playback: plan, options: options)
            latency = engine.takeLatencyFrames
            monitorLatency = config.captureLatencyFrames + config.playbackLatencyFrames + Int64(engine.inputChainLatencyFrames)
        } catch {
            dev.stop()
            throw error
        }
        var line = StatusLine(label: "recording", file: target.audioPath, sampleRate: config.sampleRate, json: json)
        if json {
            line.emit(["event": "start", "device": config.name, "sample_rate": config.sampleRate,
                       "device_channels": config.captureChannels, "channels": channels,
                       "format": config.captureFormat?.rawValue ?? "", "period_frames": config.periodFrames,
                       "periods": config.periodCount, "latency_frames": latency, "file": target.audioPath,
                       "monitor": monitor.rawValue, "monitor_latency_frames": monitorLatency])
        } else {
            Terminal.err("recording from \(config)\n")
            if monitor != .off {
                Terminal.err("monitoring \(monitor.rawValue): \(monitorLatency) frames (\(TimeText.clock(frames: monitorLatency, sampleRate: config.sampleRate))) from input to output\n")
            }
        }
        do { try engine.start() } catch {
            TakeMarker.remove(forAudio: target.audioPath)
            unlink(target.audioPath)
            throw error
        }
        while !engine.isDone {
            if StopSignals.requested { engine.stop() }
            let s = engine.status()
            // A punch is over once the transport has passed its end (and the latency).
            if let end = workflow.gate?.endFrame, end < Int64.max, s.positionFrame >= end + latency { engine.stop() }
            line.update(s, newXruns: engine.drainXruns(), elapsedFrames: s.recordedFrames)
            usleep(50_000)
        }
        let summary = try engine.finish()
        line.update(engine.status(), newXruns: [], elapsedFrames: summary.takeFrames, force: true)
        line.finish()
        try workflow.place(target: target, frames: summary.takeFrames, latencyFrames: latency,
                           speed: recording.timePitch.speed)
        TakeMarker.remove(forAudio: target.audioPath)
        let clock = TimeText.clock(frames: summary.takeFrames, sampleRate: config.sampleRate)
        let report = "recorded \(clock) (\(summary.takeFrames) frames, \(channels.count) ch) to \(target.audioPath)"
            + (target.trackIndex.map { " on track \($0 + 1)" } ?? "") + "; xruns: \(summary.xruns.count)"
        if json {
            line.emit(["event": "done", "frames": summary.takeFrames, "xruns": summary.xruns.count,
                       "xrun_frames": summary.xruns.map(\.frame), "file": target.audioPath,
                       "latency_frames": latency, "error": summary.error ?? NSNull()])
        } else {
            Terminal.err(report + "\n")
        }
        if let error = summary.error {
            throw RecordFailure(message: "\(error) (the take was kept up to there: \(summary.takeFrames) frames in \(target.audioPath))")
        }
        return ExitCode.ok
    }

    /// `take.wav` → `take.dry.wav`.
    static func dryPath(for path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return path + ".dry" }
        return String(path[..<dot]) + ".dry" + String(path[dot...])
    }
}

/// A failure while recording; the take is already closed and valid.
struct RecordFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
