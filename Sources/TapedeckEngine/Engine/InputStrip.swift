import TapedeckCore
import TapedeckDSP

/// One listening track's input inside a graph: its device channels, its input chain, its
/// meter (what would be recorded, so a level can be set before a take), and its memory of the
/// last seconds for retroactive capture. It runs every period the device runs — stopped,
/// rolling or recording.
final class InputStrip: @unchecked Sendable {
    /// What it was built from, to reuse it when unchanged.
    let spec: GraphSpec.Input
    /// Channels it records (1 or 2).
    let channelCount: Int
    /// When its track hears it (a plain value for the audio thread).
    let monitoring: MonitoringMode
    /// Device channel (0-based) of each of its channels; -1 when the device does not have it.
    private let deviceChannels: UnsafeMutablePointer<Int>
    let chain: ChainInstance?
    /// The values its chain's nodes play now (``spec``'s chain, retuned since by edits of
    /// values and typed changes). Control thread only.
    var chainSpec: Chain
    /// The processed input (after the chain): recorded, metered, monitored.
    let wet: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// The unprocessed input, pointed at the device's buffers every period (a take that keeps
    /// the dry signal records these).
    let dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let silence: UnsafeMutablePointer<Float>
    let meter: LevelMeter
    /// The last seconds of the processed input, when retroactive capture is on.
    let retro: RetroBuffer?

    /// Channels it records for `spec` (1 or 2).
    static func channelCount(of spec: GraphSpec.Input) -> Int { max(1, min(spec.deviceChannels.count, 2)) }

    /// The format its chain is prepared for (``NodeStock`` makes nodes for it ahead).
    static func nodeFormat(sampleRate: Int, spec: GraphSpec.Input) -> NodeFormat {
        NodeFormat(sampleRate: Double(sampleRate), channelCount: channelCount(of: spec))
    }

    /// Builds the strip for a device with `captureChannels` inputs, taking what new nodes
    /// `stock` holds for its chain. Control thread.
    init(spec: GraphSpec.Input, captureChannels: Int, sampleRate: Int, periodFrames: Int, meterWindowFrames: Int,
         retroSeconds: Double?, stateFolder: String? = nil, files: (any NodeFiles)? = nil, stock: NodeStock? = nil) {
        self.spec = spec
        monitoring = spec.monitoring
        channelCount = InputStrip.channelCount(of: spec)
        deviceChannels = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            let ch = c < spec.deviceChannels.count ? spec.deviceChannels[c] - 1 : -1
            deviceChannels[c] = ch >= 0 && ch < captureChannels ? ch : -1
        }
        silence = .allocate(capacity: periodFrames)
        silence.initialize(repeating: 0, count: periodFrames)
        wet = .allocate(capacity: channelCount)
        dry = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            (wet + c).initialize(to: .allocate(capacity: periodFrames))
            wet[c].initialize(repeating: 0, count: periodFrames)
            (dry + c).initialize(to: silence)
        }
        chainSpec = spec.chain
        if spec.chain.entries.isEmpty {
            chain = nil
        } else {
            chain = spec.chain.instantiate(reusing: nil, stateFolder: stateFolder, files: files,
                                           format: InputStrip.nodeFormat(sampleRate: sampleRate, spec: spec),
                                           maxFrames: periodFrames, stock: stock).instance
        }
        meter = LevelMeter(channelCount: channelCount, windowFrames: meterWindowFrames)
        let channels = channelCount
        retro = retroSeconds.map { RetroBuffer(seconds: $0, sampleRate: sampleRate, channelCount: channels) }
    }

    deinit {
        for c in 0..<channelCount { wet[c].deallocate() }
        wet.deallocate()
        dry.deallocate()
        deviceChannels.deallocate()
        silence.deallocate()
    }

    /// Whether every channel it listens to exists on the device.
    var isComplete: Bool { (0..<channelCount).allSatisfy { deviceChannels[$0] >= 0 } }

    /// Frames its chain delays what is recorded and monitored.
    var latencyFrames: Int { chain?.latencyFrames ?? 0 }

    /// Takes this period's input: points ``dry`` at the device's channels, runs the chain
    /// into ``wet``, meters it and keeps it for retroactive capture.
    ///
    /// Audio thread: no allocation, no locks.
    func process(input: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int, transport: TransportInfo) {
        for c in 0..<channelCount {
            let ch = deviceChannels[c]
            dry[c] = ch >= 0 ? input[ch] : silence
            wet[c].update(from: dry[c], count: n)
        }
        if let chain {
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: wet, count: channelCount), frameCount: n,
                                        transport: transport)
            chain.process(&context)
        }
        meter.measure(wet, available: channelCount, frameCount: n)
        retro?.append(wet, frameCount: n)
    }

    /// Keeps `frameCount` frames of silence in the retro memory (device time that passed
    /// unheard in an xrun), so its frames stay at their device times.
    ///
    /// Audio thread: no allocation, no locks.
    func skip(frameCount: Int) {
        retro?.appendSilence(frameCount: frameCount)
    }
}
