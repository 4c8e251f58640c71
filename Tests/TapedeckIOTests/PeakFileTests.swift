import TapedeckIO
import XCTest

/// Peak files: the right extremes at every level, stored and reloaded intact, rebuilt when stale.
final class PeakFileTests: XCTestCase {
    private let stamp = FileStamp(sizeBytes: 1, modificationNanoseconds: 2)

    /// Two channels: seeded noise, and a slow sine, fed in uneven blocks.
    private func build(frameCount: Int) -> (PeakFile, [[Float]]) {
        var noise = SeededNoise(seed: 42)
        let channels = [(0..<frameCount).map { _ in noise.next() },
                        sine(hertz: 3, sampleRate: 48000, frameCount: frameCount, amplitude: 0.8)]
        let builder = PeakBuilder(channelCount: 2)
        var done = 0
        var step = 1
        while done < frameCount {
            let n = min(step, frameCount - done)
            withPointers(channels, offset: done) { builder.append(channels: $0, frameCount: n) }
            done += n
            step = step * 3 % 1999 + 1
        }
        XCTAssertEqual(builder.frameCount, Int64(frameCount))
        return (builder.peakFile(sourceStamp: stamp), channels)
    }

    private func bruteForce(_ x: [Float], _ range: Range<Int>) -> (Float, Float) {
        let slice = x[max(0, range.lowerBound)..<min(x.count, range.upperBound)]
        return (slice.min() ?? 0, slice.max() ?? 0)
    }

    func testEveryLevelZeroBucketHoldsTheMinAndMaxOfIts256Frames() {
        let frames = 256 * 100 + 37
        let (peaks, channels) = build(frameCount: frames)
        XCTAssertEqual(peaks.bucketFrames(level: 0), 256)
        XCTAssertEqual(peaks.bucketCount(level: 0), 101, "the partial last bucket counts")
        for ch in 0..<2 {
            for b in 0..<101 {
                let expected = bruteForce(channels[ch], b * 256..<(b + 1) * 256)
                let got = peaks.bucket(level: 0, index: b, channel: ch)
                XCTAssertEqual(got.min, expected.0, "channel \(ch) bucket \(b)")
                XCTAssertEqual(got.max, expected.1, "channel \(ch) bucket \(b)")
            }
        }
    }

    func testCoarserLevelsAgreeWithTheSamplesTheyCover() {
        let frames = 256 * 16 * 16 * 2 + 1000
        let (peaks, channels) = build(frameCount: frames)
        XCTAssertEqual(peaks.levels.count, 3)
        XCTAssertLessThanOrEqual(peaks.bucketCount(level: 2), PeakFile.topLevelMaxBuckets)
        for level in 1..<peaks.levels.count {
            let size = Int(peaks.bucketFrames(level: level))
            XCTAssertEqual(size, 256 << (4 * level))
            for b in 0..<peaks.bucketCount(level: level) {
                for ch in 0..<2 {
                    let expected = bruteForce(channels[ch], b * size..<(b + 1) * size)
                    let got = peaks.bucket(level: level, index: b, channel: ch)
                    XCTAssertEqual(got.min, expected.0, "level \(level) bucket \(b)")
                    XCTAssertEqual(got.max, expected.1, "level \(level) bucket \(b)")
                }
            }
        }
    }

    func testMinMaxOfAnyRangeEqualsTheSamplesOfItsWholeBuckets() {
        let frames = 256 * 16 * 16 * 2 + 1000
        let (peaks, channels) = build(frameCount: frames)
        var noise = SeededNoise(seed: 9)
        for _ in 0..<300 {
            let a = Int((noise.next() + 1) / 2 * Float(frames))
            let length = Int(pow(10, Double((noise.next() + 1) * 2.6)))
            let range = a..<min(frames, a + length)
            let widened = range.lowerBound / 256 * 256..<(range.upperBound + 255) / 256 * 256
            for ch in 0..<2 {
                let expected = bruteForce(channels[ch], widened)
                let got = peaks.minMax(channel: ch, fromFrame: Int64(range.lowerBound), toFrame: Int64(range.upperBound))
                XCTAssertEqual(got.min, expected.0, "range \(range)")
                XCTAssertEqual(got.max, expected.1, "range \(range)")
            }
        }
        let whole = peaks.minMax(channel: 0, fromFrame: -5, toFrame: Int64(frames) * 2)
        XCTAssertEqual(whole.min, channels[0].min())
        XCTAssertEqual(whole.max, channels[0].max())
        XCTAssertTrue(peaks.minMax(channel: 0, fromFrame: 100, toFrame: 100) == (0, 0))
        XCTAssertTrue(peaks.minMax(channel: 5, fromFrame: 0, toFrame: 100) == (0, 0))
    }

    func testSavedPeakFileLoadsBackIdentical() throws {
        let folder = makeTempFolder(self)
        let (peaks, _) = build(frameCount: 70_000)
        try peaks.save(path: "\(folder)/p.peak")
        XCTAssertEqual(try PeakFile.load(path: "\(folder)/p.peak"), peaks)
        XCTAssertEqual(firstBytes("\(folder)/p.peak", count: 4), Array("TDPK".utf8))
    }

