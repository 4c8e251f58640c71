import CRubberBand

/// Pitch-preserving time stretch and pitch shift of a whole finite signal, through Rubber
/// Band in offline mode (study, then process). Output is aligned with the input: no latency
/// to compensate, and its length is the input's × `timeRatio` (within a block).
///
/// Off the audio thread only: it allocates, and the final flush can take milliseconds.
public final class OfflineStretcher {
    private let state: RubberBandState
    /// Channels per frame.
    public let channelCount: Int
    private let outputBlock: [UnsafeMutablePointer<Float>]
    private let blockFrames: Int

    /// Prepares a stretch of `expectedInputFrames` frames by `timeRatio` (output length ÷
    /// input length: 2 is twice as long) and `pitchScale` (2 is an octave up).
    public init(sampleRate: Int, channelCount: Int, timeRatio: Double, pitchScale: Double,
                expectedInputFrames: Int64, quality: StretchQuality, blockFrames: Int = 4096) {
        self.channelCount = channelCount
        self.blockFrames = blockFrames
        var options = RubberBandOptionProcessOffline.rawValue | RubberBandOptionThreadingNever.rawValue
            | RubberBandOptionChannelsTogether.rawValue
        options |= quality == .best ? RubberBandOptionEngineFiner.rawValue : RubberBandOptionEngineFaster.rawValue
        // R2's resampler runs only for a pitch shift; asked for at 1:1 pitch it still costs.
        if quality == .fast && pitchScale != 1 { options |= RubberBandOptionPitchHighQuality.rawValue }
        state = rubberband_new(UInt32(sampleRate), UInt32(channelCount), Int32(bitPattern: options), timeRatio, pitchScale)
        rubberband_set_expected_input_duration(state, UInt32(clamping: expectedInputFrames))
        rubberband_set_max_process_size(state, UInt32(blockFrames))
        outputBlock = (0..<channelCount).map { _ in .allocate(capacity: blockFrames) }
    }

    deinit {
        rubberband_delete(state)
        outputBlock.forEach { $0.deallocate() }
    }

    /// First pass: show the stretcher every input block in order; `isFinal` on the last.
    public func study(_ channels: [UnsafePointer<Float>], frameCount: Int, isFinal: Bool) {
        channels.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: UnsafePointer<Float>?.self, capacity: channelCount) {
                rubberband_study(state, $0, UInt32(frameCount), isFinal ? 1 : 0)
            }
        }
    }

    /// Second pass: process every input block again in order; `emit` receives the output as
    /// it becomes available (including the tail after the final block).
    public func process(_ channels: [UnsafePointer<Float>], frameCount: Int, isFinal: Bool,
                        emit: ([UnsafePointer<Float>], Int) throws -> Void) rethrows {
        channels.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: UnsafePointer<Float>?.self, capacity: channelCount) {
                rubberband_process(state, $0, UInt32(frameCount), isFinal ? 1 : 0)
            }
        }
        try drain(emit: emit)
    }

    private func drain(emit: ([UnsafePointer<Float>], Int) throws -> Void) rethrows {
        let outs = outputBlock.map { UnsafePointer($0) }
        while true {
            let available = Int(rubberband_available(state))
            if available <= 0 { return }
            let got = outputBlock.withUnsafeBufferPointer { p in
                p.baseAddress!.withMemoryRebound(to: UnsafeMutablePointer<Float>?.self, capacity: channelCount) {
                    Int(rubberband_retrieve(state, $0, UInt32(min(available, blockFrames))))
                }
            }
            if got == 0 { return }
            try emit(outs, got)
        }
    }
}
