import TapedeckCore
import TapedeckEngine
import TapedeckDevices
#if canImport(Glibc)
import Glibc
#endif

/// The device flags shared by `record` and `play`: `--device`, `--period`, `--periods`,
/// `--device-format`, `--threads`, plus the `TAPEDECK_ALSA_CONFIG` environment variable.
struct DeviceOptions {
    var name: String
    var periodFrames: Int
    var periodCount: Int
    var formats: [DeviceSampleFormat]
    var jack: JACKOptions
    /// `--threads` (or the config's `threads = N`); nil: one per core.
    var threads: Int?

    init(arguments: inout Arguments) throws(UsageError) {
        name = try arguments.option("--device") ?? "default"
        guard !name.isEmpty else { throw UsageError("\(arguments.command): --device needs a name (see 'tapedeck devices')") }
        let period = try arguments.intOption("--period", in: 16...65536)
        let periods = try arguments.intOption("--periods", in: 2...64)
        periodFrames = period ?? 256
        periodCount = periods ?? 3
        let formatText = try arguments.option("--device-format")
        if let text = formatText {
            guard let f = DeviceSampleFormat(userText: text) else {
                throw UsageError("\(arguments.command): --device-format '\(text)' must be float, s32, s24, s24_3 or s16")
            }
            formats = [f]
        } else {
            formats = DeviceSampleFormat.allCases
        }
        jack = try JACKOptions(arguments: &arguments, deviceName: name)
        threads = try RenderThreadsOption.parse(&arguments, command: arguments.command)
        if isJACK, let flag = period != nil ? "--period" : periods != nil ? "--periods" : formatText != nil ? "--device-format" : nil {
            throw UsageError("\(arguments.command): \(flag) is for ALSA: the JACK server sets its own buffer size and format (jack_bufsize changes it)")
        }
    }

    /// Whether the device is a JACK client (`jack`, `jack:CLIENT`).
    var isJACK: Bool { JACKRequest.clientName(inDeviceName: name) != nil }

    /// Opens the device: a JACK client (inputs named after `tracks`, the tempo map published
    /// as timebase master when asked), or an ALSA PCM through `TAPEDECK_ALSA_CONFIG` when set,
    /// the global config otherwise.
    func open(sampleRate: Int, captureChannels: Int, playbackChannels: Int, tracks: [(name: String, channels: [Int])] = [],
              tempoMap: TempoMap? = nil) throws(DeviceError) -> AudioDevice {
        // The headless policy (DeviceChoice): exactly the inputs asked for, or no device.
        try choice().open(sampleRate: sampleRate, inputs: [captureChannels], outputs: [playbackChannels],
                          tracks: tracks, tempoMap: tempoMap).device
    }

    /// The device choice these flags make.
    private func choice() throws(DeviceError) -> DeviceChoice {
        DeviceChoice(name: name, config: try ALSAConfig.fromEnvironment(), periodFrames: periodFrames, periodCount: periodCount,
                     formats: formats, jack: jack)
    }

    /// Opens the device to play `session`: with `playbackChannels` outputs, raised to the
    /// highest device output a strip is routed to (a cue mix on out:3-4), since outputs the
    /// device was not opened with are never heard. A device that cannot open that many is
    /// opened with `playbackChannels`, and a warning names the strips that go unheard.
    func open(sampleRate: Int, captureChannels: Int, playbackChannels: Int, routing session: Session,
              tracks: [(name: String, channels: [Int])] = [], tempoMap: TempoMap? = nil) throws(DeviceError) -> AudioDevice {
        let routed = RoutingText.deviceOutputs(of: session)
        guard playbackChannels > 0, let needed = routed.map(\.highest).max(), needed > playbackChannels else {
            return try open(sampleRate: sampleRate, captureChannels: captureChannels, playbackChannels: playbackChannels,
                            tracks: tracks, tempoMap: tempoMap)
        }
        let opened = try choice().open(sampleRate: sampleRate, inputs: [captureChannels], outputs: [needed, playbackChannels],
                                       tracks: tracks, tempoMap: tempoMap)
        if opened.outputs < needed, let error = opened.refusal {
            let device = opened.device
            let unheard = routed.filter { $0.highest > playbackChannels }.map { "\($0.name.terminalSafe) (\($0.output))" }
            Terminal.err("tapedeck: warning: \(name.terminalSafe) does not open \(needed) outputs (\(error.description)); "
                         + "playing on \(playbackChannels), so \(unheard.joined(separator: ", ")) \(unheard.count == 1 ? "is" : "are") not heard\n")
            return device
        }
        return opened.device
    }

    /// Engine options, with the test hooks: `TAPEDECK_TEST_STALL=FRAME:MS` stalls the audio
    /// thread once (a real xrun on a paced device), `TAPEDECK_TEST_WRITER_STALL=FRAME:MS`
    /// stalls the capture writer once when a take reaches FRAME (a disk that stops
    /// answering), `TAPEDECK_TEST_CAPTURE_RING=SECONDS` sizes the capture rings.
    static func engineOptions(threads: Int? = nil) -> EngineOptions {
        var options = EngineOptions()
        if let threads { options.renderThreads = threads }
        func pair(_ name: String) -> (Int64, Int)? {
            guard let raw = getenv(name) else { return nil }
            let parts = String(cString: raw).split(separator: ":")
            guard parts.count == 2, let frame = Int64(parts[0]), let ms = Int(parts[1]) else { return nil }
            return (frame, ms)
        }
        if let (frame, ms) = pair("TAPEDECK_TEST_STALL") {
            options.stallAtFrame = frame
            options.stallMilliseconds = ms
        }
        if let (frame, ms) = pair("TAPEDECK_TEST_WRITER_STALL") {
            options.writerStallAtFrame = frame
            options.writerStallMilliseconds = ms
        }
        if let raw = getenv("TAPEDECK_TEST_CAPTURE_RING"), let seconds = Double(String(cString: raw)), seconds > 0 {
            options.captureRingSeconds = seconds
        }
        return options
    }
}

/// Parses `1,2` (1-based device channels).
func parseChannelList(_ text: String, command: String) throws(UsageError) -> [Int] {
    var out: [Int] = []
    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
        guard let v = Int(part), (1...256).contains(v) else {
            throw UsageError("\(command): --channels '\(text)' must be device channels like 1 or 1,2 (1...256)")
        }
        guard !out.contains(v) else { throw UsageError("\(command): --channels '\(text)' names channel \(v) twice") }
        out.append(v)
    }
    return out
}

