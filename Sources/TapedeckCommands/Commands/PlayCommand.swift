import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine
import TapedeckDSP
import TapedeckTransport
import TapedeckTakes
import TapedeckRemote

/// `tapedeck play SESSION|FILE`: plays a session's audible tracks (or one file) on a device.
struct PlayCommand: Command {
    static let spec = CommandSpec(
        name: "play", summary: "play a session or an audio file on an audio device",
        synopsis: ["play SESSION|FILE [options]"],
        positionals: [PositionalSpec("SESSION|FILE", complete: .file)],
        options: SharedOptions.device + [
            OptionSpec("--from", value: "TIME", "start here (default: the start)"),
            OptionSpec("--to", value: "TIME", "stop (or loop back) here (default: the end)"),
            OptionSpec(flag: "--loop", "loop from --from to --to until stopped"),
        ] + SharedOptions.timePitch + [
            OptionSpec("--quality", value: "Q", "live stretch engine: Rubber Band R2 faster (fast, default; R3 above 4x) "
                       + "or R3 finer throughout (best: steadier, about twice the stretcher's cost)", allowed: ["fast", "best"]),
            OptionSpec("--fx", value: "CHAIN", "master chain for this run (replaces the session's)"),
        ] + SharedOptions.click + SharedOptions.midi + SharedOptions.osc + [
            OptionSpec(flag: "--json", "one JSON status object per line on stdout"),
        ],
        details: """
        Plays every audible track (mute and solo respected) through region gain and fades, track
        gain and pan, until the end, --to, or Ctrl-C. MIDI tracks play their regions through
        their instruments; MMC (and --midi-surface buttons) from the MIDI inputs play, stop and
        locate; armed tracks hear the MIDI inputs live. MIDI-learnt controllers move their
        faders, pans, mutes and parameters; over an automation lane in touch, latch or write
        what they do is written, and saved into the session when play ends. OSC surfaces
        (--osc) play, stop, locate, loop and move strip gain, pan, mute, solo and send levels
        for this run (not saved; written to automation lanes as controllers are).

        \(SharedOptions.alsaEnvironment)
        """)

    var target: String
    var device: DeviceOptions
    var fromText: String?
    var toText: String?
    var loop: Bool
    var json: Bool
    var timePitch: TimePitchSettings
    var quality: StretchQuality
    var masterChain: Chain?
    var click: ClickSettings?
    var midi: MIDIOptions
    var osc: OSCOptions

    init(arguments: inout Arguments) throws {
        timePitch = try TimePitchOptions.parse(&arguments)
        let q = try arguments.option("--quality") ?? "fast"
        guard let quality = StretchQuality(rawValue: q) else {
            throw UsageError("play: --quality '\(q)' must be fast or best")
        }
        self.quality = quality
        midi = try MIDIOptions(arguments: &arguments)
        osc = try OSCOptions(arguments: &arguments)
        masterChain = try arguments.option("--fx").map { text throws(ChainError) in try Chain(parsing: text) }
        let clickOn = arguments.flag("--click")
        let level = try arguments.doubleOption("--click-level", in: -60...0)
        let channels = try arguments.option("--click-channels")
        if clickOn || level != nil || channels != nil {
            var c = ClickSettings()
            if let level { c.levelDecibels = level }
            if let channels { c.outputChannels = try parseChannelList(channels, command: "play") }
            click = c
        }
        device = try DeviceOptions(arguments: &arguments)
        device.jack.connectMIDI(midi.setup)
        fromText = try arguments.option("--from")
        toText = try arguments.option("--to")
        loop = arguments.flag("--loop")
        json = arguments.flag("--json")
        target = try arguments.required("SESSION or FILE")
    }

