import TapedeckIO

/// Renders one track's regions, with region gain and fades, into timeline-aligned blocks —
/// the same ``LayeredTrackSource`` reading that export uses. Runs on the disk thread: it reads files.
final class TrackStreamer {
    let channelCount: Int
    let blockFrames: Int
    private let source: LayeredTrackSource
    /// The rendered block, one buffer per track channel.
    let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// Opens every source file. Control thread (before the disk thread starts).
    init(track: PlaybackPlan.Track, blockFrames: Int) throws(AudioFileError) {
        channelCount = track.channelCount
        self.blockFrames = blockFrames
        source = try LayeredTrackSource(regions: track.sources.map(\.region), paths: track.sources.map(\.path), blockFrames: blockFrames)
        output = .allocate(capacity: channelCount)
        for ch in 0..<channelCount { output[ch] = .allocate(capacity: blockFrames) }
    }

    deinit {
        for ch in 0..<channelCount { output[ch].deallocate() }
        output.deallocate()
    }

    /// Renders timeline frames `[start, start + frameCount)` into ``output``.
    /// A file that fails mid-way throws; the caller reports it and plays silence.
    func render(start: Int64, frameCount: Int) throws(AudioFileError) {
        for ch in 0..<channelCount { output[ch].update(repeating: 0, count: frameCount) }
        let channels = UnsafeBufferPointer(start: output, count: channelCount)
        try source.add(blockStart: start, frameCount: frameCount, into: channels)
    }
}
