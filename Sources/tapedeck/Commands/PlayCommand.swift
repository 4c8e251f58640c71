import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine
import TapedeckDSP

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
            OptionSpec("--fx", value: "CHAIN", "master chain for this run (replaces the session's)"),
        ] + SharedOptions.click + [
            OptionSpec(flag: "--json", "one JSON status object per line on stdout"),
        ],
        details: """
        Plays every audible track (mute and solo respected) through region gain and fades, track
        gain and pan, until the end, --to, or Ctrl-C.

        \(SharedOptions.alsaEnvironment)
        """)

    var target: String
    var device: DeviceOptions
    var fromText: String?
    var toText: String?
    var loop: Bool
    var json: Bool
    var timePitch: TimePitchSettings
    var masterChain: Chain?
    var click: ClickSettings?

    init(arguments: inout Arguments) throws {
        timePitch = try TimePitchOptions.parse(&arguments)
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
        fromText = try arguments.option("--from")
        toText = try arguments.option("--to")
        loop = arguments.flag("--loop")
        json = arguments.flag("--json")
        target = try arguments.required("SESSION or FILE")
    }

    func run() throws -> Int32 {
        StopSignals.install()
        var isFolder: ObjCBool = false
        let isSession = target.hasSuffix(".tapedeck") || target.hasSuffix(".tapedeck/")
            || (FileManager.default.fileExists(atPath: target, isDirectory: &isFolder) && isFolder.boolValue)
        var plan: PlaybackPlan
        let tempo: TempoMap
        if isSession {
            let folder = SessionFolder(path: target)
            // Opening a session finishes takes a crash left behind, so they are heard too.
            for r in try TakeRecovery.recover(session: folder) {
                Terminal.err("recovered unfinished take \(r.file)" + (r.problem.map { ": \($0)" } ?? "") + "\n")
            }
            let session = try folder.load()
            tempo = session.tempoMap
            let from = try fromText.map { t throws(TimeText.ParseError) in try TimeText.frames(from: t, tempoMap: tempo) } ?? 0
            let to = try toText.map { t throws(TimeText.ParseError) in try TimeText.frames(from: t, tempoMap: tempo) }
            plan = try PlaybackPlan(session: session, folder: folder, from: from, to: to, loop: loop)
        } else {
            plan = try PlaybackPlan(file: target)
            tempo = TempoMap(sampleRate: plan.sampleRate, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
            let from = try fromText.map { t throws(TimeText.ParseError) in try TimeText.frames(from: t, tempoMap: tempo) } ?? 0
            let to = try toText.map { t throws(TimeText.ParseError) in try TimeText.frames(from: t, tempoMap: tempo) }
            plan = try PlaybackPlan(file: target, from: from, to: to, loop: loop)
        }
        plan.timePitch = timePitch
        if let masterChain { plan.masterChain = masterChain }
        guard plan.endFrame > plan.startFrame else {
            throw UsageError("play: nothing to play between \(TimeText.clock(frames: plan.startFrame, sampleRate: plan.sampleRate)) and \(TimeText.clock(frames: plan.endFrame, sampleRate: plan.sampleRate))")
        }
        let dev = try device.open(sampleRate: plan.sampleRate, captureChannels: 0,
                                  playbackChannels: max(2, click?.outputChannels.max() ?? 0))
        var options = DeviceOptions.engineOptions()
        options.click = click
        let engine: Engine
        do { engine = try Engine(device: dev, take: nil, playback: plan, options: options) } catch {
            dev.stop()
            throw error
        }
        if !json { Terminal.err("playing on \(dev.configuration)\n") }
        var line = StatusLine(label: "playing", file: target, sampleRate: plan.sampleRate, json: json)
        try engine.start()
        while !engine.isDone {
            if StopSignals.requested { engine.stop() }
            let s = engine.status()
            line.update(s, newXruns: engine.drainXruns(), elapsedFrames: s.positionFrame)
            usleep(50_000)
        }
        let summary = try engine.finish()
        line.update(engine.status(), newXruns: [], elapsedFrames: summary.positionFrame, force: true)
        line.finish()
        if let error = summary.error { throw RecordFailure(message: error) }
        return ExitCode.ok
    }
}
