import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine
import TapedeckDSP
import TapedeckTransport
import TapedeckDevices
import TapedeckRemote

/// `tapedeck record` (and `tapedeck --headless --record`): records a take from an ALSA
/// device into a file or onto a session track, showing that it records until it is stopped.
struct RecordCommand: Command {
    static let spec = CommandSpec(
        name: "record", summary: "record a take from an audio device (headless)",
        synopsis: ["record [SESSION] [options]", "--headless --record [SESSION] [options]"],
        positionals: [PositionalSpec("SESSION", complete: .session)],
        options: [
            OptionSpec("--out", value: "FILE", "write the take to FILE (.wav or .flac)", complete: .file),
            OptionSpec("--session", value: "S", "record into session S (or give SESSION first): every armed track records at once, each from its own inputs through its own input chain into its own file in S/audio/, all starting on the same frame (no armed track: a new track)",
                       complete: .session),
            OptionSpec("--track", value: "N|NAME", "record this one session track instead (1-based number or name)"),
            OptionSpec("--tracks", value: "1,3-5", "record these session tracks instead (numbers, ranges or names)"),
        ] + SharedOptions.device + [
            OptionSpec("--channels", value: "1,2", "device input channels to record (default: 1, or with a session each track's own; given, it applies to the one track recorded)"),
            OptionSpec("--sample-rate", value: "HZ", "rate when not recording into a session (default 48000)"),
            OptionSpec("--format", value: "FORMAT", "file type (default: from --out, else wav)", allowed: ["wav", "flac"]),
            OptionSpec("--bits", value: "BITS", "sample depth (default 24)", allowed: ["16", "24", "32f"]),
            OptionSpec("--duration", value: "TIME", "stop after TIME (12.5, 1:02.5, 90000f, 4.2.1)"),
            OptionSpec(flag: "--play", "play the session while recording (overdub); the take is shifted by the device's round-trip latency"),
            OptionSpec(flag: "--json", "one JSON object per line on stdout instead of the banner"),
            OptionSpec("--fx", value: "CHAIN", "record through this input chain (default: the track's input chain)"),
            OptionSpec("--keep", value: "WHAT", "record the processed input (wet, default), the dry input (the chain is only heard), or both (the dry copy goes to NAME.dry.wav|flac)",
                       allowed: ["wet", "dry", "both"]),
            OptionSpec("--at", value: "TIME", "the record point on the timeline (default: the start)"),
            OptionSpec("--timestamp", value: "WHAT", "what a take's BWF time reference counts: timeline (its timeline frame, default) or clock (the time of day of its first frame, from midnight, as field recorders write it; sets the session's time-of-day origin when it has none)",
                       allowed: ["timeline", "clock"]),
            OptionSpec("--count-in", value: "N", "N bars of metronome before the record point (default 0); the take starts exactly at the record point"),
        ] + SharedOptions.click + [
            OptionSpec("--punch", value: "A-B", "with --play: record only inside A-B, to the frame, with short crossfades against what the track had there"),
            OptionSpec(flag: "--loop", "with --play: loop the session's loop range; every pass becomes a take on the track (take lanes: the last complete pass plays; stopping mid-pass keeps the partial pass as the take after it)"),
            OptionSpec("--monitor", value: "MODE", "hear the input (after its input chain) in place of the track's own playback: input always, stopped and rolling; auto while stopped (listening, --retro) or recording (from the count-in or a punch's pre-roll on), the track's playback otherwise; off never (the default); its latency is shown",
                       allowed: ["off", "input", "auto"]),
            OptionSpec("--split", value: "SIZE", "split each take into files of this length (1h, 30m, 90s) or size (2GB, 500MB; at most 4GB), named NAME-001, NAME-002, …: each piece is finished before the next begins and placed on the track right after the one before, so they play as one take"),
            OptionSpec("--mirror", value: "DIR", "write a second copy of every take (and every --split piece, under the same file names) into DIR, another disk, from a writer of its own: a mirror that fails or fills is said once and the take records on, and the other way round; `recover S --mirror DIR` brings a mirror's copy in"),
            OptionSpec("--retro", value: "SECONDS", "listen without recording, keeping the last SECONDS of input in memory; each SIGUSR1 (kill -USR1 PID) turns them into a take placed where it was played"),
        ] + SharedOptions.timePitch + SharedOptions.midi + SharedOptions.osc,
        details: """
        Records from an ALSA device until Ctrl-C, SIGTERM, SIGHUP or --duration, then finishes
        the take (header, peaks, session) and exits 0. An armed MIDI track records what the MIDI
        inputs play (--midi-in) into a .mid file in S/midi/, placed like an audio take (count-in,
        punch, loop passes), and hears it through its instrument; MMC stop ends the recording. With --play, --speed, --mode and --pitch
        set the transport's speed while you record; the take is placed in time, marked with its
        speed, and plays in time (pitch kept) at 1x. OSC surfaces (--osc) stop it (/transport_stop,
        /rec_enable_toggle) and get its state, position and meters; while a take runs it refuses
        to move (/locate …) and takes no mixer changes.

        \(SharedOptions.alsaEnvironment)
        """)

