import TapedeckCore
import TapedeckIO
import TapedeckEngine
import TapedeckDevices

/// `tapedeck calibrate`: measures a device's true round trip through a loopback and stores
/// what ALSA does not report, so recorded audio lands where it was played.
struct CalibrateCommand: Command {
    static let spec = CommandSpec(
        name: "calibrate", summary: "measure a device's round-trip latency through a loopback and store it",
        synopsis: ["calibrate --device D [options]"],
        options: SharedOptions.device + [
            OptionSpec("--channel", value: "N", "device input the loopback comes into (default 1)"),
            OptionSpec("--sample-rate", value: "HZ", "rate to measure at (default 48000)"),
            OptionSpec(flag: "--dry-run", "measure and print, but store nothing"),
        ],
        details: """
        Connect an output of the device to an input (a cable, or a loopback device), then run
        this. It plays eight clicks, records them back, and finds the round trip to the frame.
        What the device does not report — converters, USB, cables: the residual — is stored per
        device in $XDG_CONFIG_HOME/tapedeck/latency (default ~/.config/tapedeck/latency) and
        added to every later take placed on that device (the screen's, record's, ctl's, a
        punch's, every loop pass's). What the device reports is read live at each take (ALSA:
        the playback buffer; JACK: its ports' latencies, as connected now), so one calibration
        holds at every --period, --periods and JACK buffer size. On JACK the residual is the
        server's (JACK_DEFAULT_SERVER), whichever client name records. A loop that is open, or
        that comes back by two paths, is refused and nothing is stored. An xrun that costs
        audio while it measures starts the measurement over (the line 'xruns' says how many
        did); after 15 s of them it gives up, says how many, and stores nothing.

        \(SharedOptions.alsaEnvironment)
        """,
        examples: ["tapedeck calibrate --device hw:1 --period 128 --periods 2"])

    var device: DeviceOptions
    var channel: Int
    var sampleRate: Int
    var dryRun: Bool

    init(arguments: inout Arguments) throws {
        device = try DeviceOptions(arguments: &arguments)
        channel = try arguments.intOption("--channel", in: 1...256) ?? 1
        sampleRate = try arguments.intOption("--sample-rate", in: 1000...768_000) ?? 48000
        dryRun = arguments.flag("--dry-run")
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // Read the file first: a broken one should stop us before any sound is made.
        let path = LatencyOffsets.defaultPath
        let before = try LatencyOffsets.load(path: path)
        // And where it would be stored: never inside what a session keeps.
        if !dryRun { try WriteGuard.check(path, as: "calibrate") }
        let dev = try device.open(sampleRate: sampleRate, captureChannels: channel, playbackChannels: 2)
        let config = dev.configuration
        let key = dev.calibrationName
        Terminal.err("measuring \(config)\n")
        var settings = LatencyCalibrator.Settings()
        settings.inputChannel = channel
        let result = try LatencyCalibrator.measure(device: dev, settings: settings)
        func ms(_ frames: Int64) -> String { "\((Double(frames) * 10_000 / Double(config.sampleRate)).rounded() / 10) ms" }
        let dB = result.level == 0 ? "-inf" : Decibels.text(Decibels.fromLinear(Double(abs(result.level))))
        var lines = [
            "round trip  \(result.measuredFrames) frames (\(ms(result.measuredFrames)))",
            "reported    \(result.reportedFrames) frames by \(result.backend) (capture \(result.reportedCaptureFrames) + playback \(result.reportedPlaybackFrames))",
            "residual    \(result.extraFrames) frames (\(ms(result.extraFrames))): what \(result.backend) does not report",
            "click       \(dB) dBFS back\(result.level < 0 ? ", polarity inverted" : "")\(result.spreadFrames > 0 ? ", spread \(result.spreadFrames) frames" : "")",
        ]
        if result.spoiledRuns > 0 {
            lines.append("xruns       \(result.spoiledRuns) cost audio while measuring; measured again after each")
        }
        if let old = before.frames[key], old != result.extraFrames { lines.append("previous    \(old) frames") }
        if dryRun {
            lines.append("not stored (--dry-run)")
        } else {
            try LatencyOffsets.store(result.extraFrames, forDevice: key, path: path)
            lines.append("stored      \(key.terminalSafe) = \(result.extraFrames) in \(path)")
        }
        Terminal.out(lines.joined(separator: "\n"))
        return ExitCode.ok
    }
}
