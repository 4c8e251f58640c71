/// The engine's view of a sound device. A backend owns the thread that moves audio and calls
/// its client once per cycle (``AudioDeviceClient/renderCycle(input:output:frameCount:)``):
/// ALSA from a thread of its own (``PeriodDriver``), JACK from its process callback, the
/// offline clock from its loop. So a backend whose server owns the thread is an added file,
/// not a rewrite of the engine.
public protocol AudioDevice: AnyObject {
    /// What was actually negotiated. Any thread; fixed after opening.
    var configuration: DeviceConfiguration { get }

    /// Starts the streams and begins calling `client`, once per cycle, from the backend's own
    /// thread, until ``stop()``. `realtimePriority` asks for SCHED_FIFO where the backend
    /// makes the thread. Control thread.
    func start(client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError)

    /// Stops calling the client and stops the streams; when it returns no cycle is running and
    /// none will. Safe to call twice. Control thread.
    func stop()

    /// The latency of each channel as the device reports it now: a server whose connections or
    /// buffer size change (JACK) keeps it current; others report what they were opened with.
    /// Control thread.
    var latency: DeviceLatency { get }
    /// Changes whenever ``latency`` may have (a connection made, the buffer size changed), so
    /// a caller polling it knows when to read it again. Control thread.
    var latencyGeneration: Int { get }
    /// The name `calibrate` stores this device's residual under: what stays the same while
    /// the hardware does (the PCM name; for JACK, the server), not the buffer size.
    var calibrationName: String { get }
    /// One line for the failure the device reported with `code`. Control thread.
    func failureDescription(code: Int32) -> String
    /// News about the device since the last call (a port left unconnected, a buffer-size
    /// change), each said once. Control thread.
    func drainNotices() -> [String]
}

extension AudioDevice {
    /// What the device was opened with, every channel alike.
    public var latency: DeviceLatency {
        let c = configuration
        return DeviceLatency(backend: "device", captureChannels: c.captureChannels, captureFrames: c.captureLatencyFrames,
                             playbackChannels: max(c.playbackChannels, 2), playbackFrames: c.playbackLatencyFrames,
                             origin: "as opened")
    }
    /// Never changes.
    public var latencyGeneration: Int { 0 }
    /// The device's name.
    public var calibrationName: String { configuration.name }
    /// The round trip of the first input and the first two outputs now (``latency``).
    public var currentRoundTripLatencyFrames: Int64 {
        let l = latency
        return l.capture(channels: [1]) + l.playback(channels: [1, 2])
    }
    /// The errno explained as ALSA explains it.
    public func failureDescription(code: Int32) -> String { DeviceError.alsa(configuration.name, "stopped", code).description }
    /// Nothing to say.
    public func drainNotices() -> [String] { [] }
}

