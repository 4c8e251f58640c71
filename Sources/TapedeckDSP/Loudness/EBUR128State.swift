import CEbur128
import TapedeckCore

/// libebur128 could not start a measurement.
public struct LoudnessError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String
}

/// One libebur128 measurement and the interleaving buffer it reads from (libebur128 takes
/// interleaved frames; Tapedeck's buffers are planar). Not thread-safe: one thread feeds it.
final class EBUR128State: @unchecked Sendable {
    let state: UnsafeMutablePointer<ebur128_state>
    let channelCount: Int
    let sampleRate: Int
    /// Frames `interleaved` holds; longer blocks are fed in pieces.
    let chunkFrames: Int
    private let interleaved: UnsafeMutablePointer<Float>

    /// Starts a measurement. `mode` is a set of `EBUR128_MODE_*` flags. Off the audio thread.
    init(channelCount: Int, sampleRate: Int, mode: Int32, chunkFrames: Int) throws(LoudnessError) {
        guard (1...64).contains(channelCount), (8000...768_000).contains(sampleRate) else {
            throw LoudnessError(description: "loudness: cannot measure \(channelCount) channels at \(sampleRate) Hz")
        }
        guard let state = ebur128_init(UInt32(channelCount), UInt(sampleRate), mode) else {
            throw LoudnessError(description: "loudness: libebur128 could not start (out of memory)")
        }
        // BS.1770 weights the surround channels; Tapedeck's buses are mono or stereo, which
        // libebur128's default map (left, right, centre, …) already covers. A mono signal is
        // measured as one channel (as libebur128 and the EBU's test signals define it).
        self.state = state
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.chunkFrames = max(1, chunkFrames)
        interleaved = .allocate(capacity: self.chunkFrames * channelCount)
        interleaved.initialize(repeating: 0, count: self.chunkFrames * channelCount)
    }

    deinit {
        var s: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&s)
        interleaved.deallocate()
    }

    /// Feeds planar audio. Safe on the audio thread when the state was made with
    /// `EBUR128_MODE_HISTOGRAM` (libebur128 then keeps fixed histograms instead of appending a
    /// list entry per 400 ms block): no allocation, no lock, no system call.
    @inline(__always)
    func add(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        var done = 0
        while done < frameCount {
            let n = min(chunkFrames, frameCount - done)
            for c in 0..<channelCount {
                let source = channels[c] + done
                var i = 0
                while i < n {
                    interleaved[i * channelCount + c] = source[i]
                    i += 1
                }
            }
            _ = ebur128_add_frames_float(state, interleaved, n)
            done += n
        }
    }

    /// Loudness of the last 400 ms, LUFS.
    func momentary() -> Double { read { ebur128_loudness_momentary(state, &$0) } }
    /// Loudness of the last 3 s, LUFS (the state needs `EBUR128_MODE_S`).
    func shortTerm() -> Double { read { ebur128_loudness_shortterm(state, &$0) } }
    /// Gated loudness so far, LUFS (`EBUR128_MODE_I`).
    func integrated() -> Double { read { ebur128_loudness_global(state, &$0) } }
    /// Loudness range so far, LU (`EBUR128_MODE_LRA`).
    func range() -> Double { read { ebur128_loudness_range(state, &$0) } }

    /// Highest true peak over all channels so far, dBTP (`EBUR128_MODE_TRUE_PEAK`).
    func truePeakDecibels() -> Double { loudestChannel { ebur128_true_peak(state, $0, &$1) } }
    /// Highest sample peak over all channels so far, dBFS (`EBUR128_MODE_SAMPLE_PEAK`).
    func samplePeakDecibels() -> Double { loudestChannel { ebur128_sample_peak(state, $0, &$1) } }

    /// The largest of a per-channel linear peak, in decibels.
    private func loudestChannel(_ call: (UInt32, inout Double) -> Int32) -> Double {
        var peak = 0.0
        for c in 0..<channelCount {
            var v = 0.0
            if call(UInt32(c), &v) == 0 { peak = max(peak, v) }
        }
        return Decibels.fromLinear(peak)
    }

    /// A libebur128 reading; −∞ when it cannot say (silence, or too little audio yet).
    @inline(__always)
    private func read(_ call: (inout Double) -> Int32) -> Double {
        var value = -Double.infinity
        guard call(&value) == 0, !value.isNaN else { return -.infinity }
        return value
    }
}
