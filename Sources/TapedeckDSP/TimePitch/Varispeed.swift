import CSampleRate

/// Tape-style speed change: libsamplerate resamples by 1/speed, so pitch follows speed. The
/// ratio may change on every call; libsamplerate glides from the last ratio to the new one
/// across the block, so a live speed change never clicks.
///
/// Everything is allocated in `init`; ``render(into:frameCount:speed:)`` allocates nothing.
public final class Varispeed: @unchecked Sendable {
    private var state: OpaquePointer?
    /// Channels per frame.
    public let channelCount: Int
    private let inputFrames: Int
    private let input: UnsafeMutablePointer<Float>
    private let planar: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let output: UnsafeMutablePointer<Float>
    private let maxOutputFrames: Int
    /// Unowned: the source (a track's voice) owns this converter; a strong reference back
    /// would keep both alive forever.
    private unowned(unsafe) let source: TimePitchSource
    private var exhausted = false

    /// Creates a converter pulling from `source`, which it does not keep alive (its owner
    /// must outlive it). `maxOutputFrames` bounds one render call.
    /// `realtime` picks libsamplerate's fastest sinc (fits a real-time budget) instead of the best.
    /// Returns nil when libsamplerate cannot create the converter.
    public init?(channelCount: Int, source: TimePitchSource, maxOutputFrames: Int, realtime: Bool) {
        self.channelCount = channelCount
        self.source = source
        self.maxOutputFrames = maxOutputFrames
        // At 32× a block of output needs 32 blocks of input; libsamplerate pulls in chunks of
        // this size as often as it needs.
        inputFrames = 1024
        input = .allocate(capacity: inputFrames * channelCount)
        planar = .allocate(capacity: channelCount)
        for c in 0..<channelCount { (planar + c).initialize(to: .allocate(capacity: inputFrames)) }
        output = .allocate(capacity: maxOutputFrames * channelCount)
        // All stored properties are set (state starts nil), so self can be the callback's data.
        var error: Int32 = 0
        let converter = Int32(realtime ? SRC_SINC_FASTEST : SRC_SINC_BEST_QUALITY)
        let callback: src_callback_t = { data, out in
            guard let data, let out else { return 0 }
            let me = Unmanaged<Varispeed>.fromOpaque(data).takeUnretainedValue()
            return me.supply(out)
        }
        state = src_callback_new(callback, converter, Int32(channelCount), &error,
                                 Unmanaged.passUnretained(self).toOpaque())
        if state == nil || error != 0 { return nil }
    }

    deinit {
        if let s = state { src_delete(s) }
        for c in 0..<channelCount { planar[c].deallocate() }
        planar.deallocate()
        input.deallocate()
        output.deallocate()
    }

    /// Produces up to `frameCount` output frames at `speed` into one buffer per channel.
    /// Returns the frames produced: fewer only at the end of the input.
    ///
    /// Audio thread safe: no allocation, no locks (libsamplerate's callback read).
    public func render(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int, speed: Double) -> Int {
        guard let s = state else { return 0 }
        let n = min(frameCount, maxOutputFrames)
        let got = Int(src_callback_read(s, 1 / speed, n, output))
        let c = channelCount
        for ch in 0..<c {
            let dst = channels[ch]
            for i in 0..<got { dst[i] = output[i * c + ch] }
        }
        return max(got, 0)
    }

    /// Forgets buffered input (after a locate).
    ///
    /// Audio thread safe.
    public func reset() {
        if let s = state { src_reset(s) }
        exhausted = false
    }

    private func supply(_ out: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) -> Int {
        if exhausted { return 0 }
        let n = source.read(into: planar, frameCount: inputFrames)
        if n == 0 { exhausted = true }
        let c = channelCount
        for ch in 0..<c {
            let p = planar[ch]
            for i in 0..<n { input[i * c + ch] = p[i] }
        }
        out.pointee = input
        return n
    }
}
