/// The device an export runs the engine on, as Ardour exports by freewheeling: no sound card,
/// no clock and no thread of its own. The exporting thread calls ``cycle()`` once per period;
/// that runs the engine's render core right there (for the length of the call the exporting
/// thread *is* the engine's audio thread) and leaves the period's output in ``output`` for
/// the caller to write. Unpaced: the engine waits for the disk instead of playing silence,
/// and a period takes as long as rendering it takes.
public final class FreewheelDevice: AudioDevice, @unchecked Sendable {
    /// Float on both sides, no latency, unpaced.
    public let configuration: DeviceConfiguration
    /// The last period's output: one buffer of ``DeviceConfiguration/periodFrames`` per
    /// playback channel (at least two).
    public let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let input: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let outputCount: Int
    private var client: AudioDeviceClient?

    /// A device of `playbackChannels` outputs (no inputs) at `sampleRate`, `periodFrames` a
    /// cycle. Control thread.
    public init(sampleRate: Int, playbackChannels: Int = 2, periodFrames: Int = 1024) {
        let period = max(periodFrames, 1)
        var config = DeviceConfiguration(
            name: "export", sampleRate: sampleRate, captureChannels: 0, playbackChannels: max(playbackChannels, 1),
            periodFrames: period, periodCount: 2, bufferFrames: 2 * period, captureFormat: nil, playbackFormat: .float32,
            captureLatencyFrames: 0, playbackLatencyFrames: 0, linked: true)
        config.isPaced = false
        configuration = config
        outputCount = max(playbackChannels, 2)
        output = .allocate(capacity: outputCount)
        for c in 0..<outputCount {
            let b = UnsafeMutablePointer<Float>.allocate(capacity: period)
            b.initialize(repeating: 0, count: period)
            (output + c).initialize(to: b)
        }
        // The engine is given an input table even with no capture channels: one silent buffer.
        input = .allocate(capacity: 1)
        let silent = UnsafeMutablePointer<Float>.allocate(capacity: period)
        silent.initialize(repeating: 0, count: period)
        input.initialize(to: silent)
    }

    deinit {
        for c in 0..<outputCount { output[c].deallocate() }
        output.deallocate()
        input[0].deallocate()
        input.deallocate()
    }

    /// Takes the client; nothing runs until ``cycle()``. Control thread.
    public func start(client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError) {
        self.client = client
        client.audioThreadBegins(realtime: false)
    }

    /// Ends the client's "audio thread" (after which the engine no longer waits for one).
    /// Safe to call twice. Control thread.
    public func stop() {
        guard let client else { return }
        self.client = nil
        client.audioThreadEnds()
    }

    /// One period on the calling thread: the commands sent so far are applied, then, unless
    /// the engine is idle, a period is rendered into ``output``. Returns whether one was
    /// (false: nothing rolls, ``output`` is unchanged).
    public func cycle() -> Bool {
        guard let client, client.beginCycle() else { return false }
        client.renderCycle(input: UnsafePointer(input), output: UnsafePointer(output), frameCount: configuration.periodFrames)
        return true
    }
}
