import TapedeckIO
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Lazily opened peak files (``PeakFile/open(path:)``): the same answers as loaded ones, coarse-level
/// queries exact to their buckets, corrupt files refused with a reason, and `ensure` opening a
/// fresh file without touching the audio.
final class PeakFileLazyTests: XCTestCase {
    private let stamp = FileStamp(sizeBytes: 7, modificationNanoseconds: 8)

    /// 16-frame level-0 buckets, so a short signal already has four levels.
    private let base = 16
    private let frames = 16 * 16 * 16 * 16 * 2 + 999

    /// Two channels of seeded noise under different slow envelopes, so every level has
    /// structure.
    private func makePeaks(frameCount: Int) -> (PeakFile, [[Float]]) {
        var noise = SeededNoise(seed: 77)
        let channels = (0..<2).map { ch in
            (0..<frameCount).map { i in noise.next() * Float(0.2 + 0.8 * abs(sin(Double(i) / Double(9000 + 5000 * ch)))) }
        }
        let builder = PeakBuilder(channelCount: 2, baseBucketFrames: base)
        withPointers(channels, offset: 0) { builder.append(channels: $0, frameCount: frameCount) }
        return (builder.peakFile(sourceStamp: stamp), channels)
    }

    /// Min and max of the samples in `range` (clipped to the signal); a raw loop, as slices
    /// are slow in debug builds.
    private func bruteForce(_ x: [Float], _ range: Range<Int>) -> (Float, Float) {
        let from = max(0, range.lowerBound), to = min(x.count, range.upperBound)
        guard from < to else { return (0, 0) }
        return x.withUnsafeBufferPointer { p in
            var low = p[from], high = p[from]
            for i in from..<to {
                low = min(low, p[i])
                high = max(high, p[i])
            }
            return (low, high)
        }
    }

    func testOpenedPeakFileAnswersExactlyAsTheLoadedOne() throws {
        let folder = makeTempFolder(self)
        let (built, _) = makePeaks(frameCount: frames)
        let path = "\(folder)/p.peak"
        try built.save(path: path)
        let loaded = try PeakFile.load(path: path)
        let lazy = try PeakFile.open(path: path)
        XCTAssertTrue(lazy.isLazy)
        XCTAssertFalse(loaded.isLazy)
        XCTAssertEqual(lazy, loaded)
        XCTAssertEqual(lazy, built)
        XCTAssertEqual(lazy.levelCount, 4)
        XCTAssertEqual(lazy.channelCount, 2)
        XCTAssertEqual(lazy.sourceFrameCount, Int64(frames))
        XCTAssertEqual(lazy.sourceStamp, stamp)
        var noise = SeededNoise(seed: 5)
        for _ in 0..<400 {
            let a = Int64((noise.next() + 1) / 2 * Float(frames + 2000)) - 1000
            let length = Int64(pow(10, Double((noise.next() + 1) * 3)))
            for ch in 0..<2 {
                let m = lazy.minMax(channel: ch, fromFrame: a, toFrame: a + length)
                let l = loaded.minMax(channel: ch, fromFrame: a, toFrame: a + length)
                XCTAssertTrue(m == l, "range \(a)..<\(a + length): lazy \(m), loaded \(l)")
                for level in 0..<lazy.levelCount {
                    let ml = lazy.minMax(channel: ch, fromFrame: a, toFrame: a + length, level: level)
                    let ll = loaded.minMax(channel: ch, fromFrame: a, toFrame: a + length, level: level)
                    XCTAssertTrue(ml == ll, "level \(level) range \(a)..<\(a + length)")
                }
            }
        }
        for level in 0..<lazy.levelCount {
            XCTAssertEqual(lazy.bucketCount(level: level), loaded.bucketCount(level: level))
            for b in stride(from: 0, to: lazy.bucketCount(level: level), by: 7) {
                XCTAssertTrue(lazy.bucket(level: level, index: b, channel: 1) == loaded.bucket(level: level, index: b, channel: 1))
            }
        }
    }

