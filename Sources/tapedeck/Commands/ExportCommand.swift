import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import Foundation
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
    }

    func run() throws -> Int32 {
        guard let container = AudioContainer(pathExtension: output) else {
            throw UsageError("export: -o '\(output)' must end in .wav or .flac")
        }
        let session = try folder.load()
        let end = session.endFrame
        let range: FrameRange
        if let text = rangeText {
            range = try TimeText.range(from: text, tempoMap: session.tempoMap, defaultEnd: end, field: "export: --range")
        } else {
            guard end > 0 else { throw UsageError("export: \(folder.path.terminalSafe) has no audio to export") }
            range = FrameRange(startFrame: 0, endFrame: end)
        }
        if let problem = folder.exportProblem(output, session: session) {
            throw UsageError("export: -o '\(output.terminalSafe)' \(problem)")
        }
        if let stems, let problem = folder.exportProblem(stems, session: session, isFolder: true) {
            throw UsageError("export: --stems '\(stems.terminalSafe)' \(problem)")
        }
        try checkSpace(frames: range.frameCount, container: container, files: 1 + (stems == nil ? 0 : session.tracks.count))
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
        let cleaned = summary.nonFiniteSampleCount == 0 ? ""
            : ", \(summary.nonFiniteSampleCount) NaN/infinite sample\(summary.nonFiniteSampleCount == 1 ? "" : "s") replaced by silence"
        Terminal.out("exported \(output.terminalSafe): \(length) (\(summary.frameCount) frames), peak \(Decibels.text(summary.peakDecibels)) dBFS, \(formatSeconds(seconds)) s (\(Int(speed.rounded()))× real time)\(summary.stemPaths.isEmpty ? "" : ", \(summary.stemPaths.count) stems in \((stems ?? "").terminalSafe)")\(cleaned)")
        return ExitCode.ok
    }

    /// Refuses a WAV export that cannot fit on its disk before rendering any of it (a
    /// session reaching far out on the timeline would otherwise render for hours first).
    private func checkSpace(frames: Int64, container: AudioContainer, files: Int) throws(AudioFileError) {
        guard container == .wav else { return }
        let bytesPerFrame = Int64(2 * (encoding ?? .int24).bits / 8)
        let (needed, overflow) = frames.multipliedReportingOverflow(by: bytesPerFrame * Int64(files))
        var fs = statvfs()
        let dir = (output as NSString).deletingLastPathComponent
        guard statvfs(dir.isEmpty ? "." : dir, &fs) == 0 else { return }
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        if overflow || needed > free {
            let mb = { (b: Int64) in "\(b / 1_000_000) MB" }
            throw AudioFileError(path: output, reason: "the export needs \(overflow ? "more than 9 EB" : mb(needed)) but the disk has \(mb(free)) free; choose a --range or another disk")
        }
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
