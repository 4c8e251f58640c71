import Synchronization
import TapedeckIO

/// Renders one track's regions, with region gain and fades, into timeline-aligned blocks —
/// the same ``LayeredTrackSource`` reading that export uses. Runs on the disk thread: it reads files.
final class TrackStreamer {
    let channelCount: Int
    let blockFrames: Int
    private let source: LayeredTrackSource
    /// The rendered block, one buffer per track channel.
    let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// NaN and infinite samples read from the files and replaced by silence (a file that did
    /// not come through `import` may hold some). Written by the disk thread, read by any.
    let nonFiniteSamples = Atomic<Int64>(0)

    /// Probes each distinct source file once (opens and closes it: a missing file throws
    /// here); the disk thread opens files from ``ReaderPool/shared`` as it reads regions.
    /// Control thread (before the disk thread sees the voice).
    init(sources: [GraphSpec.Source], channelCount: Int, blockFrames: Int) throws(AudioFileError) {
        self.channelCount = channelCount
        self.blockFrames = blockFrames
        source = try LayeredTrackSource(regions: sources.map(\.region), paths: sources.map(\.path), blockFrames: blockFrames)
        output = .allocate(capacity: channelCount)
        for ch in 0..<channelCount {
            (output + ch).initialize(to: .allocate(capacity: blockFrames))
            output[ch].initialize(repeating: 0, count: blockFrames)
        }
    }

    deinit {
        for ch in 0..<channelCount { output[ch].deallocate() }
        output.deallocate()
    }

    /// Renders timeline frames `[start, start + frameCount)` (at most ``blockFrames``) into
    /// `channels` from `offset` on, straight (a freewheeling export's strip buffers: no ring
    /// between). A file that fails mid-way throws. Any one thread at a time.
    func render(start: Int64, frameCount: Int, into channels: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int) throws(AudioFileError) {
        for ch in 0..<channelCount { (channels[ch] + offset).update(repeating: 0, count: frameCount) }
        guard start <= Int64.max - Int64(frameCount) else { return }
        for ch in 0..<channelCount { table[ch] = channels[ch] + offset }
        try source.add(blockStart: start, frameCount: frameCount, into: UnsafeBufferPointer(start: table, count: channelCount))
        nonFiniteSamples.store(source.nonFiniteSampleCount, ordering: .relaxed)
    }

    /// Pointers into a caller's buffers at an offset, for ``render(start:frameCount:into:offset:)``.
    private lazy var table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channelCount)

    /// Renders timeline frames `[start, start + frameCount)` into ``output``. Frames too far
    /// out for any region (the transport parked near the end of time) are silence.
    /// A file that fails mid-way throws; the caller reports it and plays silence.
    func render(start: Int64, frameCount: Int) throws(AudioFileError) {
        for ch in 0..<channelCount { output[ch].update(repeating: 0, count: frameCount) }
        guard start <= Int64.max - Int64(frameCount) else { return }
        let channels = UnsafeBufferPointer(start: output, count: channelCount)
        try source.add(blockStart: start, frameCount: frameCount, into: channels)
        nonFiniteSamples.store(source.nonFiniteSampleCount, ordering: .relaxed)
    }
}
