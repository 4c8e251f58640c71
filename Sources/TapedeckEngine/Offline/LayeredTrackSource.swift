import TapedeckCore
import TapedeckIO

/// One track's regions read as layers: where regions overlap, the upper one plays over what
/// lies under it with a short crossfade at its edges (``Region/layered(_:crossfadeFrames:)``),
/// never a sum. Export (``TrackRenderer``) and live playback (the disk thread's
/// `TrackStreamer`) both read tracks through this, so they render the same samples.
///
/// Not for the audio thread: it reads files. One thread at a time.
final class LayeredTrackSource {
    /// The opened regions, bottom layer first.
    private let streams: [RegionStream]
    /// Per frame of the block: how much of a layer the layers above it let through.
    private let transmission: UnsafeMutablePointer<Float>
    private let blockFrames: Int
    /// Spans of the block the layers drawn so far covered (reused, never reallocated).
    private var covered: [Range<Int>] = []

    /// Opens the regions that have a path (`paths[i]` for `regions[i]`; nil: a region that
    /// only shapes its neighbours' crossfades, e.g. one outside an export's range). `regions`
    /// are the track's playing regions, bottom layer first; a region given by its 1× render
    /// has the same timeline place and fades, which is all layering reads. The crossfade is
    /// ``Session/layerCrossfadeSeconds`` at `sampleRate` (default: the files' rate, which is
    /// the session's — imports are resampled to it, takes and renders are written at it).
    init(regions: [Region], paths: [String?], blockFrames: Int, sampleRate: Int? = nil) throws(AudioFileError) {
        var open: [(index: Int, stream: RegionStream)] = []
        for (i, path) in paths.enumerated() {
            guard let path else { continue }
            open.append((i, try RegionStream(region: regions[i], path: path, blockFrames: blockFrames)))
        }
        let rate = sampleRate ?? open.first?.stream.reader.sampleRate ?? 48000
        let layered = Region.layered(regions, crossfadeFrames: Session.layerCrossfadeFrames(sampleRate: rate))
        for (i, stream) in open { stream.region = layered[i] }
        streams = open.map(\.stream)
        self.blockFrames = blockFrames
        transmission = .allocate(capacity: blockFrames)
        covered.reserveCapacity(streams.count)
    }

    deinit { transmission.deallocate() }

    /// NaN and infinite samples read from the files and replaced by silence.
    var nonFiniteSampleCount: Int64 { streams.reduce(0) { $0 + $1.nonFiniteSampleCount } }

    /// Channels of the widest source (0 with none).
    var channelCount: Int { streams.map(\.channelCount).max() ?? 0 }

    /// Adds the track's audio for timeline frames `[blockStart, blockStart + frameCount)`
    /// into `track` (which the caller has cleared), top layer first. `frameCount` is at most
    /// the block size given at init.
    func add(blockStart: Int64, frameCount: Int, into track: UnsafeBufferPointer<UnsafeMutablePointer<Float>>) throws(AudioFileError) {
        let n = min(frameCount, blockFrames)
        transmission.update(repeating: 1, count: n)
        covered.removeAll(keepingCapacity: true)
        for stream in streams.reversed() {
            guard let span = stream.span(blockStart: blockStart, frameCount: n) else { continue }
            let coveredAbove = covered.contains { $0.overlaps(span) }
            try stream.add(blockStart: blockStart, frameCount: n, into: track, transmission: transmission, coveredAbove: coveredAbove)
            covered.append(span)
        }
    }
}