    var sessionPath: String?
    var outPath: String?
    var trackText: String?
    var tracksText: String?
    var device: DeviceOptions
    var channels: [Int]
    var channelsGiven: Bool
    var sampleRate: Int?
    var container: AudioContainer?
    var encoding: SampleEncoding
    var durationText: String?
    var midi: MIDIOptions
    var play: Bool
    var json: Bool
    var inputChain: Chain?
    var keepDry: Bool
    var recordsDry: Bool
    var recording: RecordingOptions
    var retroSeconds: Double?
    var osc: OSCOptions
    /// `--split` as typed, and what it means.
    var splitText: String?
    var split: TakeSplit?
    /// `--mirror DIR`: the folder every take is copied into as it records.
    var mirrorFolder: String?

    init(arguments: inout Arguments) throws {
        inputChain = try arguments.option("--fx").map { text throws(ChainError) in try Chain(parsing: text) }
        let keep = try arguments.option("--keep") ?? "wet"
        guard ["wet", "dry", "both"].contains(keep) else { throw UsageError("record: --keep '\(keep)' must be wet, dry or both") }
        keepDry = keep == "both"
        recordsDry = keep == "dry"
        recording = try RecordingOptions(&arguments)
        retroSeconds = try arguments.doubleOption("--retro", in: 1...600)
        splitText = try arguments.option("--split")
        split = try splitText.map { t throws(UsageError) in try SplitOption.parse(t) }
        if split != nil && retroSeconds != nil { throw UsageError("record: --split and --retro cannot be combined (a kept retroactive take is one file)") }
        if recording.stampsClock && retroSeconds != nil { throw UsageError("record: --timestamp clock stamps recorded takes, not --retro ones (they keep their timeline frame)") }
        if split != nil && keepDry { throw UsageError("record: --split cannot keep a dry copy beside the take (--keep both)") }
        mirrorFolder = try arguments.option("--mirror").map { d throws(UsageError) in try MirrorOption.check(d) }
        if mirrorFolder != nil && retroSeconds != nil { throw UsageError("record: --mirror and --retro cannot be combined (a retroactive take is kept from memory, after the fact)") }
        let named = try arguments.option("--session")
        outPath = try arguments.option("--out")
        trackText = try arguments.option("--track")
        tracksText = try arguments.option("--tracks")
        device = try DeviceOptions(arguments: &arguments)
        let channelsText = try arguments.option("--channels")
        channelsGiven = channelsText != nil
        channels = try parseChannelList(channelsText ?? "1", command: "record")
        sampleRate = try arguments.intOption("--sample-rate", in: 1000...768_000)
        if let f = try arguments.option("--format") {
            guard let c = AudioContainer(rawValue: f.lowercased()), !c.isLossy else { throw UsageError("record: --format '\(f)' must be wav or flac") }
            container = c
        }
        let bits = try arguments.option("--bits") ?? "24"
        guard let e = SampleEncoding(rawValue: bits) else { throw UsageError("record: --bits '\(bits)' must be 16, 24 or 32f") }
        encoding = e
        durationText = try arguments.option("--duration")
        midi = try MIDIOptions(arguments: &arguments)
        osc = try OSCOptions(arguments: &arguments)
        device.jack.connectMIDI(midi.setup)
        play = arguments.flag("--play")
        json = arguments.flag("--json")
        let positional = arguments.positional()
        if named != nil, positional != nil { throw UsageError("record: give the session once (SESSION or --session)") }
        sessionPath = named ?? positional
        if sessionPath != nil && outPath != nil { throw UsageError("record: --out and a session exclude each other") }
        if sessionPath == nil && outPath == nil { throw UsageError("record: give --out FILE or a session (see 'tapedeck help record')") }
        if sessionPath == nil && (trackText != nil || tracksText != nil || play) {
            throw UsageError("record: --track, --tracks and --play need a session")
        }
        if trackText != nil && tracksText != nil { throw UsageError("record: give --track or --tracks, not both") }
        if channels.count > 2 { throw UsageError("record: --channels '\(channelsText ?? "")' names more than a stereo pair (one track records one or two channels)") }
        if let out = outPath {
            let fromName = AudioContainer(pathExtension: out)
            if fromName == nil && container == nil { throw UsageError("record: --out '\(out)' must end in .wav or .flac (or give --format)") }
            if let c = container, let n = fromName, c != n { throw UsageError("record: --format \(c.rawValue) does not match --out '\(out)'") }
            container = container ?? fromName
        }
        if (container ?? .wav) == .flac && encoding == .float32 { throw UsageError("record: FLAC stores 16 or 24 bits, not 32f") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        StopSignals.install()
        // A port that cannot be had is said before the session is locked or a device opens.
        let oscServer = try osc.open(command: "record") { json ? StatusLine.emitLine(["event": "notice", "text": $0]) : Terminal.err($0 + "\n") }
        // One writer per session: held from before the session is read until the takes are placed.
        let lock = try sessionPath.map { path throws(SessionError) in try SessionLock.acquire(SessionFolder(path: path)) }
        defer { withExtendedLifetime(lock) {} }
        var target = try RecordTarget(command: self)
        let session = target.session
        // What this recording writes outside the session's own audio/, through the one write
        // guard, before a device opens (the session's own takes are checked as they are named).
        let protected = target.folder.map { [SessionReferences.protected(session, folder: $0)] } ?? []
        if let out = outPath {
            try WriteGuard.check(out, as: "record: --out", sessions: protected)
            if split != nil { try WriteGuard.check(TakePieces.firstPieceName(out), as: "record: --out", sessions: protected) }
        }
        if let mirror = mirrorFolder { try WriteGuard.check(mirror, as: "record: --mirror", sessions: protected, kind: .folder) }
        let tempo = session.tempoMap
        var maxFrames: Int64?
        if let d = durationText {
            let frames = try TimeText.frames(from: d, tempoMap: tempo)
            guard frames > 0 else { throw UsageError("record: --duration '\(d)' must be longer than 0") }
            maxFrames = frames
        }
        try recording.validate(play: play)
        if let split, let text = splitText {
            if recording.loop || recording.punchText != nil || !recording.timePitch.isIdentity {
                throw UsageError("record: --split records plain takes at 1x: not with --punch, --loop or another --speed")
            }
            let counts = target.tracks.filter { !session.tracks[$0].isMIDI }.map {
                min(2, max(1, channelsGiven ? channels.count : session.tracks[$0].inputChannels.count))
            }
            try SplitOption.check(split, text: text, sampleRate: session.sampleRate, channelCounts: counts, encoding: encoding)
            if let out = outPath { try SplitOption.checkFree(out: out) }
        }
        if let mirror = mirrorFolder, let out = outPath { try MirrorOption.checkFree(out: out, mirror: mirror, split: split != nil) }
        let timing = try recording.timing(session: session, tempo: tempo)

        var options = TransportOptions()
        options.engine = DeviceOptions.engineOptions(threads: device.threads)
        options.playsSession = play
        options.stopsAtEnd = false
        options.allowsRecordingAtSpeed = true
        // Headless recording often runs with no one listening: monitoring is off unless asked
        // for (the screen follows each track's own setting).
        options.monitoring = recording.monitorMode ?? .off
        options.clickOutputs = recording.click?.outputChannels ?? [1, 2]
        options.takeContainer = container ?? .wav
        options.takeEncoding = encoding
        options.stampsTakesWithClock = recording.stampsClock
        options.retroSeconds = retroSeconds
        options.midi = midi.setup
        let monitor = options.monitoring ?? .off
        // A MIDI track is heard through its instrument while it records: it needs the outputs.
        let playsInstrument = target.tracks.contains { session.tracks[$0].isMIDI }
        let outputs = max(play || recording.click != nil || monitor != .off || playsInstrument ? 2 : 0, recording.click?.outputChannels.max() ?? 0)
        // A JACK client's inputs are named after the tracks that record from them.
        // (A MIDI track has no audio input: its MIDI comes in on midi_in.)
        let portTracks = target.isFileTake ? [] : target.tracks.filter { !session.tracks[$0].isMIDI }.map { t in
            (name: session.tracks[t].name, channels: channelsGiven ? channels : session.tracks[t].inputChannels)
        }
        let dev = try device.open(sampleRate: session.sampleRate, captureChannels: target.deviceChannelsNeeded(override: channelsGiven ? channels : nil),
                                  playbackChannels: outputs, routing: session, tracks: portTracks, tempoMap: tempo)
        // The calibrated offset, looked up by the transport for its engine as the screen's is.
        let offsets = try LatencyOffsets.load()
        options.latencyOffset = { offsets.offset(forDevice: $0) }
        // The device starts once the take is asked for, so its first period records.
        // --retro keeps what the recorded tracks hear: they listen as armed tracks do (a track
        // made for the take, or one named with --track, is not armed in the file).
        var heard = session
        if retroSeconds != nil { for t in target.tracks { heard.tracks[t].armed = true } }
        let transport: Transport
        do {
            transport = try Transport(session: heard, folder: target.folder, device: dev, deviceName: device.name,
                                      options: options, position: timing.transportStart, startsDevice: false)
        } catch let e as TransportError { throw RecordFailure(message: "record: \(e.description)") }
        defer { transport.close() }
        transport.countInBars = recording.countInBars
        if let click = recording.click {
            transport.clickLevelDecibels = click.levelDecibels
            transport.clickMode = recording.clickOnlyForCountIn ? .off : .recording
        }
        transport.setTimePitch(recording.timePitch)
        transport.setPunch(timing.punch, enabled: timing.punch != nil)
        transport.setLoop(session.loopRange, enabled: recording.loop)
        if let seconds = retroSeconds {
            try transport.startDevice()
            var retro = RetroRun(transport: transport, target: target, json: json, seconds: seconds, osc: oscServer)
            let kept = try retro.run(maxFrames: maxFrames, play: play, from: timing.transportStart)
            if !json { Terminal.err("kept \(kept) take\(kept == 1 ? "" : "s")\n") }
            return ExitCode.ok
        }
        var request = RecordRequest(fromFrame: timing.recordPoint)
        request.tracks = target.tracks
        request.maxFrames = maxFrames
        request.inputChain = inputChain
        request.deviceChannels = channelsGiven || target.isFileTake ? channels : nil
        request.recordsDry = recordsDry
        request.keepsDryCopy = keepDry
        request.outputPath = target.isFileTake ? outPath : nil
        request.stopsWhenDone = true
        request.split = split
        request.mirrorFolder = mirrorFolder
        let start: RecordingStart
        do { start = try transport.record(request) } catch let e as TransportError {
            throw e.kind == .usage ? UsageError("record: \(e.description)") as Error : RecordFailure(message: e.description)
        }
        try target.saveNewTrack()
        try transport.startDevice()
        return try HeadlessRecording(transport: transport, target: target, start: start, json: json, device: dev.configuration,
                                     monitor: monitor, osc: oscServer).run()
    }
}

/// A failure while recording; the take is already closed and valid.
struct RecordFailure: Error, CustomStringConvertible {
    var message: String
    /// The exit status: 1, or EX_IOERR when a take's disk refused a write.
    var status: Int32 = ExitCode.failure
    var description: String { message }
}
