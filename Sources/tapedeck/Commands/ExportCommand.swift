import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// `tapedeck export`: mixes a session to a stereo WAV or FLAC file.
struct ExportCommand: Command {
    static let name = "export"
    static let summary = "mix a session to a WAV or FLAC file (optionally per-track stems)"
    static let usage = """
    usage: tapedeck export SESSION -o FILE.wav|FILE.flac [--bits 16|24|32f] [--range A-B] [--stems DIR]
                           [--speed R] [--mode stretch|varispeed] [--pitch SEMITONES] [--quality best|fast]
                           [--fx CHAIN] [--threads N]

    Mixes every audible track (region gain and fades, track gain, pan, mute, solo) to a
    stereo file at the session rate. Mono tracks pan with the constant-power law (-3 dB each
    side at centre); stereo tracks use balance (unity at centre). Default depth: 24-bit.
    --range limits the span (default: start to the end of the last region).
    --stems DIR also writes each audible track alone, post fader and pan.
    Each track's playback chain runs before its fader; the session's master chain runs on
    the mix (--fx CHAIN replaces it for this export, e.g. --fx 'comp:-18:ratio=3,limiter').
    Tracks render in parallel, one thread per core (--threads N to choose); the result is
    the same bits whatever the thread count.
    --speed R (1/32...32; 0.5, 1/2, 50% all mean half speed) renders the mix faster or slower:
    --mode stretch (default) keeps the pitch (Rubber Band), varispeed lets it follow the
    speed like tape (libsamplerate). --pitch shifts by semitones (0.5 = 50 cents) at any
    speed. Stretched material, including regions with their own rate, is rendered with
    Rubber Band's offline R3 "finer" engine (--quality best) or R2 "faster" (--quality fast).

    example: tapedeck export song.tapedeck -o song.flac --bits 24
    example: tapedeck export song.tapedeck -o chorus.wav --range 1:00-1:30 --bits 16
    example: tapedeck export song.tapedeck -o practice.wav --speed 0.7 --pitch -2
    """

    let folder: SessionFolder
    let output: String
    let encoding: SampleEncoding?
    let rangeText: String?
    let stems: String?
    let timePitch: TimePitchSettings
    let quality: StretchQuality
    let masterChain: String?
    let threads: Int?

    init(arguments: inout Arguments) throws {
        guard let out = try arguments.option("-o", "--output") else {
            throw UsageError("export: missing -o FILE.wav|FILE.flac")
        }
        output = out
        if let bits = try arguments.option("--bits") {
            guard let e = SampleEncoding(rawValue: bits) else {
                throw UsageError("export: --bits '\(bits)' must be 16, 24 or 32f")
            }
            encoding = e
        } else {
            encoding = nil
        }
        rangeText = try arguments.option("--range")
        stems = try arguments.option("--stems")
        timePitch = try TimePitchOptions.parse(&arguments)
        let q = try arguments.option("--quality") ?? "best"
        guard let quality = StretchQuality(rawValue: q) else {
            throw UsageError("export: --quality '\(q)' must be best or fast")
        }
        self.quality = quality
        masterChain = try arguments.option("--fx")
        if let fx = masterChain { _ = try Chain(parsing: fx) }  // a typo is a usage error, before any work
        threads = try arguments.intOption("--threads", in: 1...64)
        folder = SessionFolder(path: try arguments.required("a session folder"))
        guard let container = AudioContainer(pathExtension: output) else {
            throw UsageError("export: -o '\(output)' must end in .wav or .flac")
        }
        // A depth the container cannot hold is a usage mistake, found before anything is read.
        if let problem = AudioFileFormat(container: container, encoding: encoding ?? .int24, sampleRate: 48000, channelCount: 2).problem() {
            throw UsageError("export: --bits \(encoding?.rawValue ?? "24") with -o \(output): \(problem)")
        }
        self.container = container
    }

    let container: AudioContainer

    func run() throws -> Int32 {
        let session = try folder.load()
        let end = session.endFrame
        let range: FrameRange
        if let text = rangeText {
            range = try TimeText.range(from: text, tempoMap: session.tempoMap, defaultEnd: end)
            guard range.startFrame < end else {
                throw UsageError("export: --range \(text) starts at or after the end of the session's audio (\(TimeText.clock(frames: end, sampleRate: session.sampleRate))): it would be silence")
            }
        } else {
            guard end > 0 else { throw UsageError("export: \(folder.path) has no audio to export") }
            range = FrameRange(startFrame: 0, endFrame: end)
        }
        if let stems {
            var st = stat()
            if stat(stems, &st) != 0 && mkdir(stems, 0o755) != 0 {
                throw AudioFileError(path: stems, reason: "cannot create the stems folder: \(String(cString: strerror(errno)))")
            }
        }
        let request = Mixdown.Request(session: session, folder: folder, range: range, outputPath: output,
                                      container: container, encoding: encoding ?? .int24, stemsFolder: stems,
                                      timePitch: timePitch, quality: quality, masterChain: masterChain,
                                      workerCount: threads ?? Mixdown.defaultWorkerCount)
        var bar = ProgressBar(label: "exporting")
        let started = monotonicSeconds()
        let summary = try Mixdown(request).run { bar.update($0) }
        bar.finish()
        let seconds = monotonicSeconds() - started
        let length = TimeText.clock(frames: summary.frameCount, sampleRate: session.sampleRate)
        let speed = seconds > 0 ? Double(summary.frameCount) / Double(session.sampleRate) / seconds : 0
        Terminal.out("exported \(output): \(length) (\(summary.frameCount) frames), peak \(Decibels.text(summary.peakDecibels)) dBFS, \(formatSeconds(seconds)) s (\(Int(speed.rounded()))× real time)\(summary.stemPaths.isEmpty ? "" : ", \(summary.stemPaths.count) stems in \(stems ?? "")")\(summary.clipText)")
        return ExitCode.ok
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// `1.234` style seconds.
func formatSeconds(_ s: Double) -> String {
    let ms = Int((s * 1000).rounded())
    let frac = String(ms % 1000)
    return "\(ms / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac)"
}
