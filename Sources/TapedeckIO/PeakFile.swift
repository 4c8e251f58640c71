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
    /// Per level, min and max interleaved per channel per bucket:
    /// `levels[l][(bucket * channelCount + channel) * 2]` is the min, `+ 1` the max.
    public let levels: [[Float]]

    /// Builds every coarser level from `level0` (laid out like ``levels``[0]).
    public init(channelCount: Int, sourceFrameCount: Int64, sourceStamp: FileStamp, level0: [Float],
                baseBucketFrames: Int = PeakFile.defaultBaseBucketFrames,
                levelFactor: Int = PeakFile.defaultLevelFactor) {
        var levels = [level0]
        let stride = max(1, channelCount) * 2
        while levels[levels.count - 1].count / stride > PeakFile.topLevelMaxBuckets {
            levels.append(PeakFile.coarsen(levels[levels.count - 1], channelCount: channelCount, factor: levelFactor))
        }
        self.init(channelCount: channelCount, sourceFrameCount: sourceFrameCount, sourceStamp: sourceStamp,
                  baseBucketFrames: baseBucketFrames, levelFactor: levelFactor, levels: levels)
    }

    private init(channelCount: Int, sourceFrameCount: Int64, sourceStamp: FileStamp,
                 baseBucketFrames: Int, levelFactor: Int, levels: [[Float]]) {
        self.channelCount = channelCount
        self.sourceFrameCount = sourceFrameCount
        self.sourceStamp = sourceStamp
        self.baseBucketFrames = baseBucketFrames
        self.levelFactor = levelFactor
        self.levels = levels
    }

    /// Frames one bucket of `level` covers.
    public func bucketFrames(level: Int) -> Int64 {
        var frames = Int64(baseBucketFrames)
        for _ in 0..<level { frames *= Int64(levelFactor) }
        return frames
    }

    /// Buckets in `level`.
    public func bucketCount(level: Int) -> Int {
        levels[level].count / (channelCount * 2)
    }

    /// Min and max of one bucket.
    public func bucket(level: Int, index: Int, channel: Int) -> (min: Float, max: Float) {
        let i = (index * channelCount + channel) * 2
        return (levels[level][i], levels[level][i + 1])
    }

    /// Min and max of `channel` over the frames `[fromFrame, toFrame)`, to the resolution of
    /// one level-0 bucket (the range is widened to whole buckets). Uses the coarsest buckets
    /// that fit inside the range and finer ones only at its edges, so any range costs at most
    /// about 2 × ``levelFactor`` buckets per level. An empty range, or one outside the
    /// source, gives (0, 0).
    public func minMax(channel: Int, fromFrame: Int64, toFrame: Int64) -> (min: Float, max: Float) {
        guard channel >= 0, channel < channelCount, !levels.isEmpty else { return (0, 0) }
        let start = max(0, fromFrame)
        let end = min(toFrame, Int64(bucketCount(level: 0)) * Int64(baseBucketFrames))
        guard end > start else { return (0, 0) }
        var lo = Int(start / Int64(baseBucketFrames))
        var hi = Int((end - 1) / Int64(baseBucketFrames)) + 1
        var low = Float.infinity
        var high = -Float.infinity
        func scan(_ level: Int, _ from: Int, _ to: Int) {
            let values = levels[level]
            var b = from
            while b < to {
                let i = (b * channelCount + channel) * 2
                low = Swift.min(low, values[i])
                high = Swift.max(high, values[i + 1])
                b += 1
            }
        }
        var level = 0
        while true {
            let f = levelFactor
            let upLo = (lo + f - 1) / f
            let upHi = hi / f
            if level + 1 >= levels.count || upLo >= upHi {
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

    /// Reads a peak file. Throws ``AudioFileError`` naming the file when it is missing,
    /// not a peak file, from a newer version, or cut short.
    public static func load(path: String) throws(AudioFileError) -> PeakFile {
        // A peak file is about 1/64 the size of 16-bit mono audio; 2 GB is far beyond any take.
        let bytes = try FileSystem.readAll(path: path, limitBytes: 1 << 31)
        func fail(_ reason: String) -> AudioFileError { AudioFileError(path: path, reason: reason) }
        guard bytes.count >= fixedHeaderBytes, Array(bytes[0..<4]) == magic else {
            throw fail(bytes.isEmpty ? "the peak file is empty" : "not a Tapedeck peak file")
        }
        var reader = ByteReader(bytes: bytes, offset: 4)
        let version = reader.u32()
        guard version == PeakFile.version else { throw fail("peak file version \(version) is not supported (this build reads \(PeakFile.version))") }
        let channels = Int(reader.u32())
        let base = Int(reader.u32())
        let factor = Int(reader.u32())
        let levelCount = Int(reader.u32())
        let frames = reader.i64()
        let stamp = FileStamp(sizeBytes: reader.i64(), modificationNanoseconds: reader.i64())
        guard (1...1024).contains(channels), base >= 1, factor >= 2, (1...64).contains(levelCount), frames >= 0 else {
            throw fail("the peak file header is corrupt")
        }
        guard bytes.count >= fixedHeaderBytes + levelCount * 8 else { throw fail("the peak file is cut short") }
        var counts: [Int] = []
        var expected = Int64(fixedHeaderBytes + levelCount * 8)
        for _ in 0..<levelCount {
            let n = reader.i64()
            guard n >= 0, n < (1 << 40) else { throw fail("the peak file header is corrupt") }
            counts.append(Int(n))
            expected += n * Int64(channels) * 8
        }
        guard expected == Int64(bytes.count) else {
            throw fail(expected > Int64(bytes.count) ? "the peak file is cut short" : "the peak file has trailing bytes")
        }
        var levels: [[Float]] = []
        for n in counts {
            var values = [Float](repeating: 0, count: n * channels * 2)
            let start = reader.offset
            values.withUnsafeMutableBytes { out in
                bytes.withUnsafeBytes { raw in
                    out.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[start..<start + out.count]))
                }
            }
            reader.offset += values.count * 4
            if UInt32(1).littleEndian != 1 {
                for i in values.indices { values[i] = Float(bitPattern: UInt32(littleEndian: values[i].bitPattern)) }
            }
            levels.append(values)
        }
        return PeakFile(channelCount: channels, sourceFrameCount: frames, sourceStamp: stamp,
                        baseBucketFrames: base, levelFactor: factor, levels: levels)
    }

    /// Writes this peak file to `path` atomically (through `path.tmp` and a rename).
    public func save(path: String) throws(AudioFileError) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(PeakFile.fixedHeaderBytes + levels.count * 8 + levels.reduce(0) { $0 + $1.count * 4 })
        bytes += PeakFile.magic
        func put32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        func put64(_ v: Int64) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        put32(PeakFile.version)
        put32(UInt32(channelCount))
        put32(UInt32(baseBucketFrames))
        put32(UInt32(levelFactor))
        put32(UInt32(levels.count))
        put64(sourceFrameCount)
        put64(sourceStamp.sizeBytes)
        put64(sourceStamp.modificationNanoseconds)
        for level in levels { put64(Int64(level.count / (channelCount * 2))) }
        for level in levels {
            if UInt32(1).littleEndian == 1 {
                level.withUnsafeBytes { bytes += $0 }
            } else {
                for v in level { put32(v.bitPattern) }
            }
        }
        try FileSystem.writeAtomically(bytes, to: path)
    }

    /// Whether the peak file at `peakPath` no longer describes `sourcePath`: it is missing,
    /// unreadable or of another version, or the source's size or mtime changed since it was
    /// made. Reads only the header.
    public static func isStale(peakPath: String, sourcePath: String) -> Bool {
        guard let now = FileStamp.of(path: sourcePath),
              let header = FileSystem.readPrefix(path: peakPath, count: fixedHeaderBytes),
              header.count == fixedHeaderBytes, Array(header[0..<4]) == magic else { return true }
        var reader = ByteReader(bytes: header, offset: 4)
        guard reader.u32() == version else { return true }
        reader.offset = 32
        let then = FileStamp(sizeBytes: reader.i64(), modificationNanoseconds: reader.i64())
        return then != now
    }

    /// The peaks of `audioPath`: loaded from `peakPath` when that is up to date, otherwise
    /// rebuilt by streaming the audio (block by block) and saved there. Throws
    /// ``AudioFileError`` when the audio cannot be read or the peak file cannot be written.
    public static func ensure(for audioPath: String, peakPath: String) throws(AudioFileError) -> PeakFile {
        if !isStale(peakPath: peakPath, sourcePath: audioPath), let peaks = try? load(path: peakPath) {
            return peaks
        }
        return try build(for: audioPath, peakPath: peakPath)
    }

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

/// Little-endian cursor over bytes whose length the caller has already checked.
struct ByteReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func u32() -> UInt32 {
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        offset += 4
        return v
    }

    mutating func i64() -> Int64 {
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return Int64(bitPattern: v)
    }
}
