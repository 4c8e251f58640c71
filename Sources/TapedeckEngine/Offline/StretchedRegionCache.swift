import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Regions played at a rate other than 1 are stretched (pitch preserved) once, offline, with
/// Rubber Band's R3 engine, into `SESSION/cache/`, and then play like any 1× region — in
/// export and in live playback alike. A render is named by everything that shapes it (source
/// file and its stamp, offset, length, rate, quality), so an edit makes a new one and an
/// unchanged region is never rendered twice.
public struct StretchedRegionCache: Sendable {
    /// The session whose regions are rendered.
    public let folder: SessionFolder

    /// A cache for `folder`.
    public init(folder: SessionFolder) { self.folder = folder }

    /// Held while a render is made (see ``playable(_:quality:)``).
    private static let rendering = Mutex<Void>(())

    /// Where renders live.
    public var cacheFolder: String { folder.path + "/cache" }

    /// `region` as a 1× region over its rendered file: same timeline place and length, source
    /// offset 0. Renders first if there is no render yet. Regions at rate 1 come back as they are.
    /// `progress` hears a render's progress, 0…1 (nothing when the render is there already);
    /// what it throws ends the render (a cancel), leaving nothing in the cache.
    public func playable(_ region: Region, quality: StretchQuality = .best,
                         progress: (Double) throws -> Void = { _ in }) throws -> (region: Region, path: String) {
        let source = folder.absolutePath(of: region.file)
        guard region.rate != 1 else { return (region, source) }
        let path = try renderPath(for: region, sourcePath: source, quality: quality)
        // One render at a time in this process: the screen's graph worker and the control
        // thread may want the same region at once (Transport+Build), and two renders through
        // one `.partial` name would spoil each other. The second finds the first's render.
        // (A render made already is taken without waiting.)
        if access(path, F_OK) != 0 { try StretchedRegionCache.rendering.withLock { _ in
            guard access(path, F_OK) != 0 else { return }
            if mkdir(cacheFolder, 0o755) != 0 && errno != EEXIST {
                throw AudioFileError(path: cacheFolder, reason: "cannot create the render cache: \(String(cString: strerror(errno)))")
            }
            let partial = path + ".partial"
            do {
                try TimePitchRender.render(sourcePath: source, startFrame: region.sourceOffsetFrame,
                                           frameCount: sourceFrames(of: region), destinationPath: partial,
                                           settings: TimePitchSettings(speed: region.rate, mode: .stretch, pitchSemitones: 0),
                                           quality: quality, progress: progress)
            } catch {
                unlink(partial)
                throw error
            }
            if rename(partial, path) != 0 {
                unlink(partial)
                throw AudioFileError(path: path, reason: "cannot finish the render: \(String(cString: strerror(errno)))")
            }
        } }
        var atUnity = region
        atUnity.sourceOffsetFrame = 0
        atUnity.rate = 1
        return (atUnity, path)
    }

    /// The renders every stretched audio region of `session` plays from (made or not): a
    /// render one session needs and another does not is work for nothing once the other is
    /// the one to play. A region whose file is missing has none.
    public func renderPaths(of session: Session, quality: StretchQuality = .best) -> Set<String> {
        var paths = Set<String>()
        for track in session.tracks {
            for region in track.regions where region.rate != 1 && !region.isMIDI {
                if let path = try? renderPath(for: region, sourcePath: folder.absolutePath(of: region.file), quality: quality) {
                    paths.insert(path)
                }
            }
        }
        return paths
    }

    /// Source frames a region at `rate` consumes: its timeline length × rate.
    func sourceFrames(of region: Region) -> Int64 {
        Int64((Double(region.lengthFrames) * region.rate).rounded())
    }

    private func renderPath(for region: Region, sourcePath: String, quality: StretchQuality) throws -> String {
        guard let stamp = FileStamp.of(path: sourcePath) else {
            throw AudioFileError(path: sourcePath, reason: "no such file")
        }
        let key = "\(region.file)|\(stamp.sizeBytes)|\(stamp.modificationNanoseconds)|\(region.sourceOffsetFrame)|\(region.lengthFrames)|\(region.rate.bitPattern)|\(quality.rawValue)"
        let base = region.file.split(separator: "/").last.map(String.init) ?? "region"
        return "\(cacheFolder)/\(base)-\(StretchedRegionCache.hash(key)).wav"
    }

    /// FNV-1a, 64-bit, as hex: stable across runs (Swift's Hasher is seeded per process).
    static func hash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