    func run(_ context: CommandContext) throws -> Int32 {
        StopSignals.install()
        // A port that cannot be had is said before anything opens.
        let oscServer = try osc.open(command: "play") { json ? StatusLine.emitLine(["event": "notice", "text": $0]) : Terminal.err($0 + "\n") }
        var isFolder: ObjCBool = false
        let isSession = SessionFolder.isNamed(target)
            || (FileManager.default.fileExists(atPath: target, isDirectory: &isFolder) && isFolder.boolValue)
        var session: Session
        var folder: SessionFolder?
        var options = TransportOptions()
        options.engine = DeviceOptions.engineOptions(threads: device.threads)
        options.engine.liveStretchQuality = quality
        options.clickOutputs = click?.outputChannels ?? [1, 2]
        options.midi = midi.setup
        if isSession {
            let f = SessionFolder(path: target)
            // Opening a session finishes takes a crash left behind, so they are heard too.
            let opened = try OpenedSession.read(f, recoveryMustSucceed: true)
            for line in opened.recovered + opened.notices { Terminal.err(line + "\n") }
            session = opened.session
            folder = f
            // Checked here, so a missing file or a bad chain is an error, not a silent track.
            _ = try GraphSpec(session: session, folder: f)
        } else {
            let file = try GraphSpec(file: target)
            session = Session(sampleRate: file.sampleRate)
            session.tracks = [Track(name: target)]
            options.material = file
        }
        if let masterChain { session.masterChain = masterChain.text }
        let tempo = session.tempoMap
        let from = try fromText.map { t throws(TimeText.ParseError) in try TimeText.frames(from: t, tempoMap: tempo) } ?? 0
        let to = try toText.map { t throws(TimeText.ParseError) in try TimeText.frames(from: t, tempoMap: tempo) }
        let materialEnd = options.material?.endFrame ?? session.endFrame
        let end = min(to ?? materialEnd, max(materialEnd, to ?? 0))
        guard end > from else {
            throw UsageError("play: nothing to play between \(TimeText.clock(frames: from, sampleRate: session.sampleRate)) and \(TimeText.clock(frames: end, sampleRate: session.sampleRate))")
        }
        options.endFrame = end
        let dev = try device.open(sampleRate: session.sampleRate, captureChannels: 0,
                                  playbackChannels: max(2, click?.outputChannels.max() ?? 0), routing: session, tempoMap: tempo)
        // The device starts after everything is asked for, so its first period plays `from`.
        let transport: Transport
        do {
            transport = try Transport(session: session, folder: folder, device: dev, deviceName: device.name, options: options,
                                      position: from, startsDevice: false)
        } catch let e as TransportError { throw RecordFailure(message: "play: \(e.description)") }
        defer { transport.close() }
        if let click {
            transport.clickLevelDecibels = click.levelDecibels
            transport.clickMode = .always
        }
        transport.setTimePitch(timePitch)
        if loop { transport.setLoop(FrameRange(startFrame: from, endFrame: end), enabled: true) }
        // --to ends playback whatever the session's loop says: a loop left on in the session
        // would stretch the end to its own and play for ever.
        else if to != nil, transport.loopEnabled { transport.setLoop(session.loopRange, enabled: false) }
        if !json { Terminal.err("playing on \(dev.configuration)\n") }
        var line = StatusLine(label: "playing", file: target, sampleRate: session.sampleRate, json: json)
        transport.play(from: from)
        try transport.startDevice()
        var seen = 0
        var written = HeadlessAutomation()
        var snap: TransportSnapshot
        let remote = HeadlessRemote(role: .play, transport: transport, sessionPath: folder?.path, json: json)
        defer { remote.close() }
        if loop { remote.loopRange = FrameRange(startFrame: from, endFrame: end) }
        let surfaces = HeadlessOSC.serving(oscServer, remote: remote, json: json, endFrame: end)
        repeat {
            if StopSignals.requested { transport.stop() }
            snap = transport.snapshot()
            if let n = snap.notice {
                if json { StatusLine.emitLine(["event": "notice", "text": n]) } else { Terminal.err("\r\u{1B}[2K\(n)\n") }
            }
            if let e = snap.lastError {
                if json { StatusLine.emitLine(["event": "problem", "text": e]) } else { Terminal.err("\r\u{1B}[2K\(e)\n") }
            }
            line.update(snap, levels: snap.outputLevels, events: Array(transport.events.dropFirst(seen)), elapsedFrames: snap.positionFrame)
            seen = transport.events.count
            written.collect(from: transport)
            surfaces?.service(snap)
            if snap.state != .stopped { remote.wait(milliseconds: 50) }
        } while snap.state != .stopped && transport.engine.isRunning
        snap = transport.snapshot()
        surfaces?.service(snap)  // the surfaces see it stop
        written.collect(from: transport)
        line.update(snap, levels: snap.outputLevels, events: Array(transport.events.dropFirst(seen)), elapsedFrames: snap.positionFrame,
                    force: true)
        line.finish()
        // Controllers that wrote automation while it played (lanes in touch, latch or write).
        if let folder { HeadlessAutomation.say(try written.save(to: folder), json: json) }
        if !transport.engine.isRunning, let error = transport.engine.status().lastError { throw RecordFailure(message: error) }
        return ExitCode.ok
    }
}
