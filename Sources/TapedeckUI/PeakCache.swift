import TapedeckCore
import TapedeckIO

/// Peak files of a session's audio, opened (or rebuilt) once per file and kept for drawing
/// waveforms and for the offline meters. UI thread only.
///
/// Fresh peak files are opened lazily (``PeakFile/open(path:)``), not read: opening a long
/// session costs a stat of each audio file and a peak-file header, and drawing reads only
/// the chunks of the level each zoom needs. Audio is read only when a peak file is missing,
/// corrupt or older than its audio, to rebuild it.
public final class PeakCache {
    private let folder: SessionFolder?
    private var peaks: [String: PeakFile] = [:]
    private var failed: [String: String] = [:]

    /// A cache for region files relative to `folder` (nil: an untitled session, no files).
    public init(folder: SessionFolder?) {
        self.folder = folder
    }

    /// The peaks of a region file (as named in the session), or nil when they cannot be had;
    /// the reason is then in ``problems``. A file is tried once. The channel count is the
    /// peak file's, so no audio header is opened.
    public func peaks(forRegionFile file: String) -> PeakFile? {
        if let p = peaks[file] { return p }
        guard failed[file] == nil, let folder else { return nil }
        do {
            let p = try PeakFile.ensure(for: folder.absolutePath(of: file), peakPath: folder.peakPath(forAudio: file))
            peaks[file] = p
            return p
        } catch {
            failed[file] = error.description
            return nil
        }
    }

    /// Files whose peaks could not be loaded, with the reason.
    public var problems: [String: String] { failed }

    /// Forgets everything, so files changed on disk are read again.
    public func reset() {
        peaks.removeAll()
        failed.removeAll()
    }

    /// How much finer than the queried range the peaks read must be. A range is widened to
    /// whole buckets of the coarsest level whose buckets are at most 1/16 of its length (never
    /// coarser than level 0's 256 frames, as before): at most a sixteenth of a column of blur
    /// at each edge, in exchange for reading only coarse levels (a 200-column overview of two
    /// hours touches a few kilobytes per file instead of megabytes of level 0).
    static let resolutionDivisor: Int64 = 16

    /// Peak amplitude (linear, 0…) of `channel` of `region` over the timeline frames
    /// `[fromFrame, toFrame)`, before any gain. 0 outside the region or without peaks.
    /// Read from the coarsest peak level whose buckets are at most 1/16 of the range.
    public func amplitude(region: Region, channel: Int, fromFrame: Int64, toFrame: Int64) -> Float {
        guard min(toFrame, region.timelineEndFrame) > max(fromFrame, region.timelineStartFrame),
              let p = peaks(forRegionFile: region.file) else { return 0 }
        return PeakCache.amplitude(p, region: region, channel: channel, fromFrame: fromFrame, toFrame: toFrame)
    }

    /// ``amplitude(region:channel:fromFrame:toFrame:)`` from peaks already looked up: a lane
    /// drawn column by column looks its regions' peaks up once, not once per column.
    public static func amplitude(_ p: PeakFile, region: Region, channel: Int, fromFrame: Int64, toFrame: Int64) -> Float {
        let from = max(fromFrame, region.timelineStartFrame)
        let to = min(toFrame, region.timelineEndFrame)
        guard to > from, p.channelCount > 0 else { return 0 }
        let ch = min(max(channel, 0), p.channelCount - 1)
        let s = region.sourceOffsetFrame + Int64(Double(from - region.timelineStartFrame) * region.rate)
        let e = region.sourceOffsetFrame + Int64((Double(to - region.timelineStartFrame) * region.rate).rounded(.up))
        let end = max(e, s + 1)
        let level = p.level(forBucketFramesAtMost: (end - s) / PeakCache.resolutionDivisor)
        let mm = p.minMax(channel: ch, fromFrame: s, toFrame: end, level: level)
        return max(abs(mm.min), abs(mm.max))
    }
}
