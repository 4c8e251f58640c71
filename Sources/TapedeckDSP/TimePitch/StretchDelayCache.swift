import CRubberBand
import Foundation

/// The start delays a ``LiveStretcher`` measures, kept on disk between runs.
///
/// Measuring them is most of what building a stretcher costs (on the shared 2-core machine
/// 1.42 s of R2's 1.43 s build, and most of R3's), so `play --speed 2` waited seconds for its
/// first frame on every run; the delays depend only on the Rubber Band library, the sample
/// rate, the channel count, the engine and how they are measured, so they are measured once
/// per machine. Kept in `$XDG_CACHE_HOME/tapedeck/` (default `~/.cache/tapedeck/`), one small
/// file per key. A file that cannot be read, does not parse or holds values no measurement
/// gives is ignored and measured again; a cache that cannot be written costs only the next
/// run's time.
///
/// Off the audio thread: it reads and writes files.
public struct StretchDelayCache: Sendable {
    /// The folder holding the files (made when first written).
    public let folder: String

    /// A cache in `folder`.
    public init(folder: String) { self.folder = folder }

    /// `$XDG_CACHE_HOME/tapedeck`, or `$HOME/.cache/tapedeck`; nil when neither is set.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> StretchDelayCache? {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return StretchDelayCache(folder: xdg + "/tapedeck") }
        if let home = environment["HOME"], home.hasPrefix("/") { return StretchDelayCache(folder: home + "/.cache/tapedeck") }
        return nil
    }

    /// Bumped whenever ``LiveStretcher``'s measurement changes, so old tables are not used.
    static let method = 1

    /// The file for one stretcher's kind.
    func path(sampleRate: Int, channelCount: Int, quality: StretchQuality) -> String {
        "\(folder)/stretch-delays-rubberband-\(RUBBERBAND_VERSION)-m\(StretchDelayCache.method)-\(sampleRate)-\(channelCount)ch-\(quality.rawValue)"
    }

    /// The table kept for this kind, if it is there and sound: `count` entries, each a
    /// finite delay no stretcher has reached (within a million frames either way) or `-` for
    /// a step not measured yet (nil).
    func load(sampleRate: Int, channelCount: Int, quality: StretchQuality, count: Int) -> [Double?]? {
        let file = path(sampleRate: sampleRate, channelCount: channelCount, quality: quality)
        guard let data = FileManager.default.contents(atPath: file), data.count < 4096,
              let text = String(data: data, encoding: .utf8) else { return nil }
        var table: [Double?] = []
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if word == "-" { table.append(nil); continue }
            guard let value = Double(word), value.isFinite, abs(value) < 1_000_000 else { return nil }
            table.append(value)
        }
        return table.count == count ? table : nil
    }

    /// Keeps `table` for this kind (nil: not measured yet): written beside the file and
    /// renamed over it, so a reader never meets half a table. Failures are ignored (see the
    /// type's comment).
    func store(_ table: [Double?], sampleRate: Int, channelCount: Int, quality: StretchQuality) {
        let file = path(sampleRate: sampleRate, channelCount: channelCount, quality: quality)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let partial = "\(file).\(getpid()).partial"
        let text = table.map { $0.map { "\($0)" } ?? "-" }.joined(separator: " ") + "\n"
        guard FileManager.default.createFile(atPath: partial, contents: Data(text.utf8)) else { return }
        if rename(partial, file) != 0 { unlink(partial) }
    }
}
