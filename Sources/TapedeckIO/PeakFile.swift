#if canImport(Glibc)
import Glibc
#endif

/// The waveform overview of one audio file: min and max per bucket of frames, per channel,
/// at several resolutions, so a waveform of any length draws without reading audio.
///
/// Level 0 has one bucket per ``PeakFile/defaultBaseBucketFrames`` frames; each further level
/// is ``PeakFile/defaultLevelFactor`` times coarser, until a level has at most
/// ``PeakFile/topLevelMaxBuckets`` buckets. The last bucket of a level may cover fewer frames.
///
/// On disk (all little-endian):
/// ```
/// 0  "TDPK"                 magic
/// 4  u32 version (1)
/// 8  u32 channel count
/// 12 u32 base bucket frames (256)
/// 16 u32 level factor (16)
/// 20 u32 level count
/// 24 i64 source frame count
/// 32 i64 source file size in bytes     ┐ staleness: the audio file changed when
/// 40 i64 source mtime in nanoseconds   ┘ either differs from what stat says now
/// 48 i64 bucket count, one per level
///    f32 min, f32 max per channel per bucket, level 0 first
/// ```
/// Values are 32-bit float, exactly the samples' extremes, so peaks built while recording and
/// peaks rebuilt from the file agree to the bit.
///
/// A peak file is held either whole in memory (``load(path:)``, or built from audio) or read
/// lazily (``open(path:)``): opening reads only the header, and queries read the chunks they
/// touch (see ``PeakStorage``), so a long session opens without reading its peaks whole.
/// Both forms answer every query identically.
public struct PeakFile: Equatable, Sendable {
    /// Frames per level-0 bucket in files Tapedeck writes.
    public static let defaultBaseBucketFrames = 256
    /// How much coarser each level is than the one before.
    public static let defaultLevelFactor = 16
    /// Levels stop once one has at most this many buckets.
    public static let topLevelMaxBuckets = 16
    /// Format version this build reads and writes.
    public static let version: UInt32 = 1
    static let magic: [UInt8] = Array("TDPK".utf8)
    static let fixedHeaderBytes = 48

    /// Channels in the source.
    public let channelCount: Int
    /// Frames in the source when the peaks were made.
    public let sourceFrameCount: Int64
    /// Size and mtime of the source when the peaks were made.
    public let sourceStamp: FileStamp
    /// Frames per level-0 bucket.
    public let baseBucketFrames: Int
    /// How much coarser each level is than the one before.
    public let levelFactor: Int
    private let storage: PeakStorage

    /// Builds every coarser level from `level0` (laid out like ``levels``[0]).
    public init(channelCount: Int, sourceFrameCount: Int64, sourceStamp: FileStamp, level0: [Float],
                baseBucketFrames: Int = PeakFile.defaultBaseBucketFrames,
                levelFactor: Int = PeakFile.defaultLevelFactor) {
        // Clamped so no division below can be by zero, whatever a caller passes.
        let channels = max(1, channelCount)
        let factor = max(2, levelFactor)
        let stride = channels * 2
        var levels = [Array(level0.prefix(level0.count / stride * stride))]
        while levels[levels.count - 1].count / stride > PeakFile.topLevelMaxBuckets {
            levels.append(PeakFile.coarsen(levels[levels.count - 1], channelCount: channels, factor: factor))
        }
        self.init(channelCount: channels, sourceFrameCount: sourceFrameCount, sourceStamp: sourceStamp,
                  baseBucketFrames: max(1, baseBucketFrames), levelFactor: factor, storage: PeakStorage(copying: levels, stride: stride))
    }

    private init(channelCount: Int, sourceFrameCount: Int64, sourceStamp: FileStamp,
                 baseBucketFrames: Int, levelFactor: Int, storage: PeakStorage) {
        self.channelCount = channelCount
        self.sourceFrameCount = sourceFrameCount
        self.sourceStamp = sourceStamp
        self.baseBucketFrames = baseBucketFrames
        self.levelFactor = levelFactor
        self.storage = storage
    }

    /// Per level, min and max interleaved per channel per bucket:
    /// `levels[l][(bucket * channelCount + channel) * 2]` is the min, `+ 1` the max.
    ///
    /// This copies every level into arrays, which for a lazily opened file reads it whole;
    /// drawing code should use ``minMax(channel:fromFrame:toFrame:level:)`` or
    /// ``bucket(level:index:channel:)``.
    public var levels: [[Float]] { (0..<levelCount).map { storage.array(level: $0) } }

