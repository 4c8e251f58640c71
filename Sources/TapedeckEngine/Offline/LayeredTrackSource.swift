import TapedeckCore
import TapedeckIO

/// One track's regions read as layers: where regions overlap, the upper one plays over what
/// lies under it with a short crossfade at its edges (``Region/layered(_:crossfadeFrames:)``),
/// never a sum. The disk thread's `TrackStreamer` reads every track through this, for
/// playback and for an export (the same engine freewheeled).
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

    /// Read scratch (two channels, or one per channel of the widest file) and one channel of
    /// envelope, shared by every region of the track.
    private let scratch: [UnsafeMutablePointer<Float>]
    private let envelope: UnsafeMutablePointer<Float>
    /// Channels the track's audio comes in: those of the widest source, at most 2 (a wider
    /// file is folded by its downmix as it is read); 0 with none.
    let channelCount: Int

    /// The regions that have a path (`paths[i]` for `regions[i]`; nil: a region that only
    /// shapes its neighbours' crossfades, e.g. one outside an export's range). Each distinct
    /// file is opened once now, to learn its channels and so that a missing or corrupt file
    /// fails here, and closed again: regions borrow their file from `pool` only while they
    /// are read. `regions` are the track's playing regions, bottom layer first; a region given
    /// by its 1× render has the same timeline place and fades, which is all layering reads. The
    /// crossfade is ``Session/layerCrossfadeSeconds`` at `sampleRate` (default: the files'
    /// rate, which is the session's — imports are resampled to it, takes and renders are
    /// written at it). `known` are files already probed (by the graph's spec).
    init(regions: [Region], paths: [String?], blockFrames: Int, sampleRate: Int? = nil,
         known: [String: ReaderPool.FileInfo] = [:], pool: ReaderPool = .shared) throws(AudioFileError) {
        var infos = known
        for (path, info) in try ReaderPool.probe(paths.lazy.compactMap { $0 }.filter { known[$0] == nil }) { infos[path] = info }
        var open: [(index: Int, stream: RegionStream)] = []
        for (i, path) in paths.enumerated() {
            guard let path, let info = infos[path] else { continue }
            open.append((i, RegionStream(region: regions[i], path: path, channelCount: info.channelCount,
                                         downmix: info.downmix, blockFrames: blockFrames, pool: pool)))
        }
        let rate = sampleRate ?? paths.lazy.compactMap { $0 }.first.flatMap { infos[$0]?.sampleRate } ?? 48000
        let layered = Region.layered(regions, crossfadeFrames: Session.layerCrossfadeFrames(sampleRate: rate))
        for (i, stream) in open { stream.region = layered[i] }
        streams = open.map(\.stream)
        let widest = streams.map(\.channelCount).max() ?? 0
        channelCount = min(widest, 2)
        self.blockFrames = blockFrames
        transmission = .allocate(capacity: blockFrames)
        scratch = (0..<max(2, widest)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        envelope = .allocate(capacity: blockFrames)
        covered.reserveCapacity(16)
    }

    deinit {
        transmission.deallocate()
        scratch.forEach { $0.deallocate() }
        envelope.deallocate()
    }

    /// NaN and infinite samples read from the files and replaced by silence.
    var nonFiniteSampleCount: Int64 { streams.reduce(0) { $0 + $1.nonFiniteSampleCount } }

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
            try stream.add(blockStart: blockStart, frameCount: n, into: track, transmission: transmission, coveredAbove: coveredAbove,
                           scratch: scratch, envelope: envelope)
            covered.append(span)
        }
    }
}
