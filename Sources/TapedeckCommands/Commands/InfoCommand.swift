import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckUI

/// `tapedeck info SESSION|FILE`: describes an audio file or a session.
struct InfoCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "info", summary: "describe an audio file (format, peak, loudness, a plot) or a session (tracks, buses, routing, latency)",
        synopsis: ["info SESSION|FILE [--width COLUMNS] [--json]"],
        positionals: [PositionalSpec("SESSION|FILE", complete: .file)],
        options: [OptionSpec("--width", value: "COLUMNS", "width of the file's plots (default: the terminal's, else 72)"),
                  OptionSpec(flag: "--json", "the same as one JSON document (frames as numbers, levels in dB, null for -inf)")],
        details: """
        For an audio file: format, rate, channels, length, sample peak, and its loudness as
        EBU R128 measures it (libebur128): integrated loudness (LUFS), loudness range (LU) and
        true peak (dBTP); then a one-line waveform overview (peak per column) and a small plot
        of the momentary loudness over time. The plots use block characters in a UTF-8 locale
        and ASCII otherwise. A Tapedeck take also shows where it belongs.
        For a session: rate, tempo, meter, ranges, and every track and bus with its regions,
        output (when not the master), sends (level, pre- or post-fader, pan) and, for a bus,
        what feeds it; then the delay compensation: the output's total latency from the
        timeline (the slowest path through the buses plus the master chain) in frames and ms,
        and each strip whose output runs late (a bus with a look-ahead limiter or a latent
        plugin), which the mix lines up where it is summed.
        """,
        examples: ["tapedeck info song.tapedeck", "tapedeck info take.wav", "tapedeck info song.tapedeck --json"])

    let target: String
    let width: Int?
    let json: Bool

    init(arguments: inout Arguments) throws {
        width = try arguments.intOption("--width", in: 30...1000)
        json = arguments.flag("--json")
        target = try arguments.required("a session folder or an audio file")
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let folder = SessionFolder(path: target)
        if SessionFolder.isNamed(target) || folder.exists {
            try describe(session: try context.load(folder), folder: folder, context)
        } else {
            try describe(file: target, context)
        }
        return ExitCode.ok
    }

    private func describe(file: String, _ context: CommandContext) throws {
        let reader = try AudioFileReader(path: file)
        let plotColumns = max(10, (width ?? Terminal.columns ?? 72) - 12)
        var overview = ColumnPeaks(columns: plotColumns, frameCount: reader.frameCount)
        let loudness = try LoudnessAnalysis(channelCount: reader.channelCount, sampleRate: reader.sampleRate)
        var peaks = [Float](repeating: 0, count: reader.channelCount)
        var nonFinite: Int64 = 0
        let frames = try reader.forEachBlock { channels, n in
            for (c, buffer) in channels.enumerated() {
                // A NaN would hide from the peak (every comparison with it is false) and spoil
                // the loudness: count it and measure it as the silence it plays as.
                nonFinite += Int64(NonFiniteSamples.replace(buffer, count: n))
                peaks[c] = max(peaks[c], MixKernels.peak(buffer, frameCount: n))
            }
            loudness.add(channels, frameCount: n)
            overview.add(channels, frameCount: n)
        }
        if frames < reader.frameCount {
            throw AudioFileError(path: file, reason: "truncated: the header promises \(reader.frameCount) frames, only \(frames) could be read")
        }
        let report = loudness.finish()
        if json {
            var o: [String: Any] = [
                "file": file, "format": reader.formatDescription, "sample_rate": reader.sampleRate, "channels": reader.channelCount,
                "length_frames": reader.frameCount, "non_finite_samples": nonFinite,
                "peak_dbfs": peaks.map { RoutingText.decibels(Decibels.fromLinear(Double($0))) },
                "true_peak_dbtp": RoutingText.decibels(report.truePeakDecibels),
                "integrated_lufs": RoutingText.decibels(report.integratedLUFS), "loudness_range_lu": RoutingText.decibels(report.rangeLU),
            ]
            if let m = reader.metadata {
                o["take"] = ["session": m.session, "track_number": m.trackNumber ?? NSNull(), "track_name": m.trackName,
                             "take_number": m.takeNumber ?? NSNull(), "timeline_frame": m.timelineFrame, "latency_frames": m.latencyFrames, "latency": m.latencyParts,
                             "speed": m.speed, "device": m.device, "device_channels": m.deviceChannels, "input_chain": m.inputChain,
                             "started_at": m.startedAt] as [String: Any]
            }
            return try RoutingText.printJSON(o, to: context.console)
        }
        let peakText = peaks.map { Decibels.text(Decibels.fromLinear(Double($0))) }.joined(separator: " ")
        let glyphs = Terminal.localeIsUTF8 ? Glyphs.unicode : Glyphs.ascii
        let levels = LevelPlot.columns(report.momentaryLUFS, columns: plotColumns, stepFrames: Int64(max(1, reader.sampleRate / 10)),
                                       frameCount: reader.frameCount)
        let plot = LevelPlot.loudness(levels, rows: 5, glyphs: glyphs)
        context.console.out("""
        file      \(file.terminalSafe)
        format    \(reader.formatDescription.terminalSafe)
        rate      \(reader.sampleRate) Hz
        channels  \(reader.channelCount)\(reader.channelCount > 2 ? " (\(reader.channelLayout.summary)); on a track: \(StereoDownmix(layout: reader.channelLayout).description)" : "")
        length    \(TimeText.clock(frames: reader.frameCount, sampleRate: reader.sampleRate)) (\(reader.frameCount) frames)
        peak      \(peakText) dBFS sample peak, \(Decibels.text(report.truePeakDecibels)) dBTP true peak\(nonFinite == 0 ? "" : " (and \(nonFinite) NaN/infinite samples, which play as silence)")
        loudness  \(Decibels.text(report.integratedLUFS)) LUFS integrated, \(Decibels.text(report.rangeLU)) LU range
        waveform  \(LevelPlot.overview(peakDecibels: overview.decibels, glyphs: glyphs))
        LUFS      momentary loudness over time
        \(plot.map { "    " + $0 }.joined(separator: "\n"))
        """)
        // A Tapedeck take says where it belongs (TakeMetadata); other files have nothing here.
        if let m = reader.metadata {
            let track = m.trackNumber.map { "track \($0)" + (m.trackName.isEmpty ? "" : " (\(m.trackName.terminalSafe))") } ?? "no track"
            let channels = m.deviceChannels.isEmpty ? "" : " in " + m.deviceChannels.map(String.init).joined(separator: ",")
            var lines = ["take      \(m.session.isEmpty ? "no session" : m.session.terminalSafe), \(track)" + (m.takeNumber.map { ", take \($0)" } ?? ""),
                         "position  \(TimeText.clock(frames: m.timelineFrame, sampleRate: reader.sampleRate)) (frame \(m.timelineFrame))"
                             + (m.latencyFrames != 0 ? ", latency \(m.latencyFrames) frames" : ""),
                         "speed     \(m.speed)×",
                         "device    \(m.device.isEmpty ? "unknown" : m.device.terminalSafe)\(channels)",
                         "input fx  \(m.inputChain.isEmpty ? "(none)" : m.inputChain.terminalSafe)"]
            if !m.latencyParts.isEmpty { lines.append("placed    \(m.latencyParts.terminalSafe) earlier than it arrived") }
            if !m.startedAt.isEmpty { lines.append("recorded  \(m.startedAt.terminalSafe)") }
            context.console.out(lines.joined(separator: "\n"))
        }
    }

    /// The downmix of every audio region's file that is wider than stereo, by the region's
    /// file name. Each distinct file is opened once; one that cannot be opened is left out
    /// (`info` describes a session whatever state its files are in).
    static func downmixes(session: Session, folder: SessionFolder) -> [String: StereoDownmix] {
        var out: [String: StereoDownmix] = [:]
        var seen = Set<String>()
        for track in session.tracks {
            for region in track.regions where !region.isMIDI && seen.insert(region.file).inserted {
                guard let reader = try? AudioFileReader(path: folder.absolutePath(of: region.file), blockFrames: 16) else { continue }
                if reader.channelCount > 2 { out[region.file] = StereoDownmix(layout: reader.channelLayout) }
                reader.close()
            }
        }
        return out
    }
}