    /// Number of levels (level 0 is the finest).
    public var levelCount: Int { storage.bucketCounts.count }

    /// Whether values are read from the file as queries need them (``open(path:)``) rather
    /// than held in memory.
    public var isLazy: Bool { storage.isLazy }

    /// Frames one bucket of `level` covers (saturating, so an absurd level cannot overflow).
    public func bucketFrames(level: Int) -> Int64 {
        var frames = Int64(baseBucketFrames)
        for _ in 0..<max(0, level) {
            let (next, overflow) = frames.multipliedReportingOverflow(by: Int64(levelFactor))
            if overflow { return .max }
            frames = next
        }
        return frames
    }

    /// Buckets in `level`.
    public func bucketCount(level: Int) -> Int {
        storage.bucketCounts[level]
    }

    /// Min and max of one bucket.
    public func bucket(level: Int, index: Int, channel: Int) -> (min: Float, max: Float) {
        var out: (min: Float, max: Float) = (0, 0)
        storage.withBuckets(level: level, from: index, to: index + 1) { p, _ in out = (p[channel * 2], p[channel * 2 + 1]) }
        return out
    }

    /// The coarsest level whose buckets span at most `frames` frames; 0 when even level 0's
    /// are wider. A waveform column of N frames drawn from `level(forBucketFramesAtMost: N / 16)`
    /// is off by at most a sixteenth of a column at each edge and reads a few buckets at most.
    public func level(forBucketFramesAtMost frames: Int64) -> Int {
        var level = 0
        while level + 1 < levelCount && bucketFrames(level: level + 1) <= frames { level += 1 }
        return level
    }

    /// Min and max of `channel` over the frames `[fromFrame, toFrame)`, to the resolution of
    /// one level-0 bucket (the range is widened to whole buckets). Uses the coarsest buckets
    /// that fit inside the range and finer ones only at its edges, so any range costs at most
    /// about 2 × ``levelFactor`` buckets per level. An empty range, or one outside the
    /// source, gives (0, 0).
    public func minMax(channel: Int, fromFrame: Int64, toFrame: Int64) -> (min: Float, max: Float) {
        minMax(channel: channel, fromFrame: fromFrame, toFrame: toFrame, level: 0)
    }

    /// Like ``minMax(channel:fromFrame:toFrame:)`` but to the resolution of one bucket of
    /// `level`: the range is widened to whole buckets of that level, and no finer level is
    /// read. Drawing an overview this way touches only the small coarse levels of the file.
    public func minMax(channel: Int, fromFrame: Int64, toFrame: Int64, level firstLevel: Int) -> (min: Float, max: Float) {
        let levelCount = self.levelCount
        guard channel >= 0, channel < channelCount, firstLevel >= 0, firstLevel < levelCount else { return (0, 0) }
        let start = max(0, fromFrame)
        let end = min(toFrame, Int64(bucketCount(level: 0)) * Int64(baseBucketFrames))
        guard end > start else { return (0, 0) }
        let size = bucketFrames(level: firstLevel)
        var lo = Int(start / size)
        var hi = min(Int((end - 1) / size) + 1, bucketCount(level: firstLevel))
        var low = Float.infinity
        var high = -Float.infinity
        let stride = channelCount * 2
        func scan(_ level: Int, _ from: Int, _ to: Int) {
            storage.withBuckets(level: level, from: from, to: to) { p, n in
                var i = channel * 2
                for _ in 0..<n {
                    low = Swift.min(low, p[i])
                    high = Swift.max(high, p[i + 1])
                    i += stride
                }
            }
        }
        var level = firstLevel
        let f = levelFactor
        while true {
            // Level counts are validated to be ceil(finer / factor), so [upLo, upHi) always
            // lies inside the next level.
            let upLo = (lo + f - 1) / f
            let upHi = hi / f
            if level + 1 >= levelCount || upLo >= upHi {
                scan(level, lo, hi)
                break
            }
            scan(level, lo, upLo * f)
            scan(level, upHi * f, hi)
            lo = upLo
            hi = upHi
            level += 1
        }
        return low <= high ? (low, high) : (0, 0)
    }