    func testALazyFileSpanningManyChunksAnswersRightWhileDroppingOldChunks() throws {
        // One-frame buckets: 50 chunks of level 0, more than a lazy file keeps at once.
        let folder = makeTempFolder(self)
        var noise = SeededNoise(seed: 3)
        let samples = (0..<(4096 * 50 + 17)).map { _ in noise.next() }
        let builder = PeakBuilder(channelCount: 1, baseBucketFrames: 1)
        withPointers([samples], offset: 0) { builder.append(channels: $0, frameCount: samples.count) }
        let built = builder.peakFile(sourceStamp: stamp)
        try built.save(path: "\(folder)/many.peak")
        let lazy = try PeakFile.open(path: "\(folder)/many.peak")
        for _ in 0..<3000 {
            let a = Int((noise.next() + 1) / 2 * Float(samples.count))
            let length = Int64((noise.next() + 1) * 3000) + 1
            XCTAssertTrue(lazy.minMax(channel: 0, fromFrame: Int64(a), toFrame: Int64(a) + length)
                          == built.minMax(channel: 0, fromFrame: Int64(a), toFrame: Int64(a) + length))
            XCTAssertEqual(lazy.bucket(level: 0, index: a, channel: 0).max, samples[a])
        }
        XCTAssertEqual(lazy, built)
    }

    func testCoarseLevelQueriesCoverTheRangeWidenedToThatLevelsBuckets() {
        let (peaks, channels) = makePeaks(frameCount: frames)
        var noise = SeededNoise(seed: 11)
        for _ in 0..<200 {
            let a = Int((noise.next() + 1) / 2 * Float(frames))
            let length = Int(pow(10, Double((noise.next() + 1) * 3))) + 1
            let range = a..<min(frames, a + length)
            for level in 0..<peaks.levelCount {
                let size = Int(peaks.bucketFrames(level: level))
                let widened = range.lowerBound / size * size..<(range.upperBound + size - 1) / size * size
                for ch in 0..<2 {
                    let expected = bruteForce(channels[ch], widened)
                    let got = peaks.minMax(channel: ch, fromFrame: Int64(range.lowerBound), toFrame: Int64(range.upperBound), level: level)
                    XCTAssertEqual(got.min, expected.0, "level \(level) range \(range)")
                    XCTAssertEqual(got.max, expected.1, "level \(level) range \(range)")
                }
            }
        }
        XCTAssertEqual(peaks.bucketFrames(level: 2), Int64(base * 16 * 16))
        XCTAssertEqual(peaks.level(forBucketFramesAtMost: 0), 0)
        XCTAssertEqual(peaks.level(forBucketFramesAtMost: peaks.bucketFrames(level: 1) - 1), 0)
        XCTAssertEqual(peaks.level(forBucketFramesAtMost: peaks.bucketFrames(level: 1)), 1)
        XCTAssertEqual(peaks.level(forBucketFramesAtMost: peaks.bucketFrames(level: 3) - 1), 2)
        XCTAssertEqual(peaks.level(forBucketFramesAtMost: 1 << 40), peaks.levelCount - 1)
        XCTAssertTrue(peaks.minMax(channel: 0, fromFrame: 0, toFrame: 10, level: 9) == (0, 0), "no such level")
    }

    func testCorruptPeakFilesAreRefusedByOpenWithAReason() throws {
        let folder = makeTempFolder(self)
        // 300 level-0 buckets, then 19, then 2.
        let (peaks, _) = makePeaks(frameCount: 16 * 300)
        let good = "\(folder)/good.peak"
        try peaks.save(path: good)
        let bytes = firstBytes(good, count: Int(fileSize(good)))
        func refused(_ content: [UInt8], _ reason: String, file: StaticString = #filePath, line: UInt = #line) {
            let path = "\(folder)/bad.peak"
            writeBytes(content, to: path)
            XCTAssertThrowsError(try PeakFile.open(path: path), file: file, line: line) {
                XCTAssertTrue("\($0)".contains(reason) && "\($0)".contains("bad.peak"), "\($0)", file: file, line: line)
            }
            XCTAssertThrowsError(try PeakFile.load(path: path), file: file, line: line)
        }
        refused([], "empty")
        refused(Array(bytes.prefix(20)), "not a Tapedeck peak file")
        refused(Array(bytes.dropLast(4)), "cut short")
        refused(bytes + [0, 0, 0, 0], "trailing bytes")
        var version = bytes
        version[4] = 9
        refused(version, "version 9")
        var channels = bytes
        channels[8] = 0
        refused(channels, "header is corrupt")
        // Level 1 claiming one bucket more than level 0 makes: sizes still add up, but a
        // query would walk off the level, so it is refused.
        var levels = bytes
        levels[48 + 8] &+= 1
        levels[48] &-= 1
        refused(levels, "levels do not match")
        XCTAssertThrowsError(try PeakFile.open(path: "\(folder)/none.peak")) { XCTAssertTrue("\($0)".contains("none.peak")) }
        XCTAssertThrowsError(try PeakFile.open(path: folder)) { XCTAssertTrue("\($0)".contains("folder"), "\($0)") }
    }

