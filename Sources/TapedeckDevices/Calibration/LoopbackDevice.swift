import TapedeckEngine

/// An in-process device whose capture hears its own playback `delayFrames` later, like a
/// cable from the output to the input: for tests and benches of anything that depends on the
/// round trip (calibration, overdub alignment, punch edges), with no sound card.
///
/// It reports `reportedLatencyFrames` as its playback latency, which may differ from the
/// true delay: that difference is exactly what a real converter adds behind ALSA's back and
/// what ``LatencyCalibrator`` measures.
///
/// Capture channel `c` hears playback channel `min(c, playbackChannels - 1)` scaled by
/// `gain`. Frames not yet played come back as silence. The delay line is allocated once;
/// ``read(into:frameCount:)`` and ``write(from:frameCount:)`` do not allocate.
///
/// Delays shorter than one period cannot be reproduced (the engine reads a period before
/// it writes one); a real duplex device never has them either, since its playback is
/// prefilled with a whole buffer.
public final class LoopbackDevice: PeriodDevice, @unchecked Sendable {
    public private(set) var configuration: DeviceConfiguration
    /// The audio thread that moves this device's periods.
    public let driver = PeriodDriver()
    /// The true round trip in frames.
    public let delayFrames: Int
    /// Linear gain from output to input (negative inverts polarity, like a miswired cable).
    public let gain: Float
    private let ring: UnsafeMutablePointer<Float>
    private let ringMask: Int
    private let channels: Int
    private var readFrame = 0
    private var writeFrame: Int
    /// How many frames this device has captured; control thread after the run.
    public private(set) var framesRead: Int64 = 0

    /// Creates a loopback with a true delay of `delayFrames` (at least one period) that
    /// claims `reportedLatencyFrames` (default: the true delay).
    public init(sampleRate: Int = 48000, periodFrames: Int = 256, periodCount: Int = 2, delayFrames: Int,
                reportedLatencyFrames: Int? = nil, captureChannels: Int = 1, playbackChannels: Int = 2, gain: Float = 1) {
        let period = max(periodFrames, 1)
        configuration = DeviceConfiguration(
            name: "loopback", sampleRate: sampleRate, captureChannels: max(captureChannels, 1),
            playbackChannels: max(playbackChannels, 1), periodFrames: period, periodCount: periodCount,
            bufferFrames: period * periodCount, captureFormat: .float32, playbackFormat: .float32,
            captureLatencyFrames: 0, playbackLatencyFrames: Int64(reportedLatencyFrames ?? delayFrames), linked: true)
        configuration.isPaced = false
        self.delayFrames = max(delayFrames, 0)
        self.gain = gain
        channels = max(captureChannels, 1)
        // Room for the delay plus a few periods written ahead of the reader, per channel.
        var size = 1
        while size < self.delayFrames + 8 * period { size <<= 1 }
        ringMask = size - 1
        ring = .allocate(capacity: size * channels)
        ring.initialize(repeating: 0, count: size * channels)
        writeFrame = self.delayFrames
    }

    deinit { ring.deallocate() }

    /// What it claims (``reportedLatencyFrames``) on its playback side.
    public var latency: DeviceLatency {
        let c = configuration
        return DeviceLatency(backend: "loopback", captureChannels: c.captureChannels, captureFrames: 0,
                             playbackChannels: c.playbackChannels, playbackFrames: c.playbackLatencyFrames, origin: "as claimed")
    }

    public func startStreams() throws(DeviceError) {}
    public func stopStreams() {}

    /// Audio thread: no allocation, no locks.
    public func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        let size = ringMask + 1
        for ch in 0..<self.channels {
            let base = ring + ch * size
            let out = channels[ch]
            for i in 0..<frameCount {
                let slot = (readFrame + i) & ringMask
                out[i] = base[slot]
                base[slot] = 0  // a frame is heard once; an unplayed slot stays silent
            }
        }
        readFrame += frameCount
        framesRead += Int64(frameCount)
        return .ok
    }

    /// Audio thread: no allocation, no locks.
    public func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        let size = ringMask + 1
        let playback = configuration.playbackChannels
        for ch in 0..<self.channels {
            let base = ring + ch * size
            let src = channels[min(ch, playback - 1)]
            for i in 0..<frameCount where writeFrame + i - readFrame < size {
                base[(writeFrame + i) & ringMask] = src[i] * gain
            }
        }
        writeFrame += frameCount
        return .ok
    }
}
