import Synchronization
import TapedeckDSP

/// One channel's level as the control thread reads it.
public struct MeterReading: Sendable, Equatable {
    /// Highest absolute sample in the last meter window (linear, 0…).
    public var peak: Float
    /// RMS over the last meter window (linear).
    public var rms: Float
    /// Highest absolute sample since the previous reading: nothing between two readings is
    /// missed, so a peak-hold display built on it never skips a transient.
    public var peakSinceLastRead: Float
    /// Whether a sample reached 0 dBFS (|x| ≥ 1) since the clip light was last reset.
    public var clipped: Bool

    /// Silence.
    public static let silent = MeterReading(peak: 0, rms: 0, peakSinceLastRead: 0, clipped: false)
}

/// Levels of a few channels, measured on the audio thread every period and published once per
/// window (a tenth of a second) for the control thread: peak, RMS, the peak since the last
/// reading, and a clip light that stays lit until ``resetClip()``.
final class LevelMeter: @unchecked Sendable {
    let channelCount: Int
    private let windowFrames: Int
    private var framesInWindow = 0
    private let windowPeak: UnsafeMutablePointer<Float>
    private let windowSquares: UnsafeMutablePointer<Double>
    private let peakBits: UnsafeMutablePointer<Atomic<UInt32>>
    private let rmsBits: UnsafeMutablePointer<Atomic<UInt32>>
    private let heldBits: UnsafeMutablePointer<Atomic<UInt32>>
    private let clips: UnsafeMutablePointer<Atomic<Bool>>

    /// A meter for `channelCount` channels publishing every `windowFrames`. Control thread.
    init(channelCount: Int, windowFrames: Int) {
        // Made now (control thread): the audio thread's first signal must not allocate it.
        _ = EngineActivity.shared
        self.channelCount = max(channelCount, 1)
        self.windowFrames = max(windowFrames, 1)
        let n = self.channelCount
        windowPeak = .allocate(capacity: n)
        windowPeak.initialize(repeating: 0, count: n)
        windowSquares = .allocate(capacity: n)
        windowSquares.initialize(repeating: 0, count: n)
        peakBits = .allocate(capacity: n)
        rmsBits = .allocate(capacity: n)
        heldBits = .allocate(capacity: n)
        clips = .allocate(capacity: n)
        for i in 0..<n {
            (peakBits + i).initialize(to: Atomic(0))
            (rmsBits + i).initialize(to: Atomic(0))
            (heldBits + i).initialize(to: Atomic(0))
            (clips + i).initialize(to: Atomic(false))
        }
    }

    deinit {
        windowPeak.deallocate()
        windowSquares.deallocate()
        peakBits.deinitialize(count: channelCount); peakBits.deallocate()
        rmsBits.deinitialize(count: channelCount); rmsBits.deallocate()
        heldBits.deinitialize(count: channelCount); heldBits.deallocate()
        clips.deinitialize(count: channelCount); clips.deallocate()
    }

    /// Measures `frameCount` frames of `channels` (as many as the meter has; a missing
    /// channel repeats the last given).
    ///
    /// Audio thread: no allocation, no locks.
    func measure(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, available: Int, frameCount: Int) {
        guard available > 0 else { measureSilence(frameCount: frameCount); return }
        for c in 0..<channelCount {
            let buffer = channels[min(c, available - 1)]
            let peak = MixKernels.peak(buffer, frameCount: frameCount)
            windowPeak[c] = max(windowPeak[c], peak.isNaN ? 0 : peak)
            windowSquares[c] += MixKernels.sumOfSquares(buffer, frameCount: frameCount)
            if peak >= 1 { clips[c].store(true, ordering: .relaxed) }
        }
        advance(frameCount)
    }

    /// Takes `frameCount` frames measured elsewhere (the fused mixing pass of a strip
    /// without a chain, ``StripMixSink``): per channel the peak (NaN: none) and the sum of
    /// squares, as ``measure(_:available:frameCount:)`` would have found them.
    ///
    /// Audio thread: no allocation, no locks.
    func add(peaks: (Float, Float), squares: (Double, Double), frameCount: Int) {
        for c in 0..<min(channelCount, 2) {
            let peak = c == 0 ? peaks.0 : peaks.1
            windowPeak[c] = max(windowPeak[c], peak.isNaN ? 0 : peak)
            windowSquares[c] += c == 0 ? squares.0 : squares.1
            if peak >= 1 { clips[c].store(true, ordering: .relaxed) }
        }
        advance(frameCount)
    }

    /// Counts `frameCount` frames of silence.
    ///
    /// Audio thread: no allocation, no locks.
    func measureSilence(frameCount: Int) { advance(frameCount) }

    @inline(__always)
    private func advance(_ frameCount: Int) {
        framesInWindow += frameCount
        guard framesInWindow >= windowFrames else { return }
        // A level a meter shows (above −80 dBFS), or one that just fell below it, wakes the
        // screen; a silent meter staying silent does not.
        var visible = false
        for c in 0..<channelCount {
            let peak = windowPeak[c]
            if peak > LevelMeter.visiblePeak || Float(bitPattern: peakBits[c].load(ordering: .relaxed)) > LevelMeter.visiblePeak {
                visible = true
            }
            peakBits[c].store(peak.bitPattern, ordering: .relaxed)
            let rms = Float((windowSquares[c] / Double(framesInWindow)).squareRoot())
            rmsBits[c].store((rms.isFinite ? rms : 0).bitPattern, ordering: .relaxed)
            // Raise the held peak; the reader's exchange may race this and see one window
            // twice, never miss one.
            if peak > Float(bitPattern: heldBits[c].load(ordering: .relaxed)) {
                heldBits[c].store(peak.bitPattern, ordering: .relaxed)
            }
            windowPeak[c] = 0
            windowSquares[c] = 0
        }
        framesInWindow = 0
        if visible { EngineActivity.shared.signal() }
    }

    /// −80 dBFS: below every meter's floor on the screen.
    static let visiblePeak: Float = 1e-4

    /// The levels now; resets the since-last-read peaks. Control thread (one reader).
    func read() -> [MeterReading] {
        (0..<channelCount).map { c in
            MeterReading(peak: Float(bitPattern: peakBits[c].load(ordering: .relaxed)),
                         rms: Float(bitPattern: rmsBits[c].load(ordering: .relaxed)),
                         peakSinceLastRead: Float(bitPattern: heldBits[c].exchange(0, ordering: .relaxed)),
                         clipped: clips[c].load(ordering: .relaxed))
        }
    }

    /// Puts the clip lights out. Control thread.
    func resetClip() {
        for c in 0..<channelCount { clips[c].store(false, ordering: .relaxed) }
    }
}