/// What a running device calls. Every method runs on the device's audio thread: no
/// allocation, no locks, no logging, no throwing, no files.
public protocol AudioDeviceClient: AnyObject {
    /// Called once on the audio thread before its first cycle; `realtime` says whether
    /// SCHED_FIFO was granted.
    func audioThreadBegins(realtime: Bool)
    /// Called at the start of every cycle, before the device is read: the client takes what
    /// the control thread sent. Returns whether audio moves this cycle (something rolls or
    /// records); a device with no clock of its own skips an idle cycle altogether — neither
    /// reads nor writes — and keeps real time instead of spinning.
    func beginCycle() -> Bool
    /// Where the period about to render lies on the device's clock, told by a device that
    /// can tell (see ``DevicePeriodTime``), after ``beginCycle()`` and before
    /// ``renderCycle(input:output:frameCount:)``; once per block when a device renders its
    /// cycle as several blocks. A device that cannot tell never calls it.
    ///
    /// Audio thread: no allocation, no locks.
    func devicePeriodBegan(_ time: DevicePeriodTime)
    /// One cycle (after ``beginCycle()``): `input` holds `frameCount` captured frames for each capture channel (none
    /// when the device does not capture); the client fills `frameCount` frames of every
    /// playback channel in `output` (at least two channel buffers are always given).
    func renderCycle(input: UnsafePointer<UnsafeMutablePointer<Float>>, output: UnsafePointer<UnsafeMutablePointer<Float>>,
                     frameCount: Int)
    /// The device over- or under-ran and recovered: `lostFrames` of device time passed
    /// without audio moving (0 when unknown); of them, `skippingNow` are skipped here and the
    /// rest were given to ``deviceSkipped(frames:)`` before (a device that could not tell at
    /// once whether its clock ran ahead or frames were lost). Counted once. Called between cycles.
    func deviceDidXrun(lostFrames: Int64, skippingNow: Int64)
    /// Part of an xrun not told yet: `frames` of device time passed unheard and are skipped
    /// now (takes get silence, a rolling playhead moves on); nothing is counted. Called
    /// between cycles.
    func deviceSkipped(frames: Int64)
    /// Before a cycle: up to `frames` of device time may have passed unheard just before it,
    /// which the device can tell only in a later cycle (a clock read late may give them back):
    /// what it then skips of them (``deviceSkipped(frames:)``, ``deviceDidXrun(lostFrames:skippingNow:)``)
    /// was lost here, before this cycle's frames, not where it is told. 0: nothing is held
    /// any more. Called when it changes, between cycles.
    func deviceHolds(frames: Int64)
    /// The device failed for good (`code`: negative errno); no cycle follows.
    func deviceDidFail(code: Int32)
    /// Called once on the audio thread after its last cycle.
    func audioThreadEnds()
}

extension AudioDeviceClient {
    /// An xrun whose whole cost is known at once: counted, and all of it skipped now. Public
    /// for the backends (TapedeckDevices) that tell an xrun this way.
    ///
    /// Audio thread: no allocation, no locks.
    public func deviceDidXrun(lostFrames: Int64) { deviceDidXrun(lostFrames: lostFrames, skippingNow: lostFrames) }

    /// A client that keeps nothing in time ignores what a device holds.
    ///
    /// Audio thread: does nothing.
    public func deviceHolds(frames: Int64) {}
}

/// What one device read or write did.
public enum DeviceIOResult: Equatable, Sendable {
    /// All frames moved.
    case ok
    /// The device over- or under-ran and was recovered; `lostFrames` of device time passed
    /// without audio moving (0 when it cannot be known, as on unpaced devices).
    case xrun(lostFrames: Int64)
    /// The device failed for good (unplugged, bad state): `code` is the negative errno.
    case failed(code: Int32)
}

/// Sample formats the device layer can exchange with ALSA, in order of preference.
public enum DeviceSampleFormat: String, Sendable, CaseIterable {
    /// 32-bit float, little-endian.
    case float32 = "FLOAT_LE"
    /// 32-bit integer.
    case s32 = "S32_LE"
    /// 24-bit integer in the low three bytes of four.
    case s24 = "S24_LE"
    /// 24-bit integer packed in three bytes.
    case s24Packed = "S24_3LE"
    /// 16-bit integer.
    case s16 = "S16_LE"

    /// Bytes one sample takes in the device buffer.
    public var bytesPerSample: Int {
        switch self {
        case .float32, .s32, .s24: 4
        case .s24Packed: 3
        case .s16: 2
        }
    }

    /// Parses user text such as `s16`, `S24_3LE` or `float`.
    public init?(userText: String) {
        switch userText.lowercased() {
        case "float", "float_le", "f32", "32f": self = .float32
        case "s32", "s32_le": self = .s32
        case "s24", "s24_le": self = .s24
        case "s24_3", "s24_3le": self = .s24Packed
        case "s16", "s16_le": self = .s16
        default: return nil
        }
    }
}

/// What the engine asks of a device. Every field is a wish; ``DeviceConfiguration`` says
/// what was obtained.
public struct DeviceRequest: Sendable, Equatable {
    /// ALSA PCM name (`default`, `hw:0,0`, `plughw:1`, `filetap:IN=…`).
    public var name: String
    /// Frames per second.
    public var sampleRate: Int
    /// Capture channels to open (0: no capture).
    public var captureChannels: Int
    /// Playback channels to open (0: no playback).
    public var playbackChannels: Int
    /// Frames per period (one audio-thread cycle).
    public var periodFrames: Int
    /// Periods in the device buffer.
    public var periodCount: Int
    /// Sample formats to try, best first.
    public var formats: [DeviceSampleFormat]
    /// Whether the sample rate must be exact (a session or a file fixes it) or may be the
    /// nearest the device offers.
    public var exactRate: Bool

