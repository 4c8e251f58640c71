import CSampleRate
#if canImport(Glibc)
import Glibc
#endif

/// How hard libsamplerate works when an import changes the sample rate.
public enum ResampleQuality: Sendable {
    /// `SRC_SINC_BEST_QUALITY`: 97 dB SNR, 97% bandwidth; slowest.
    case best
    /// `SRC_SINC_MEDIUM_QUALITY`: 97 dB SNR, 90% bandwidth; several times faster.
    case medium

    var converter: Int32 {
        switch self {
        case .best: Int32(SRC_SINC_BEST_QUALITY)
        case .medium: Int32(SRC_SINC_MEDIUM_QUALITY)
        }
    }
}

/// Streams interleaved float frames through libsamplerate at a fixed ratio, block by block,
/// holding on to input the converter has not taken yet.
///
/// Not thread-safe; belongs to the thread doing the import.
final class StreamResampler {
    /// Output frames per input frame.
    let ratio: Double
    let channelCount: Int
    private let state: OpaquePointer
    private let pending: UnsafeMutablePointer<Float>
    private let pendingCapacityFrames: Int
    private var pendingFrames = 0
    private let output: UnsafeMutablePointer<Float>
    private let outputCapacityFrames: Int

    /// A resampler for `channelCount` channels; `path` names the file in errors.
    init(channelCount: Int, ratio: Double, quality: ResampleQuality, blockFrames: Int, path: String) throws(AudioFileError) {
        guard ratio.isFinite, ratio >= 1.0 / 256, ratio <= 256, src_is_valid_ratio(ratio) != 0 else {
            throw AudioFileError(path: path, reason: "cannot resample by a factor of \(ratio)")
        }
        var error: Int32 = 0
        guard let s = src_new(quality.converter, Int32(channelCount), &error) else {
            throw AudioFileError(path: path, reason: "cannot start the resampler: \(String(cString: src_strerror(error)))")
        }
        state = s
        self.ratio = ratio
        self.channelCount = channelCount
        pendingCapacityFrames = max(1, blockFrames)
        pending = .allocate(capacity: pendingCapacityFrames * channelCount)
        outputCapacityFrames = Int((Double(pendingCapacityFrames) * ratio).rounded(.up)) + 64
        output = .allocate(capacity: outputCapacityFrames * channelCount)
    }

    deinit {
        src_delete(state)
        pending.deallocate()
        output.deallocate()
    }

    /// Feeds `frameCount` interleaved frames; `emit` receives every chunk of output as it is
    /// made. With `endOfInput`, flushes the converter's tail too (call it once, last, with
    /// any or no frames).
    func process(_ input: UnsafePointer<Float>, frameCount: Int, endOfInput: Bool, path: String,
                 emit: (UnsafePointer<Float>, Int) throws(AudioFileError) -> Void) throws(AudioFileError) {
        let c = channelCount
        var fed = 0
        repeat {
            let n = min(frameCount - fed, pendingCapacityFrames - pendingFrames)
            if n > 0 {
                (pending + pendingFrames * c).update(from: input + fed * c, count: n * c)
                pendingFrames += n
                fed += n
            }
            let last = endOfInput && fed == frameCount
            // Run until the converter neither takes input nor gives output: with
            // end-of-input that is the end of its tail.
            while true {
                var data = SRC_DATA()
                data.data_in = UnsafePointer(pending)
                data.data_out = output
                data.input_frames = pendingFrames
                data.output_frames = outputCapacityFrames
                data.end_of_input = last ? 1 : 0
                data.src_ratio = ratio
                let code = src_process(state, &data)
                if code != 0 {
                    throw AudioFileError(path: path, reason: "resampling failed: \(String(cString: src_strerror(code)))")
                }
                let used = data.input_frames_used
                if used > 0 {
                    pendingFrames -= used
                    if pendingFrames > 0 {
                        memmove(pending, pending + used * c, pendingFrames * c * MemoryLayout<Float>.size)
                    }
                }
                if data.output_frames_gen > 0 { try emit(output, data.output_frames_gen) }
                if used == 0 && data.output_frames_gen == 0 { break }
                if !last && pendingFrames == 0 { break }
            }
        } while fed < frameCount
    }
}
