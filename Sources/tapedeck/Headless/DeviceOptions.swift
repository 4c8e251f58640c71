import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// The device flags shared by `record` and `play`: `--device`, `--period`, `--periods`,
/// `--device-format`, plus the `TAPEDECK_ALSA_CONFIG` environment variable.
struct DeviceOptions {
    var name: String
    var periodFrames: Int
    var periodCount: Int
    var formats: [DeviceSampleFormat]

    init(arguments: inout Arguments) throws(UsageError) {
        name = try arguments.option("--device") ?? "default"
        periodFrames = try arguments.intOption("--period", in: 16...65536) ?? 256
        periodCount = try arguments.intOption("--periods", in: 2...64) ?? 3
        if let text = try arguments.option("--device-format") {
            guard let f = DeviceSampleFormat(userText: text) else {
                throw UsageError("\(arguments.command): --device-format '\(text)' must be float, s32, s24, s24_3 or s16")
            }
            formats = [f]
        } else {
            formats = DeviceSampleFormat.allCases
        }
    }

    /// Opens the device through `TAPEDECK_ALSA_CONFIG` when set, the global config otherwise.
    func open(sampleRate: Int, captureChannels: Int, playbackChannels: Int) throws(DeviceError) -> ALSADuplexDevice {
        let config = try ALSAConfig.fromEnvironment()
        let request = DeviceRequest(name: name, sampleRate: sampleRate, captureChannels: captureChannels,
                                    playbackChannels: playbackChannels, periodFrames: periodFrames,
                                    periodCount: periodCount, formats: formats, exactRate: true)
        // libasound prints its own "ALSA lib pcm.c:…" lines for a failed open; the error we
        // throw says the same in one line, so keep stderr clean while opening.
        return try withStderrSilenced { () throws(DeviceError) in try ALSADuplexDevice(request: request, config: config) }
    }

    /// Engine options, with the test hooks: `TAPEDECK_TEST_STALL=FRAME:MS` stalls the audio
    /// thread once (a real xrun on a paced device), `TAPEDECK_TEST_WRITER_STALL=FRAME:MS`
    /// stalls the capture writer once when a take reaches FRAME (a disk that stops
    /// answering), `TAPEDECK_TEST_CAPTURE_RING=SECONDS` sizes the capture rings.
    static func engineOptions() -> EngineOptions {
        var options = EngineOptions()
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

/// Runs `body` with stderr pointed at /dev/null (C libraries that print on failure).
func withStderrSilenced<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    let saved = dup(STDERR_FILENO)
    let null = open("/dev/null", O_WRONLY)
    if null >= 0 { dup2(null, STDERR_FILENO); close(null) }
    defer { if saved >= 0 { dup2(saved, STDERR_FILENO); close(saved) } }
    return try body()
}