    func testEnsureOpensAFreshPeakFileWithoutReadingTheAudio() throws {
        let folder = makeTempFolder(self)
        let audio = "\(folder)/a.wav"
        let peakPath = "\(folder)/a.wav.peak"
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 2)
        try writeFile(audio, format: format, channels: [sine(hertz: 100, sampleRate: 48000, frameCount: 20_000),
                                                        sine(hertz: 30, sampleRate: 48000, frameCount: 20_000, amplitude: 0.25)],
                      peakPath: peakPath)
        let written = try PeakFile.load(path: peakPath)
        // Garbage where the audio was, with the size and mtime the peaks were stamped with:
        // anything that read the audio now would fail.
        overwriteKeepingStamp(audio)
        let ensured = try PeakFile.ensure(for: audio, peakPath: peakPath)
        XCTAssertFalse(ensured.isLazy, "a small peak file is read whole: no descriptor stays open")
        XCTAssertEqual(ensured, written)
        XCTAssertEqual(ensured.channelCount, 2, "the channel count comes from the peak file")
        XCTAssertFalse(PeakFile.isStale(peakPath: peakPath, sourcePath: audio))

        // Once the audio's mtime moves, the peaks are stale and ensure must read the audio:
        // here that fails, naming it, which shows the fresh case above did not read it.
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, audio, &times, 0), 0)
        XCTAssertTrue(PeakFile.isStale(peakPath: peakPath, sourcePath: audio))
        XCTAssertThrowsError(try PeakFile.ensure(for: audio, peakPath: peakPath)) { XCTAssertTrue("\($0)".contains("a.wav"), "\($0)") }
    }

    func testEnsureRebuildsACorruptPeakFileFromTheAudio() throws {
        let folder = makeTempFolder(self)
        let audio = "\(folder)/b.wav"
        let peakPath = "\(folder)/b.wav.peak"
        let format = AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1)
        try writeFile(audio, format: format, channels: [sine(hertz: 440, sampleRate: 48000, frameCount: 30_000, amplitude: 0.7)],
                      peakPath: peakPath)
        XCTAssertEqual(truncate(peakPath, Int(fileSize(peakPath)) - 8), 0)
        XCTAssertFalse(PeakFile.isStale(peakPath: peakPath, sourcePath: audio), "the header alone still looks fresh")
        let rebuilt = try PeakFile.ensure(for: audio, peakPath: peakPath)
        XCTAssertFalse(rebuilt.isLazy)
        XCTAssertEqual(rebuilt.minMax(channel: 0, fromFrame: 0, toFrame: 30_000).max, 0.7, accuracy: 1e-4)
        XCTAssertEqual(try PeakFile.open(path: peakPath), rebuilt, "the rebuilt file was saved")
    }

    /// Replaces the first bytes of `path` with text that is no audio format, then puts its
    /// mtime back, so its stamp is unchanged.
    private func overwriteKeepingStamp(_ path: String) {
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        let fd = open(path, O_WRONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let junk = [UInt8](repeating: UInt8(ascii: "x"), count: 64)
        XCTAssertEqual(junk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, 64)
        close(fd)
        var times = [st.st_atim, st.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        XCTAssertEqual(fileSize(path), Int64(st.st_size))
    }
}
