import TapedeckCore
import TapedeckIO

/// Peak files of a session's audio, loaded (or rebuilt) once per file and kept for drawing
/// waveforms and for the offline meters. UI thread only.
public final class PeakCache {
    private let folder: SessionFolder?
    private var peaks: [String: PeakFile] = [:]
    private var failed: [String: String] = [:]

    /// A cache for region files relative to `folder` (nil: an untitled session, no files).
    public init(folder: SessionFolder?) {
        self.folder = folder
    }

    /// The peaks of a region file (as named in the session), or nil when they cannot be had;
    /// the reason is then in ``problems``. A file is tried once.
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

    /// Peak amplitude (linear, 0…) of `channel` of `region` over the timeline frames
    /// `[fromFrame, toFrame)`, before any gain. 0 outside the region or without peaks.
    public func amplitude(region: Region, channel: Int, fromFrame: Int64, toFrame: Int64) -> Float {
        let from = max(fromFrame, region.timelineStartFrame)
        let to = min(toFrame, region.timelineEndFrame)
        guard to > from, let p = peaks(forRegionFile: region.file), p.channelCount > 0 else { return 0 }
        let ch = min(max(channel, 0), p.channelCount - 1)
        let s = region.sourceOffsetFrame + Int64(Double(from - region.timelineStartFrame) * region.rate)
        let e = region.sourceOffsetFrame + Int64((Double(to - region.timelineStartFrame) * region.rate).rounded(.up))
        let mm = p.minMax(channel: ch, fromFrame: s, toFrame: max(e, s + 1))
        return max(abs(mm.min), abs(mm.max))
    }
}
