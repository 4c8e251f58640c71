import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckUI

/// `tapedeck info SESSION|FILE`: describes an audio file or a session.
struct InfoCommand: Command {
    static let spec = CommandSpec(
        name: "info", summary: "describe an audio file (format, peak, loudness, a plot) or a session (tracks, regions)",
        synopsis: ["info SESSION|FILE [--width COLUMNS]"],
        positionals: [PositionalSpec("SESSION|FILE", complete: .file)],
        options: [OptionSpec("--width", value: "COLUMNS", "width of the file's plots (default: the terminal's, else 72)")],
        details: """
        For an audio file: format, rate, channels, length, sample peak, and its loudness as
        EBU R128 measures it (libebur128): integrated loudness (LUFS), loudness range (LU) and
        true peak (dBTP); then a one-line waveform overview (peak per column) and a small plot
        of the momentary loudness over time. The plots use block characters in a UTF-8 locale
        and ASCII otherwise. A Tapedeck take also shows where it belongs.
        For a session: rate, tempo, meter, ranges, and every track with its regions.
        """,
        examples: ["tapedeck info song.tapedeck", "tapedeck info take.wav"])

    let target: String
    let width: Int?

    init(arguments: inout Arguments) throws {
        width = try arguments.intOption("--width", in: 30...1000)
        target = try arguments.required("a session folder or an audio file")
    }

    func run() throws -> Int32 {
        let folder = SessionFolder(path: target)
        if target.hasSuffix(".tapedeck") || target.hasSuffix(".tapedeck/") || folder.exists {
            try describe(session: try folder.load(), folder: folder)
        } else {
            try describe(file: target)
        }
        return ExitCode.ok
    }

    private func describe(file: String) throws {
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
        let peakText = peaks.map { Decibels.text(Decibels.fromLinear(Double($0))) }.joined(separator: " ")
        let glyphs = Terminal.localeIsUTF8 ? Glyphs.unicode : Glyphs.ascii
        let levels = LevelPlot.columns(report.momentaryLUFS, columns: plotColumns, stepFrames: Int64(max(1, reader.sampleRate / 10)),
                                       frameCount: reader.frameCount)
        let plot = LevelPlot.loudness(levels, rows: 5, glyphs: glyphs)
        Terminal.out("""
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
            if !m.startedAt.isEmpty { lines.append("recorded  \(m.startedAt.terminalSafe)") }
            Terminal.out(lines.joined(separator: "\n"))
        }
    }

    private func describe(session: Session, folder: SessionFolder) throws {
        let map = session.tempoMap
        func clock(_ f: Int64) -> String { TimeText.clock(frames: f, sampleRate: session.sampleRate) }
        func range(_ r: FrameRange?, _ on: Bool) -> String {
            guard let r else { return "none" }
            return "\(clock(r.startFrame))-\(clock(r.endFrame))\(on ? " (on)" : " (off)")"
        }
        var lines = [
            "session   \(folder.path.terminalSafe)",
            "rate      \(session.sampleRate) Hz",
            "tempo     \(session.tempoBPM) BPM, \(session.timeSignature)",
            "length    \(clock(session.endFrame)) (\(session.endFrame) frames, bar \(map.barsBeatsTicks(ofFrame: session.endFrame)))",
            "loop      \(range(session.loopRange, session.loopEnabled))",
            "punch     \(range(session.punchRange, session.punchEnabled))",
            "markers   \(session.markers.isEmpty ? "none" : session.markers.map { "\($0.name.terminalSafe)@\(clock($0.frame))" }.joined(separator: ", "))",
            "master    fader \(Fader.text(session.masterGainDecibels)) dB, \(session.masterChain.isEmpty ? "no effects" : session.masterChain.terminalSafe)",
            "tracks    \(session.tracks.count)",
        ] + (session.midiBindings.isEmpty ? [] : ["MIDI      " + session.midiBindings.map(\.description).joined(separator: ", ")])
        let downmixes = InfoCommand.downmixes(session: session, folder: folder)
        for (i, t) in session.tracks.enumerated() {
            var flags = [String]()
            if t.armed { flags.append("armed") }
            if t.mute { flags.append("muted") }
            if t.solo { flags.append("solo") }
            if let f = t.frozen { flags.append("frozen: \(f.file.terminalSafe)") }
            let input = t.isMIDI ? "MIDI" : InputChannels.text(t.inputChannels)
            lines.append("  \(i + 1). \(t.name.terminalSafe)  \(input)  \(Fader.text(t.gainDecibels)) dB  pan \(Pan.text(t.pan))\(flags.isEmpty ? "" : "  [" + flags.joined(separator: " ") + "]")")
            if !t.inputChain.isEmpty { lines.append("       input chain: \(t.inputChain.terminalSafe)") }
            if !t.playbackChain.isEmpty { lines.append("       chain: \(t.playbackChain.terminalSafe)") }
            for r in RegionCommand.timelineOrder(t).map({ t.regions[$0] }) {
                var extra = ""
                if r.gainDecibels != 0 { extra += "  \(Fader.text(r.gainDecibels)) dB" }
                if r.fadeInFrames > 0 || r.fadeOutFrames > 0 { extra += "  fades \(clock(r.fadeInFrames))/\(clock(r.fadeOutFrames))" }
                if r.rate != 1 { extra += "  rate \(r.rate)×" }
                if let g = r.takeGroup, let n = r.takeNumber { extra += "  take \(g).\(n)\(t.isActive(r) ? " (active)" : "")" }
                if let v = r.recordedSpeed { extra += "  recorded at \(v)×" }
                if r.isMIDI { extra += "  MIDI" }
                if !r.isMIDI, let d = downmixes[r.file] { extra += "  \(d.layout.channelCount) ch, downmixed to stereo" }
                lines.append("       \(clock(r.timelineStartFrame))-\(clock(r.timelineEndFrame))  \(r.file.terminalSafe)  (from \(r.sourceOffsetFrame), \(r.lengthFrames) frames)\(extra)")
            }
        }
        // Each wide file once, with the gains it is heard at (the regions above say which).
        for file in downmixes.keys.sorted() {
            guard let d = downmixes[file] else { continue }
            lines.append("downmix   \(file.terminalSafe): \(d.layout.channelCount) ch (\(d.layout.summary)) → stereo, \(d.description)")
        }
        Terminal.out(lines.joined(separator: "\n"))
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
