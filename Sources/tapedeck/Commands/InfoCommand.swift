import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// `tapedeck info SESSION|FILE`: describes an audio file or a session.
struct InfoCommand: Command {
    static let name = "info"
    static let summary = "describe an audio file (format, length, peak) or a session (tracks, regions)"
    static let usage = """
    usage: tapedeck info SESSION|FILE

    For an audio file: format, rate, channels, length and peak level (reads the whole file).
    For a session: rate, tempo, meter, ranges, and every track with its regions.

    example: tapedeck info song.tapedeck
    example: tapedeck info take.wav
    """

    let target: String

    init(arguments: inout Arguments) throws {
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
        let channels = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { channels.forEach { $0.deallocate() } }
        var peaks = [Float](repeating: 0, count: reader.channelCount)
        var frames: Int64 = 0
        while true {
            let n = try reader.read(into: channels, frameCount: 4096)
            if n == 0 { break }
            for (c, buffer) in channels.enumerated() { peaks[c] = max(peaks[c], MixKernels.peak(buffer, frameCount: n)) }
            frames += Int64(n)
        }
        if frames < reader.frameCount {
            throw AudioFileError(path: file, reason: "truncated: the header promises \(reader.frameCount) frames, only \(frames) could be read")
        }
        let peakText = peaks.map { Decibels.text(Decibels.fromLinear(Double($0))) }.joined(separator: " ")
        Terminal.out("""
        file      \(file)
        format    \(reader.formatDescription)
        rate      \(reader.sampleRate) Hz
        channels  \(reader.channelCount)
        length    \(TimeText.clock(frames: reader.frameCount, sampleRate: reader.sampleRate)) (\(reader.frameCount) frames)
        peak      \(peakText) dBFS
        """)
        // A Tapedeck take says where it belongs (TakeMetadata); other files have nothing here.
        if let m = reader.metadata {
            let track = m.trackNumber.map { "track \($0)" + (m.trackName.isEmpty ? "" : " (\(m.trackName))") } ?? "no track"
            let channels = m.deviceChannels.isEmpty ? "" : " in " + m.deviceChannels.map(String.init).joined(separator: ",")
            var lines = ["take      \(m.session.isEmpty ? "no session" : m.session), \(track)" + (m.takeNumber.map { ", take \($0)" } ?? ""),
                         "position  \(TimeText.clock(frames: m.timelineFrame, sampleRate: reader.sampleRate)) (frame \(m.timelineFrame))"
                             + (m.latencyFrames != 0 ? ", latency \(m.latencyFrames) frames" : ""),
                         "speed     \(m.speed)×",
                         "device    \(m.device.isEmpty ? "unknown" : m.device)\(channels)",
                         "input fx  \(m.inputChain.isEmpty ? "(none)" : m.inputChain)"]
            if !m.startedAt.isEmpty { lines.append("recorded  \(m.startedAt)") }
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
            "session   \(folder.path)",
            "rate      \(session.sampleRate) Hz",
            "tempo     \(session.tempoBPM) BPM, \(session.timeSignature)",
            "length    \(clock(session.endFrame)) (\(session.endFrame) frames, bar \(map.barsBeatsTicks(ofFrame: session.endFrame)))",
            "loop      \(range(session.loopRange, session.loopEnabled))",
            "punch     \(range(session.punchRange, session.punchEnabled))",
            "markers   \(session.markers.isEmpty ? "none" : session.markers.map { "\($0.name)@\(clock($0.frame))" }.joined(separator: ", "))",
            "master    fader \(Fader.text(session.masterGainDecibels)) dB, \(session.masterChain.isEmpty ? "no effects" : session.masterChain)",
            "tracks    \(session.tracks.count)",
        ]
        for (i, t) in session.tracks.enumerated() {
            var flags = [String]()
            if t.armed { flags.append("armed") }
            if t.mute { flags.append("muted") }
            if t.solo { flags.append("solo") }
            lines.append("  \(i + 1). \(t.name)  \(InputChannels.text(t.inputChannels))  \(Fader.text(t.gainDecibels)) dB  pan \(Pan.text(t.pan))\(flags.isEmpty ? "" : "  [" + flags.joined(separator: " ") + "]")")
            if !t.inputChain.isEmpty { lines.append("       input chain: \(t.inputChain)") }
            if !t.playbackChain.isEmpty { lines.append("       chain: \(t.playbackChain)") }
            for r in RegionCommand.timelineOrder(t).map({ t.regions[$0] }) {
                var extra = ""
                if r.gainDecibels != 0 { extra += "  \(Fader.text(r.gainDecibels)) dB" }
                if r.fadeInFrames > 0 || r.fadeOutFrames > 0 { extra += "  fades \(clock(r.fadeInFrames))/\(clock(r.fadeOutFrames))" }
                if r.rate != 1 { extra += "  rate \(r.rate)×" }
                if let g = r.takeGroup, let n = r.takeNumber { extra += "  take \(g).\(n)\(t.isActive(r) ? " (active)" : "")" }
                if let v = r.recordedSpeed { extra += "  recorded at \(v)×" }
                lines.append("       \(clock(r.timelineStartFrame))-\(clock(r.timelineEndFrame))  \(r.file)  (from \(r.sourceOffsetFrame), \(r.lengthFrames) frames)\(extra)")
            }
        }
        Terminal.out(lines.joined(separator: "\n"))
    }
}