    func testCorruptOrCutPeakFilesAreRefusedWithAReason() throws {
        let folder = makeTempFolder(self)
        let (peaks, _) = build(frameCount: 70_000)
        let path = "\(folder)/p.peak"
        try peaks.save(path: path)
        XCTAssertEqual(truncate(path, Int(fileSize(path)) - 3), 0)
        XCTAssertThrowsError(try PeakFile.load(path: path)) { XCTAssertTrue("\($0)".contains("cut short"), "\($0)") }
        writeBytes(Array("nonsense that is long enough to hold a header, surely........".utf8), to: path)
        XCTAssertThrowsError(try PeakFile.load(path: path)) { XCTAssertTrue("\($0)".contains("not a Tapedeck peak file"), "\($0)") }
        XCTAssertThrowsError(try PeakFile.load(path: "\(folder)/none.peak")) { XCTAssertTrue("\($0)".contains("none.peak"), "\($0)") }
    }

    func testPeaksWrittenWhileWritingMatchPeaksBuiltFromTheFileAfterwards() throws {
        let folder = makeTempFolder(self)
        let audio = "\(folder)/take.wav"
        let live = "\(folder)/take.wav.peak"
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 2)
        let channels = [noiseWithEdges(frameCount: 100_000, seed: 3), sine(hertz: 50, sampleRate: 48000, frameCount: 100_000)]
        try writeFile(audio, format: format, channels: channels, peakPath: live)
        let written = try PeakFile.load(path: live)
        XCTAssertFalse(PeakFile.isStale(peakPath: live, sourcePath: audio))
        let rebuilt = try PeakFile.build(for: audio, peakPath: "\(folder)/rebuilt.peak")
        XCTAssertEqual(written.sourceFrameCount, 100_000)
        XCTAssertEqual(written, rebuilt, "live peaks differ from peaks of the finished file")
    }

    func testHeaderUpdatesLeavePeaksOfTheAudioSoFar() throws {
        let folder = makeTempFolder(self)
        let audio = "\(folder)/live.flac"
        let peakPath = "\(folder)/live.flac.peak"
        let format = AudioFileFormat(container: .flac, encoding: .int24, sampleRate: 48000, channelCount: 1)
        let writer = try AudioFileWriter(path: audio, format: format, peakPath: peakPath)
        let block = sine(hertz: 100, sampleRate: 48000, frameCount: 48000, amplitude: 0.25)
        try withPointers([block], offset: 0) { try writer.write($0, frameCount: 48000) }
        writer.updateHeader()
        let soFar = try PeakFile.load(path: peakPath)
        XCTAssertEqual(soFar.sourceFrameCount, 48000)
        XCTAssertEqual(soFar.minMax(channel: 0, fromFrame: 0, toFrame: 48000).max, 0.25, accuracy: 1e-4)
        try withPointers([block], offset: 0) { try writer.write($0, frameCount: 48000) }
        try writer.close()
        XCTAssertNil(writer.peakError)
        XCTAssertEqual(try PeakFile.load(path: peakPath).sourceFrameCount, 96000)
    }

    func testChangedAudioMakesThePeakFileStaleAndEnsureRebuildsIt() throws {
        let folder = makeTempFolder(self)
        let audio = "\(folder)/a.wav"
        let peakPath = "\(folder)/a.wav.peak"
        let format = AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1)
        XCTAssertTrue(PeakFile.isStale(peakPath: peakPath, sourcePath: audio), "no files at all")
        try writeFile(audio, format: format, channels: [sine(hertz: 440, sampleRate: 48000, frameCount: 5000)])
        XCTAssertTrue(PeakFile.isStale(peakPath: peakPath, sourcePath: audio), "no peak file yet")
        let first = try PeakFile.ensure(for: audio, peakPath: peakPath)
        XCTAssertEqual(first.sourceFrameCount, 5000)
        XCTAssertFalse(PeakFile.isStale(peakPath: peakPath, sourcePath: audio))

        try writeFile(audio, format: format, channels: [sine(hertz: 440, sampleRate: 48000, frameCount: 9000, amplitude: 0.9)])
        XCTAssertTrue(PeakFile.isStale(peakPath: peakPath, sourcePath: audio), "the audio changed")
        let second = try PeakFile.ensure(for: audio, peakPath: peakPath)
        XCTAssertEqual(second.sourceFrameCount, 9000)
        XCTAssertEqual(second.minMax(channel: 0, fromFrame: 0, toFrame: 9000).max, 0.9, accuracy: 1e-3)
        XCTAssertFalse(PeakFile.isStale(peakPath: peakPath, sourcePath: audio))
        XCTAssertEqual(try PeakFile.load(path: peakPath), second)
    }

    func testEnsureOnABadAudioFileThrowsNamingIt() {
        let folder = makeTempFolder(self)
        writeBytes([1, 2, 3, 4, 5, 6, 7, 8], to: "\(folder)/bad.wav")
        XCTAssertThrowsError(try PeakFile.ensure(for: "\(folder)/bad.wav", peakPath: "\(folder)/bad.peak")) {
            XCTAssertTrue("\($0)".contains("bad.wav"), "\($0)")
        }
    }
}