    /// Equal when the headers and every value agree, whichever form each is held in.
    public static func == (a: PeakFile, b: PeakFile) -> Bool {
        guard a.channelCount == b.channelCount, a.sourceFrameCount == b.sourceFrameCount,
              a.sourceStamp == b.sourceStamp, a.baseBucketFrames == b.baseBucketFrames,
              a.levelFactor == b.levelFactor, a.levelCount == b.levelCount else { return false }
        if a.storage === b.storage { return true }
        for l in 0..<a.levelCount where a.storage.array(level: l) != b.storage.array(level: l) { return false }
        return true
    }

    /// One level `factor` times coarser than `finer`.
    static func coarsen(_ finer: [Float], channelCount: Int, factor: Int) -> [Float] {
        let stride = channelCount * 2
        let fineCount = finer.count / stride
        let count = (fineCount + factor - 1) / factor
        var out = [Float](repeating: 0, count: count * stride)
        for b in 0..<count {
            let first = b * factor
            let last = min(first + factor, fineCount)
            for ch in 0..<channelCount {
                var low = Float.infinity
                var high = -Float.infinity
                for f in first..<last {
                    let i = (f * channelCount + ch) * 2
                    low = min(low, finer[i])
                    high = max(high, finer[i + 1])
                }
                out[(b * channelCount + ch) * 2] = low
                out[(b * channelCount + ch) * 2 + 1] = high
            }
        }
        return out
    }
}

// MARK: - Reading, writing, staleness

extension PeakFile {
    /// The peak file name Tapedeck uses for an audio file name: `take-1.wav` → `take-1.wav.peak`.
    public static func fileName(forAudioFileName name: String) -> String { name + ".peak" }

    /// What the header says: enough to find every level in the file.
    struct Layout {
        var channels: Int
        var baseBucketFrames: Int
        var levelFactor: Int
        var frames: Int64
        var stamp: FileStamp
        /// Buckets in each level.
        var bucketCounts: [Int]
        /// Floats per bucket: channels × 2.
        var stride: Int { channels * 2 }
        /// Where level 0 starts.
        var dataOffset: Int
    }

    /// Header bytes ``parse(_:fileSize:path:)`` may need: the fixed part and 64 level counts.
    static let maxHeaderBytes = fixedHeaderBytes + 64 * 8

