/// What a device says, now, about the latency of each of its channels: the part of a take's
/// placement the device knows. ``TakeLatency`` adds the part it does not (the residual
/// `calibrate` measured) and the graph's own.
///
/// - JACK: each of Tapedeck's ports as JACK computes it from what is connected — an input's
///   capture latency (from the sound at the far end of what feeds it), an output's playback
///   latency (to the sound at the far end of what it feeds) — kept current from JACK's
///   latency callback (connections made later, a buffer-size change).
/// - ALSA: playback is prefilled with one buffer before the streams start together, so a
///   frame written leaves the buffer that much after the input read beside it arrived; what
///   the converters add is not reported.
/// - Devices with no such notion (the offline clock, a freewheeling export): zero.
public struct DeviceLatency: Sendable, Equatable {
    /// Who reports it, for people: `JACK`, `PipeWire (JACK)`, `ALSA`, `offline`.
    public var backend: String
    /// Frames from a sound at the input to the engine reading it, per capture channel (index
    /// 0 is device channel 1).
    public var captureFrames: [Int64]
    /// Frames from the engine writing a frame to it being heard, per playback channel.
    public var playbackFrames: [Int64]
    /// Channels whose figure is not one number: JACK's range has min < max (paths of
    /// different latency meet there), so any one figure is wrong for part of the audio.
    public var unsureCaptureChannels: [Int] = []
    /// The same for playback channels (1-based).
    public var unsurePlaybackChannels: [Int] = []
    /// Where the figures come from, in a few words (`port latencies`, `playback buffer 3 × 256`).
    public var origin: String

    /// A report; every channel of a side with the same figure.
    public init(backend: String, captureChannels: Int, captureFrames: Int64, playbackChannels: Int, playbackFrames: Int64,
                origin: String) {
        self.backend = backend
        self.captureFrames = Array(repeating: captureFrames, count: max(captureChannels, 0))
        self.playbackFrames = Array(repeating: playbackFrames, count: max(playbackChannels, 0))
        self.origin = origin
    }

    /// A report with a figure per channel.
    public init(backend: String, captureFrames: [Int64], playbackFrames: [Int64], origin: String) {
        self.backend = backend
        self.captureFrames = captureFrames
        self.playbackFrames = playbackFrames
        self.origin = origin
    }

    /// The capture latency of the device channels `channels` (1-based): the most of them,
    /// since a take of several channels is one file placed once. 0 for channels it lacks.
    public func capture(channels: [Int]) -> Int64 {
        channels.reduce(0) { most, ch in ch >= 1 && ch <= captureFrames.count ? max(most, captureFrames[ch - 1]) : most }
    }

    /// The playback latency of the device channels `channels` (1-based), the most of them.
    public func playback(channels: [Int]) -> Int64 {
        channels.reduce(0) { most, ch in ch >= 1 && ch <= playbackFrames.count ? max(most, playbackFrames[ch - 1]) : most }
    }
}

/// Where a take lands, and why: the one latency model every kind of take uses (the screen's
/// `r`, `record`, `ctl record`, OSC, MMC, a control surface, punch, loop passes, retroactive
/// capture). A frame recorded while the session plays belongs where what the performer
/// heard then was played:
///
///     placement = capture latency of the ports it records
///               + playback latency of what the performer hears (the master's outputs)
///               + the device's residual (`calibrate`: converters, cables, anything no driver reports)
///               + the graph's output latency (the master chain's look-ahead, delay compensation)
///
/// A take recorded while nothing plays is placed as it arrived (nothing to line up with).
public struct TakeLatency: Sendable, Equatable {
    /// Who reported the device's part (``DeviceLatency/backend``).
    public var backend: String
    /// Capture latency of the recorded channels, as the device reports it.
    public var captureFrames: Int64
    /// Playback latency of the master's outputs, as the device reports it.
    public var playbackFrames: Int64
    /// What `calibrate` stored for this device beyond what it reports.
    public var residualFrames: Int64
    /// Frames the graph delays the master (the master chain's latency, delay compensation).
    public var outputFrames: Int64
    /// Whether the session plays while the take records: when not, nothing is compensated.
    public var playing: Bool

    /// An uncompensated take (nothing plays).
    public static let none = TakeLatency(backend: "", captureFrames: 0, playbackFrames: 0, residualFrames: 0, outputFrames: 0,
                                         playing: false)

    /// A placement from its parts.
    public init(backend: String, captureFrames: Int64, playbackFrames: Int64, residualFrames: Int64, outputFrames: Int64,
                playing: Bool) {
        self.backend = backend
        self.captureFrames = captureFrames
        self.playbackFrames = playbackFrames
        self.residualFrames = residualFrames
        self.outputFrames = outputFrames
        self.playing = playing
    }

    /// Frames the take's input lags what it was played against.
    public var totalFrames: Int64 {
        guard playing else { return 0 }
        return captureFrames &+ playbackFrames &+ residualFrames &+ outputFrames
    }

    /// One line: `356 frames = capture 0 + playback 356 (JACK) + residual 0 + graph 0`.
    public var text: String {
        guard playing else { return "0 frames (nothing played: placed as it arrived)" }
        return "\(totalFrames) frames = capture \(captureFrames) + playback \(playbackFrames)"
            + (backend.isEmpty ? "" : " (\(backend))") + " + residual \(residualFrames) + graph \(outputFrames)"
    }
}