    /// Creates a request; by default 48 kHz, 256 × 3 frames, float first.
    public init(name: String, sampleRate: Int = 48000, captureChannels: Int, playbackChannels: Int,
                periodFrames: Int = 256, periodCount: Int = 3,
                formats: [DeviceSampleFormat] = DeviceSampleFormat.allCases, exactRate: Bool = true) {
        self.name = name
        self.sampleRate = sampleRate
        self.captureChannels = captureChannels
        self.playbackChannels = playbackChannels
        self.periodFrames = periodFrames
        self.periodCount = periodCount
        self.formats = formats
        self.exactRate = exactRate
    }
}

/// What a device actually runs at.
public struct DeviceConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// PCM name it was opened with.
    public var name: String
    /// Frames per second.
    public var sampleRate: Int
    /// Capture channels (0: no capture stream).
    public var captureChannels: Int
    /// Playback channels (0: no playback stream).
    public var playbackChannels: Int
    /// Frames per period.
    public var periodFrames: Int
    /// Periods in the buffer.
    public var periodCount: Int
    /// Frames in the device buffer.
    public var bufferFrames: Int
    /// Capture sample format, when capturing.
    public var captureFormat: DeviceSampleFormat?
    /// Playback sample format, when playing.
    public var playbackFormat: DeviceSampleFormat?
    /// Frames between a sound reaching the input and the engine reading it.
    public var captureLatencyFrames: Int64
    /// Frames between the engine writing a frame and the device playing it.
    public var playbackLatencyFrames: Int64
    /// Whether capture and playback are hardware-linked (start in the same instant).
    public var linked: Bool
    /// Whether a clock paces the device. One that has none (a file tap, the offline clock
    /// when unpaced) runs as fast as it is asked; there, and only there, the engine waits for
    /// the disk instead of playing silence or dropping input, since waiting costs nothing.
    public var isPaced = true

    /// Creates a configuration.
    public init(name: String, sampleRate: Int, captureChannels: Int, playbackChannels: Int,
                periodFrames: Int, periodCount: Int, bufferFrames: Int,
                captureFormat: DeviceSampleFormat?, playbackFormat: DeviceSampleFormat?,
                captureLatencyFrames: Int64, playbackLatencyFrames: Int64, linked: Bool) {
        self.name = name
        self.sampleRate = sampleRate
        self.captureChannels = captureChannels
        self.playbackChannels = playbackChannels
        self.periodFrames = periodFrames
        self.periodCount = periodCount
        self.bufferFrames = bufferFrames
        self.captureFormat = captureFormat
        self.playbackFormat = playbackFormat
        self.captureLatencyFrames = captureLatencyFrames
        self.playbackLatencyFrames = playbackLatencyFrames
        self.linked = linked
    }

    /// Frames from a played frame to its echo arriving in capture: what an overdub is shifted by.
    public var roundTripLatencyFrames: Int64 { captureLatencyFrames + playbackLatencyFrames }

    /// One line: `filetap: 48000 Hz, in 2 ch S16_LE, out 2 ch FLOAT_LE, 256 × 3 frames (16.0 ms)`.
    public var description: String {
        var parts = ["\(sampleRate) Hz"]
        if let f = captureFormat { parts.append("in \(captureChannels) ch \(f.rawValue)") }
        if let f = playbackFormat { parts.append("out \(playbackChannels) ch \(f.rawValue)") }
        let ms = Double(bufferFrames) * 1000 / Double(max(sampleRate, 1))
        parts.append("period \(periodFrames) × \(periodCount) frames (\((ms * 10).rounded() / 10) ms)")
        if captureFormat != nil && playbackFormat != nil {
            parts.append("round trip \(roundTripLatencyFrames) frames\(linked ? ", linked" : "")")
        }
        return "\(name): " + parts.joined(separator: ", ")
    }
}