    /// Checks a peak file's header (`raw`: the file's first bytes, up to ``maxHeaderBytes``
    /// or all of it) against its size, so that no later read can go outside the file.
    /// Throws ``AudioFileError`` naming `path` and what is wrong.
    static func parse(_ raw: UnsafeRawBufferPointer, fileSize: Int64, path: String) throws(AudioFileError) -> Layout {
        func fail(_ reason: String) -> AudioFileError { AudioFileError(path: path, reason: reason) }
        guard raw.count >= fixedHeaderBytes, raw.prefix(4).elementsEqual(magic) else {
            throw fail(raw.isEmpty ? "the peak file is empty" : "not a Tapedeck peak file")
        }
        func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        func i64(_ at: Int) -> Int64 { Int64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: Int64.self)) }
        let version = u32(4)
        guard version == PeakFile.version else { throw fail("peak file version \(version) is not supported (this build reads \(PeakFile.version))") }
        let channels = Int(u32(8)), base = Int(u32(12)), factor = Int(u32(16)), levelCount = Int(u32(20))
        let frames = i64(24)
        let stamp = FileStamp(sizeBytes: i64(32), modificationNanoseconds: i64(40))
        // Bounds keep every product below (bucket counts × frames, offsets) far from overflow.
        guard (1...1024).contains(channels), (1...(1 << 24)).contains(base), (2...(1 << 16)).contains(factor),
              (1...64).contains(levelCount), frames >= 0 else {
            throw fail("the peak file header is corrupt")
        }
        let dataOffset = fixedHeaderBytes + levelCount * 8
        guard raw.count >= dataOffset else { throw fail("the peak file is cut short") }
        var bucketCounts: [Int] = []
        var previous = 0
        var expected = Int64(dataOffset)
        for l in 0..<levelCount {
            let n = i64(fixedHeaderBytes + l * 8)
            guard n >= 0, n < (1 << 36) else { throw fail("the peak file header is corrupt") }
            // Each level must be exactly the one before made coarser; minMax relies on it.
            guard l == 0 || Int(n) == (previous + factor - 1) / factor else {
                throw fail("the peak file's levels do not match each other")
            }
            previous = Int(n)
            bucketCounts.append(Int(n))
            expected += n * Int64(channels) * 8
        }
        guard expected == fileSize else {
            throw fail(expected > fileSize ? "the peak file is cut short" : "the peak file has trailing bytes")
        }
        return Layout(channels: channels, baseBucketFrames: base, levelFactor: factor, frames: frames,
                      stamp: stamp, bucketCounts: bucketCounts, dataOffset: dataOffset)
    }

    /// Reads a peak file whole into memory. Throws ``AudioFileError`` naming the file when it
    /// is missing, not a peak file, from a newer version, or cut short.
    public static func load(path: String) throws(AudioFileError) -> PeakFile {
        // A peak file is about 1/64 the size of 16-bit mono audio; 2 GB is far beyond any take.
        let bytes = try FileSystem.readAll(path: path, limitBytes: 1 << 31)
        // Array.withUnsafeBytes only rethrows untyped errors; carry ours out by hand.
        var outcome: Result<PeakFile, AudioFileError> = .failure(AudioFileError(path: path, reason: "cannot read"))
        bytes.withUnsafeBytes { raw in
            let layout: Layout
            do throws(AudioFileError) { layout = try parse(raw, fileSize: Int64(raw.count), path: path) } catch {
                outcome = .failure(error)
                return
            }
            var offset = layout.dataOffset
            var levels: [[Float]] = []
            for buckets in layout.bucketCounts {
                let n = buckets * layout.stride
                var values = [Float](repeating: 0, count: n)
                values.withUnsafeMutableBytes { out in
                    out.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + out.count]))
                }
                if UInt32(1).littleEndian != 1 {
                    for i in values.indices { values[i] = Float(bitPattern: UInt32(littleEndian: values[i].bitPattern)) }
                }
                offset += n * 4
                levels.append(values)
            }
            outcome = .success(PeakFile(layout, storage: PeakStorage(copying: levels, stride: layout.stride)))
        }
        return try outcome.get()
    }

    /// Opens a peak file reading only its header: values are read from the file in small
    /// chunks as queries need them (see ``PeakStorage``), so opening costs the same for a
    /// minute or for hours. Throws ``AudioFileError`` for the same problems as ``load(path:)``;
    /// the header is checked against the file's size, so later reads stay inside it.
    ///
    /// The file stays open while the value lives. Tapedeck replaces peak files by rename, so
    /// the open file never changes underneath; if another program truncates it in place,
    /// the values past the end read as silence.
    public static func open(path: String) throws(AudioFileError) -> PeakFile {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AudioFileError(path: path, reason: "cannot open: \(FileSystem.errnoText())") }
        var handedOver = false
        defer { if !handedOver { close(fd) } }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw AudioFileError(path: path, reason: "cannot read: \(FileSystem.errnoText())") }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw AudioFileError(path: path, reason: "is a folder, not a file") }
        var header = [UInt8](repeating: 0, count: maxHeaderBytes)
        var done = 0
        while done < header.count {
            let n = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw AudioFileError(path: path, reason: "cannot read: \(FileSystem.errnoText())") }
            if n == 0 { break }
            done += n
        }
        header.removeSubrange(done...)
        let size = Int64(st.st_size)
        var outcome: Result<Layout, AudioFileError> = .failure(AudioFileError(path: path, reason: "cannot read"))
        header.withUnsafeBytes { raw in
            do throws(AudioFileError) { outcome = .success(try parse(raw, fileSize: size, path: path)) } catch { outcome = .failure(error) }
        }
        let layout = try outcome.get()
        handedOver = true
        return PeakFile(layout, storage: PeakStorage(fd: fd, dataOffset: layout.dataOffset,
                                                     bucketCounts: layout.bucketCounts, stride: layout.stride))
    }

    private init(_ layout: Layout, storage: PeakStorage) {
        self.init(channelCount: layout.channels, sourceFrameCount: layout.frames, sourceStamp: layout.stamp,
                  baseBucketFrames: layout.baseBucketFrames, levelFactor: layout.levelFactor, storage: storage)
    }

    /// Writes this peak file to `path` atomically (through `path.tmp` and a rename).
    public func save(path: String) throws(AudioFileError) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(PeakFile.fixedHeaderBytes + levelCount * 8 + storage.bucketCounts.reduce(0) { $0 + $1 * channelCount * 8 })
        bytes += PeakFile.magic
        func put32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        func put64(_ v: Int64) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        put32(PeakFile.version)
        put32(UInt32(channelCount))
        put32(UInt32(baseBucketFrames))
        put32(UInt32(levelFactor))
        put32(UInt32(levelCount))
        put64(sourceFrameCount)
        put64(sourceStamp.sizeBytes)
        put64(sourceStamp.modificationNanoseconds)
        for n in storage.bucketCounts { put64(Int64(n)) }
        for level in 0..<levelCount {
            storage.withBuckets(level: level, from: 0, to: storage.bucketCounts[level]) { p, n in
                let values = UnsafeBufferPointer(start: p, count: n * channelCount * 2)
                if UInt32(1).littleEndian == 1 {
                    bytes += UnsafeRawBufferPointer(values)
                } else {
                    for v in values { put32(v.bitPattern) }
                }
            }
        }
        try FileSystem.writeAtomically(bytes, to: path)
    }

    /// Whether the peak file at `peakPath` no longer describes `sourcePath`: it is missing,
    /// unreadable or of another version, or the source's size or mtime changed since it was
    /// made. Reads only the peak file's header and stats the source; never reads audio.
    public static func isStale(peakPath: String, sourcePath: String) -> Bool {
        guard let now = FileStamp.of(path: sourcePath),
              let header = FileSystem.readPrefix(path: peakPath, count: fixedHeaderBytes),
              header.count == fixedHeaderBytes, Array(header[0..<4]) == magic else { return true }
        return header.withUnsafeBytes { raw in
            guard UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) == version else { return true }
            let then = FileStamp(sizeBytes: Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 32, as: Int64.self)),
                                 modificationNanoseconds: Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 40, as: Int64.self)))
            return then != now
        }
    }

    /// The peaks of `audioPath`: opened lazily from `peakPath` (``open(path:)``) when that is up
    /// to date, otherwise rebuilt by streaming the audio (block by block) and saved there.
    /// Deciding costs a stat of the audio and the peak file's header; audio is read only to
    /// rebuild. Throws ``AudioFileError`` when the audio cannot be read or the peak file
    /// cannot be written.
    ///
    /// A peak file of at most ``wholeReadBytes`` is read whole and closed: a session of a
    /// thousand short regions, each its own file, would otherwise hold a thousand descriptors
    /// open for its waveforms (and pass the process's limit of open files), for less memory
    /// than a lazily read file may keep resident anyway.
    public static func ensure(for audioPath: String, peakPath: String) throws(AudioFileError) -> PeakFile {
        var st = stat()
        let small = stat(peakPath, &st) == 0 && Int64(st.st_size) <= wholeReadBytes
        if let now = FileStamp.of(path: audioPath), let peaks = try? (small ? load(path: peakPath) : open(path: peakPath)),
           peaks.sourceStamp == now {
            return peaks
        }
        return try build(for: audioPath, peakPath: peakPath)
    }

    /// Peak files up to this size are read whole by ``ensure(for:peakPath:)`` (64 KB: about 40 s
    /// of mono audio), larger ones lazily.
    public static let wholeReadBytes: Int64 = 64 << 10

    /// Rebuilds the peaks of `audioPath` from its audio and saves them to `peakPath`.
    public static func build(for audioPath: String, peakPath: String) throws(AudioFileError) -> PeakFile {
        // Stamp before reading: if the file changes while we read, the peaks come out stale.
        let reader = try AudioFileReader(path: audioPath, blockFrames: 16384)
        guard let stamp = FileStamp.of(path: audioPath) else {
            throw AudioFileError(path: audioPath, reason: "vanished while building its peaks")
        }
        let builder = PeakBuilder(channelCount: reader.channelCount)
        while true {
            let got = try reader.readInterleaved(frameCount: reader.blockFrames)
            if got == 0 { break }
            builder.append(interleaved: reader.interleavedBuffer, frameCount: got)
        }
        let peaks = builder.peakFile(sourceStamp: stamp)
        try peaks.save(path: peakPath)
        return peaks
    }
}
