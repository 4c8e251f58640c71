import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Renders one track offline, block by block: its regions layered into a track buffer (mono
/// or stereo, as wide as its widest region), through its playback chain, then track gain and
/// pan onto a stereo output of its own (so tracks can render on separate cores and be summed
/// in a fixed order, giving the same bits however many cores ran).
final class TrackRenderer: @unchecked Sendable {
    let index: Int
    let name: String
    let source: LayeredTrackSource
    private let chain: ChainInstance?
    private let buffers: ChannelBuffers
    /// The track's contribution to the stereo bus for the last rendered block.
    let output: StereoBuffer
    private let leftGain: Float
    private let rightGain: Float
    /// Frames the chain delays its output by; regions are read this far ahead.
    let latencyFrames: Int64
    /// A read error met on a worker thread, rethrown by the caller.
    var error: (any Error)?
    /// The chain's nodes that pass audio through instead of working (see ``ChainInstance/problems``).
    var problems: [String] { chain?.problems ?? [] }

    /// A renderer whose chain reads plugin state from `stateFolder` and renders offline.
    init(index: Int, track: Track, source: LayeredTrackSource, chain: Chain?, sampleRate: Int, blockFrames: Int,
         stateFolder: String? = nil) {
        self.index = index
        self.name = track.name
        self.source = source
        let channels = min(2, max(1, source.channelCount))
        buffers = ChannelBuffers(channelCount: channels, capacityFrames: blockFrames)
        output = StereoBuffer(frameCount: blockFrames)
        let gain = Decibels.toLinear(track.gainDecibels)
        let pan = PanLaw.gains(channelCount: channels, pan: track.pan)
        leftGain = Float(gain * pan.left)
        rightGain = Float(gain * pan.right)
        if let chain, !chain.entries.isEmpty {
            let instance = chain.instantiate(stateFolder: stateFolder)
            instance.prepare(format: NodeFormat(sampleRate: Double(sampleRate), channelCount: channels, isRealtime: false),
                             maxFrames: blockFrames)
            self.chain = instance
            latencyFrames = Int64(instance.latencyFrames)
        } else {
            self.chain = nil
            latencyFrames = 0
        }
    }

    deinit { chain?.release() }

    /// NaN and infinite samples replaced by silence in this track: read from its files and
    /// made by its chain.
    var nonFiniteSampleCount: Int64 {
        (chain?.nonFiniteSampleCount ?? 0) + source.nonFiniteSampleCount
    }

    /// Feeds the chain the `latencyFrames` of timeline from `startFrame`, discarding its
    /// output, so that afterwards its output lines up with the timeline exactly.
    func prime(startFrame: Int64, transport: TransportInfo) throws {
        var done: Int64 = 0
        while done < latencyFrames {
            let n = Int(min(Int64(buffers.capacityFrames), latencyFrames - done))
            try renderTrackBuffer(timelineFrame: startFrame + done, frameCount: n, transport: transport.advanced(by: Int(done)))
            done += Int64(n)
        }
    }

    /// Renders the block at timeline `blockStart` into ``output``. Errors are kept in
    /// ``error`` (this runs on worker threads).
    func render(blockStart: Int64, frameCount n: Int, transport: TransportInfo) {
        do {
            try renderTrackBuffer(timelineFrame: blockStart + latencyFrames, frameCount: n,
                                  transport: transport.advanced(by: Int(latencyFrames)))
            output.clear(frameCount: n)
            let l = buffers.channels[0]
            let r = buffers.channelCount > 1 ? buffers.channels[1] : l
            MixKernels.accumulate(l, into: output.left, frameCount: n, startGain: leftGain, endGain: leftGain)
            MixKernels.accumulate(r, into: output.right, frameCount: n, startGain: rightGain, endGain: rightGain)
        } catch {
            self.error = error
            output.clear(frameCount: n)
        }
    }

    private func renderTrackBuffer(timelineFrame: Int64, frameCount n: Int, transport: TransportInfo) throws {
        buffers.clear(frameCount: n)
        try source.add(blockStart: timelineFrame, frameCount: n, into: buffers.channels)
        if let chain {
            var context = RenderContext(inPlace: buffers.channels, frameCount: n, transport: transport)
            chain.process(&context)
        }
    }
}
