import Foundation
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
    static let spec = CommandSpec(
        name: "export", summary: "mix a session to a WAV, FLAC, MP3 or Opus file (optionally per-track stems, loudness-normalised)",
        synopsis: ["export SESSION -o FILE.wav|FILE.flac|FILE.mp3|FILE.opus [options]", "export SESSION --midi -o FILE.mid [--range A-B]"],
        positionals: [PositionalSpec("SESSION", complete: .session)],
        options: [
            OptionSpec("--output", "-o", value: "FILE", "the file to write: .wav, .flac, .mp3 or .opus", complete: .file),
            OptionSpec("--format", value: "FORMAT", "the file's format when its name does not say it", allowed: ["wav", "flac", "mp3", "opus"]),
            OptionSpec("--bits", value: "BITS", "sample depth (default 24; FLAC is 16 or 24)", allowed: ["16", "24", "32f"]),
            OptionSpec("--bitrate", value: "KBPS", "MP3 or Opus: constant bit rate in kbit/s (default MP3 128 mono, 192 stereo; Opus 64, 128)"),
            OptionSpec("--tag", value: "KEY=VALUE", "title, artist, album or date stored in the file (repeatable; title defaults to the session's name)"),
            OptionSpec("--range", value: "A-B", "the span to export (default: start to the end of the last region)"),
            OptionSpec("--stems", value: "DIR", "also write each audible track alone, post fader and pan", complete: .directory),
        ] + SharedOptions.timePitch + [
            OptionSpec("--quality", value: "Q", "stretch engine: Rubber Band R3 finer (best, default) or R2 faster (fast); or, for MP3 and Opus, a variable bit rate at 0 (best) to 10 (smallest)"),
            OptionSpec("--fx", value: "CHAIN", "master chain for this export (replaces the session's)"),
            OptionSpec("--threads", value: "N", "tracks rendered in parallel (default: one per core)"),
            OptionSpec("--normalize", value: "LUFS|NAME", "set the mix's integrated loudness (EBU R128): -16LUFS, or podcast, podcast-mono, broadcast, broadcast-mono"),
            OptionSpec("--true-peak", value: "DBTP", "with --normalize: the highest true peak allowed, at 32× oversampling (default -1)"),
            OptionSpec("--chapters", value: "FILE", "also write the markers inside the range as podcast chapters: FILE.json (Podcasting 2.0 JSON chapters) or FILE.txt (HH:MM:SS.mmm Title lines)", complete: .file),
            OptionSpec("--tail", value: "SECONDS|auto", "render past the end for effects' echoes and decays: SECONDS more, or auto (until every strip is under -90 dBFS, at most 60 s)"),
            OptionSpec("--markers", value: "WHICH", "markers written as cue points and chapters: named (the session's own, default) or all (lost-input markers too: xruns, dropped input)", allowed: ["named", "all"]),
            OptionSpec(flag: "--midi", "write the session's MIDI as a Standard MIDI File (-o FILE.mid): one track per track with MIDI regions"),
        ],
        details: """
        Mixes every audible track (region gain and fades, track gain, pan, mute, solo) to a
        stereo file at the session rate. Mono tracks pan with the constant-power law (-3 dB each
        side at centre); stereo tracks use balance (unity at centre).
        Each track's playback chain runs before its fader; the session's master chain runs on
        the mix (--fx CHAIN replaces it for this export, e.g. --fx 'comp:-18:ratio=3,limiter').
        Tracks render in parallel; the result is the same bits whatever the thread count.
        --speed renders the mix faster or slower (stretch keeps the pitch, varispeed lets it
        follow like tape); --pitch shifts by semitones at any speed. Stretched material,
        including regions with their own rate, is rendered with Rubber Band's offline engine.
        --normalize measures the whole export's integrated loudness (libebur128, ITU-R BS.1770)
        and applies one gain so it reads the target. Where that would take the true peak,
        measured at 32× oversampling, over the --true-peak ceiling, a look-ahead true-peak
        limiter turns those moments down (the line says by how much and for how long); the
        file is measured as written and written again until it reads the target under the
        ceiling. Named targets: podcast (-16 LUFS, -1 dBTP), podcast-mono (-19 LUFS, a mono
        file), broadcast (EBU R128: -23 LUFS, -1 dBTP), broadcast-mono (-23 LUFS, a mono
        file); --true-peak overrides a name's ceiling. Stems get the same gain and limiter
        curve, so they still add up to the mix.
        --midi writes the MIDI instead: a format-1 Standard MIDI File with the session's tempo
        map (960 ticks a quarter), one track per track with MIDI regions (those that play,
        layered regions all sounding), named after it, --range cut and moved to start at 0.
        """,
        examples: ["tapedeck export song.tapedeck -o song.flac --bits 24",
                   "tapedeck export song.tapedeck --midi -o song.mid",
                   "tapedeck export song.tapedeck -o chorus.wav --range 1:00-1:30 --bits 16",
                   "tapedeck export song.tapedeck -o practice.wav --speed 0.7 --pitch -2",
                   "tapedeck export show.tapedeck -o episode.wav --normalize -16LUFS --true-peak -1",
                   "tapedeck export show.tapedeck -o episode.flac --normalize podcast"])

    let folder: SessionFolder
    let output: String
    let encoding: SampleEncoding?
    let rangeText: String?
    let stems: String?
    let timePitch: TimePitchSettings
    let quality: StretchQuality
    /// `--fx`, parsed where it was typed (a typo is a usage error, before any work).
    let masterChain: Chain?
    let threads: Int?
    let loudness: NormalizedMixdown.Target?
    /// `--chapters FILE`: the markers as podcast chapters beside the export.
    let chapters: String?

    let midi: Bool
    /// MP3 and Opus: `--bitrate` or a numeric `--quality`.
    let encoder: EncoderSetting?
    /// `--tag KEY=VALUE`s.
    let tags: FileTags
    /// `--markers all`: lost-input markers exported too.
    let allMarkers: Bool
    /// `--tail SECONDS|auto`, in seconds (nil: auto; 0: none).
    let tailSeconds: Double?

    init(arguments: inout Arguments) throws {
        midi = arguments.flag("--midi")
        guard let out = try arguments.option("-o", "--output") else {
            throw UsageError(midi ? "export: --midi needs -o FILE.mid" : "export: missing -o FILE.wav|FILE.flac")
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
        var encoder: EncoderSetting?
        if let number = Double(q), number.isFinite {
            guard (0...10).contains(number) else { throw UsageError("export: --quality \(q) must be 0 (best) to 10 (smallest) for MP3 and Opus") }
            encoder = .quality(number)
            quality = .best
        } else if let quality = StretchQuality(rawValue: q) {
            self.quality = quality
        } else {
            throw UsageError("export: --quality '\(q)' must be best or fast (the stretcher), or 0 to 10 (MP3 and Opus)")
        }
        if let kbps = try arguments.intOption("--bitrate", in: 6...2048) {
            if encoder != nil { throw UsageError("export: give --bitrate or a numeric --quality, not both") }
            encoder = .bitrate(kbps: kbps)
        }
        self.encoder = encoder
        var tags = FileTags()
        for t in try arguments.options("--tag") {
            guard let eq = t.firstIndex(of: "="), tags.set(String(t[..<eq]).trimmingCharacters(in: .whitespaces), String(t[t.index(after: eq)...])) else {
                throw UsageError("export: --tag '\(t.terminalSafe)' must be KEY=VALUE with KEY one of \(FileTags.keys.joined(separator: ", "))")
            }
        }
        self.tags = tags
        allMarkers = try arguments.option("--markers")?.lowercased() == "all"
        if let tail = try arguments.option("--tail") {
            if tail.lowercased() == "auto" {
                tailSeconds = nil
            } else if let seconds = Double(tail.trimmingCharacters(in: .whitespaces)), seconds.isFinite, (0...600).contains(seconds) {
                tailSeconds = seconds
            } else {
                throw UsageError("export: --tail '\(tail.terminalSafe)' must be seconds (0 to 600) or auto")
            }
        } else {
            tailSeconds = 0
        }
        let formatName = try arguments.option("--format")
        masterChain = try arguments.option("--fx").map { text throws(ChainError) in try Chain(parsing: text) }
        threads = try arguments.intOption("--threads", in: 1...64)
        let normalize = try arguments.option("--normalize")
        let ceiling = try arguments.option("--true-peak")
        if let normalize {
            let dBTP = try ceiling.map { t throws(UsageError) in
                try ExportCommand.level(t, option: "--true-peak", units: ["dbtp", "db"], in: -30...0)
            }
            if var named = NormalizedMixdown.Target.named(normalize.trimmingCharacters(in: .whitespaces)) {
                if let dBTP { named.truePeakCeilingDecibels = dBTP }
                loudness = named
            } else {
                let lufs = try ExportCommand.level(normalize, option: "--normalize", units: ["lufs", "lkfs"], in: -70...0)
                loudness = NormalizedMixdown.Target(integratedLUFS: lufs, truePeakCeilingDecibels: dBTP ?? -1)
            }
        } else {
            if ceiling != nil { throw UsageError("export: --true-peak needs --normalize (e.g. --normalize -16LUFS --true-peak -1)") }
            loudness = nil
        }
        chapters = try arguments.option("--chapters")
        if let chapters, PodcastChapters.format(forPath: chapters) == nil {
            throw UsageError("export: --chapters '\(chapters)' must end in .json (Podcasting 2.0 chapters) or .txt")
        }
        folder = SessionFolder(path: try arguments.required("a session folder"))
        if midi {
            if chapters != nil { throw UsageError("export: --chapters goes with an audio export (a MIDI file keeps its markers as the session's tempo map does not)") }
            let lower = output.lowercased()
            guard lower.hasSuffix(".mid") || lower.hasSuffix(".midi") else { throw UsageError("export: --midi writes a .mid file; -o '\(output)' is not one") }
            if encoding != nil || stems != nil || !timePitch.isIdentity || masterChain != nil || loudness != nil || threads != nil {
                throw UsageError("export: --midi writes MIDI only: --bits, --stems, --speed, --pitch, --fx, --normalize and --threads are for audio")
            }
            container = .wav
            return
        }
        let named = formatName.flatMap { AudioContainer(rawValue: $0.lowercased()) }
        let fromName = AudioContainer(exportExtension: output)
        if let named, let fromName, named != fromName {
            throw UsageError("export: --format \(named.rawValue) does not match -o '\(output)'")
        }
        guard let container = named ?? fromName else {
            throw UsageError("export: -o '\(output)' must end in .wav, .flac, .mp3 or .opus (or give --format)")
        }
        if encoder != nil && !container.isLossy {
            throw UsageError("export: --bitrate and a numeric --quality are for MP3 and Opus; \(container.rawValue.uppercased()) is lossless")
        }
        if container.isLossy && encoding != nil {
            throw UsageError("export: --bits is for WAV and FLAC; \(container.rawValue.uppercased()) takes --bitrate or --quality")
        }
        if let problem = AudioFileFormat(container: container, encoding: .int24, sampleRate: 48000, channelCount: loudness?.mono == true ? 1 : 2,
                                         encoder: encoder).problem() {
            throw UsageError("export: \(problem)")
        }
        // A depth the container cannot hold is a usage mistake, found before anything is read.
        if let problem = AudioFileFormat(container: container, encoding: encoding ?? .int24, sampleRate: 48000, channelCount: 2).problem() {
            throw UsageError("export: --bits \(encoding?.rawValue ?? "24") with -o \(output): \(problem)")
        }
        self.container = container
    }

    let container: AudioContainer

    func run(_ context: CommandContext) throws -> Int32 {
        let session = try folder.load()
        var bar = ProgressBar(label: "exporting")
        let (lines, warnings) = try render(session: session) { bar.update($0) }
        bar.finish()
        for warning in warnings { Terminal.err("tapedeck: warning: \(warning)\n") }
        for line in lines { Terminal.out(line) }
        return ExitCode.ok
    }

    /// The export the command line and the screen's export dialog both run: renders
    /// `session` (as it stands: the screen's, unsaved edits included) and returns what it has
    /// to say and its warnings. `progress` gets 0…1. Any thread.
    func render(session: Session, progress: (Double) -> Void) throws -> (lines: [String], warnings: [String]) {
        if midi { return ([try runMIDI(session)], []) }
        let end = session.endFrame
        let range: FrameRange
        if let text = rangeText {
            range = try TimeText.range(from: text, tempoMap: session.tempoMap, defaultEnd: end, field: "export: --range")
            guard range.startFrame < end else {
                throw UsageError("export: --range \(text.terminalSafe) starts at or after the end of the session's audio (\(TimeText.clock(frames: end, sampleRate: session.sampleRate))): it would be silence")
            }
        } else {
            guard end > 0 else { throw UsageError("export: \(folder.path.terminalSafe) has no audio to export") }
            range = FrameRange(startFrame: 0, endFrame: end)
        }
        // The session's chains, read once for the whole export (the write guard and every pass).
        let chains = SessionChains(session)
        let protected = try guardOutputs(session, chains: chains)
        try checkSpace(frames: range.frameCount, container: container, files: 1 + (stems == nil ? 0 : session.tracks.count))
        if let stems {
            var st = stat()
            if stat(stems, &st) != 0 && mkdir(stems, 0o755) != 0 {
                throw AudioFileError(path: stems, reason: "cannot create the stems folder: \(String(cString: strerror(errno)))")
            }
        }
        var request = Mixdown.Request(session: session, folder: folder, range: range, outputPath: output,
                                      container: container, encoding: encoding ?? .int24, stemsFolder: stems,
                                      timePitch: timePitch, quality: quality, masterChain: masterChain, chains: chains,
                                      workerCount: threads ?? Mixdown.defaultWorkerCount)
        request.encoder = encoder
        request.tags = tags
        request.allMarkers = allMarkers
        if let tailSeconds {
            request.tail = tailSeconds > 0 ? .frames(Int64((tailSeconds * Double(session.sampleRate)).rounded())) : .none
        } else {
            request.tail = .auto
        }
        let started = monotonicSeconds()
        let summary: Mixdown.Summary
        var loudnessLine: String?
        if let loudness {
            let result = try NormalizedMixdown(request, target: loudness).run { progress($0) }
            summary = result.summary
            let gain = (result.gainDecibels >= 0 ? "+" : "") + Decibels.text(result.gainDecibels)
            let limiter = result.limitedByTruePeak
                ? "; true-peak limiter: up to \(Decibels.text(result.limiterCutDecibels)) dB on \(formatSeconds(result.limiterSeconds)) s, under the \(Decibels.text(loudness.truePeakCeilingDecibels)) dBTP ceiling"
                : ""
            let missed = result.missed
                ? "; not met: \(Decibels.text(loudness.integratedLUFS)) LUFS under \(Decibels.text(loudness.truePeakCeilingDecibels)) dBTP was not reached (a compressor in --fx helps)"
                : ""
            loudnessLine = "loudness \(Decibels.text(result.measured.integratedLUFS)) → \(Decibels.text(result.result.integratedLUFS)) LUFS\(loudness.mono ? " mono" : "") (gain \(gain) dB), true peak \(Decibels.text(result.truePeak32Decibels)) dBTP (32× oversampled)" + limiter + missed
        } else {
            summary = try Mixdown(request).run { progress($0) }
        }
        var warnings = summary.warnings
        var chaptersLine: String?
        if let chapters {
            let cues = request.fileCues
            try PodcastChapters.write(cues, sampleRate: session.sampleRate, to: chapters, sessions: protected)
            chaptersLine = "chapters \(chapters.terminalSafe): \(cues.count) from the session's markers"
            if cues.isEmpty { warnings.append("no marker lies inside the export: \(chapters.terminalSafe) holds no chapters (add them with `tapedeck marker`)") }
        }
        let seconds = monotonicSeconds() - started
        let length = TimeText.clock(frames: summary.frameCount, sampleRate: session.sampleRate)
        let speed = seconds > 0 ? Double(summary.frameCount) / Double(session.sampleRate) / seconds : 0
        let cleaned = summary.nonFiniteSampleCount == 0 ? ""
            : ", \(summary.nonFiniteSampleCount) NaN/infinite sample\(summary.nonFiniteSampleCount == 1 ? "" : "s") replaced by silence"
        let line = ("exported \(output.terminalSafe): \(length) (\(summary.frameCount) frames), peak \(Decibels.text(summary.peakDecibels)) dBFS, \(formatSeconds(seconds)) s (\(Int(speed.rounded()))× real time)\(summary.tailText)\(summary.stemPaths.isEmpty ? "" : ", \(summary.stemPaths.count) stems in \((stems ?? "").terminalSafe)")\(cleaned)\(summary.clipText)")
        return ([line] + (loudnessLine.map { [$0] } ?? []) + (chaptersLine.map { [$0] } ?? []), warnings)
    }

    /// `export --midi`: the session's MIDI tracks into one Standard MIDI File.
    private func runMIDI(_ session: Session) throws -> String {
        let end = session.tracks.flatMap(\.activeMIDIRegions).map(\.timelineEndFrame).max() ?? 0
        guard end > 0 else { throw UsageError("export: \(folder.path.terminalSafe) has no MIDI regions to export") }
        var range: FrameRange?
        if let text = rangeText {
            let r = try TimeText.range(from: text, tempoMap: session.tempoMap, defaultEnd: end, field: "export: --range")
            guard r.startFrame < end else {
                throw UsageError("export: --range \(text.terminalSafe) starts at or after the end of the session's MIDI (\(TimeText.clock(frames: end, sampleRate: session.sampleRate)))")
            }
            range = r
        }
        let summary = try MIDIExporter.export(session: session, folder: folder, to: output, range: range,
                                              sessions: try guardOutputs(session))
        return "exported \(output.terminalSafe): \(summary.trackCount) MIDI track\(summary.trackCount == 1 ? "" : "s"), \(summary.eventCount) event\(summary.eventCount == 1 ? "" : "s")" + (summary.sysExCount > 0 ? ", \(summary.sysExCount) SysEx" : "")
    }

    /// Refuses, before any work, every output that could destroy part of a session (see
    /// ``WriteGuard``): the mix and its partial file, the chapters, the stems folder. Returns
    /// the session as protected, for the writes themselves.
    @discardableResult
    func guardOutputs(_ session: Session, chains: SessionChains? = nil) throws(WriteRefusal) -> [ProtectedSession] {
        let protected = [SessionReferences.protected(session, folder: folder, chains: chains)]
        try WriteGuard.check(output, as: "export: -o", sessions: protected)
        if !midi { try WriteGuard.check(output + ".partial", as: "export: -o", sessions: protected) }
        if let chapters { try WriteGuard.check(chapters, as: "export: --chapters", sessions: protected) }
        if let stems { try WriteGuard.check(stems, as: "export: --stems", sessions: protected, kind: .folder) }
        return protected
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

extension ExportCommand {
    /// `-16LUFS`, `-16 LUFS`, `-16`: a level with an optional unit, within `range`.
    static func level(_ text: String, option: String, units: [String], in range: ClosedRange<Double>) throws(UsageError) -> Double {
        var number = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let unit = units.first(where: { number.hasSuffix($0) }) { number.removeLast(unit.count) }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite else {
            throw UsageError("export: \(option) '\(text)' is not a level (e.g. \(option == "--normalize" ? "-16LUFS, or a target: \(NormalizedMixdown.Target.presetNames.joined(separator: ", "))" : "-1"))")
        }
        guard range.contains(value) else {
            throw UsageError("export: \(option) '\(text)' must be between \(Int(range.lowerBound)) and \(Int(range.upperBound))")
        }
        return value
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