/// The sample peak of each of `columns` equal spans of a file, gathered block by block.
struct ColumnPeaks {
    private var peaks: [Float]
    private let frameCount: Int64
    private var position: Int64 = 0

    init(columns: Int, frameCount: Int64) {
        peaks = Array(repeating: 0, count: columns)
        self.frameCount = max(1, frameCount)
    }

    /// Takes the next `frameCount` frames of every channel.
    mutating func add(_ channels: [UnsafeMutablePointer<Float>], frameCount n: Int) {
        let columns = Int64(peaks.count)
        var i = 0
        while i < n {
            let column = min(columns - 1, (position + Int64(i)) * columns / frameCount)
            // The first frame of the next column, so each column is scanned in one run.
            let nextStart = (column + 1) * frameCount / columns + ((column + 1) * frameCount % columns == 0 ? 0 : 1)
            let end = column == columns - 1 ? n : min(n, max(i + 1, Int(nextStart - position)))
            for channel in channels {
                peaks[Int(column)] = max(peaks[Int(column)], MixKernels.peak(channel + i, frameCount: end - i))
            }
            i = end
        }
        position += Int64(n)
    }

    /// Each column's peak in dBFS.
    var decibels: [Double] { peaks.map { Decibels.fromLinear(Double($0)) } }
}
