import CEbur128
import Synchronization
import TapedeckCore

/// A live EBU R128 meter (momentary, short-term, integrated loudness and true peak) for a
/// bus, on libebur128.
///
/// The audio thread calls ``add(_:frameCount:)``; it owns the libebur128 state alone and,
/// every 100 ms of audio, publishes the four readings through atomics that any thread reads
/// with ``reading()``. Why this is safe on the audio thread (checked in libebur128 1.2.6's
/// source): everything `ebur128_add_frames_float` touches is allocated by `ebur128_init`
/// (filter state, the 3 s window, the true-peak resampler's buffers), except the list of
/// gating blocks, which grows by one `malloc` per 400 ms — unless the state is made with
/// `EBUR128_MODE_HISTOGRAM`, as here, which counts blocks in fixed 1000-bin histograms
/// instead (integrated loudness to within 0.1 LU, what a meter needs). The momentary,
/// short-term and integrated readings only sum those buffers. There is no reset: to start
/// measuring afresh, make a new meter off the audio thread and hand it over.
public final class LoudnessMeter: @unchecked Sendable {
    private let meter: EBUR128State
    private let framesPerReading: Int
    private var framesSinceReading = 0
    private let momentary = Atomic<UInt64>(LoudnessMeter.minusInfinity)
    private let shortTerm = Atomic<UInt64>(LoudnessMeter.minusInfinity)
    private let integrated = Atomic<UInt64>(LoudnessMeter.minusInfinity)
    private let truePeak = Atomic<UInt64>(LoudnessMeter.minusInfinity)

    private static let minusInfinity = (-Double.infinity).bitPattern

    /// A meter for `channelCount` channels at `sampleRate`, fed blocks of at most
    /// `maxFrames` frames (longer blocks are fed in pieces). Off the audio thread: allocates
    /// everything it will use.
    public init(channelCount: Int, sampleRate: Int, maxFrames: Int) throws(LoudnessError) {
        let mode = Int32(EBUR128_MODE_M.rawValue | EBUR128_MODE_S.rawValue | EBUR128_MODE_I.rawValue
                         | EBUR128_MODE_TRUE_PEAK.rawValue | EBUR128_MODE_HISTOGRAM.rawValue)
        meter = try EBUR128State(channelCount: channelCount, sampleRate: sampleRate, mode: mode, chunkFrames: maxFrames)
        framesPerReading = max(1, sampleRate / 10)
    }

    /// Measures one block of planar audio (`channels[c]` holds `frameCount` frames).
    /// Audio thread: no allocation, no lock, no system call.
    public func add(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        meter.add(channels, frameCount: frameCount)
        framesSinceReading += frameCount
        guard framesSinceReading >= framesPerReading else { return }
        framesSinceReading = 0
        momentary.store(meter.momentary().bitPattern, ordering: .relaxed)
        shortTerm.store(meter.shortTerm().bitPattern, ordering: .relaxed)
        integrated.store(meter.integrated().bitPattern, ordering: .relaxed)
        truePeak.store(meter.truePeakDecibels().bitPattern, ordering: .relaxed)
    }

    /// The latest readings (at most 100 ms of audio old). Any thread.
    public func reading() -> LoudnessReading {
        LoudnessReading(momentaryLUFS: Double(bitPattern: momentary.load(ordering: .relaxed)),
                        shortTermLUFS: Double(bitPattern: shortTerm.load(ordering: .relaxed)),
                        integratedLUFS: Double(bitPattern: integrated.load(ordering: .relaxed)),
                        truePeakDecibels: Double(bitPattern: truePeak.load(ordering: .relaxed)))
    }
}
