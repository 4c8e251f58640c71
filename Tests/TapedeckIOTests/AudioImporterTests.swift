import TapedeckIO
import XCTest

/// Importing: rate conversion that keeps length, pitch and level; lossless same-rate copies;
/// fresh names; nothing left behind by a failure.
final class AudioImporterTests: XCTestCase {
    func testImporting44100Into48000KeepsLengthPitchAndLevel() throws {
        let folder = makeTempFolder(self)
        let source = "\(folder)/tone.wav"
        let frames = 88_201
        let format = AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 44100, channelCount: 2)
        let left = sine(hertz: 1000, sampleRate: 44100, frameCount: frames, amplitude: 0.5)
        let right = sine(hertz: 1000, sampleRate: 44100, frameCount: frames, amplitude: 0.125)
        try writeFile(source, format: format, channels: [left, right])
        let audio = "\(folder)/audio"
        mkdir(audio, 0o755)

        var fractions: [Double] = []
        let imported = try AudioImporter.importFile(source: source, destinationFolder: audio, sessionSampleRate: 48000) {
            fractions.append($0)
        }
        let expectedFrames = (Double(frames) * 48000 / 44100).rounded()
        XCTAssertEqual(Double(imported.frameCount), expectedFrames, accuracy: 1)
        XCTAssertTrue(imported.wasResampled)
        XCTAssertEqual(imported.encoding, .float32)
        XCTAssertEqual(imported.sampleRate, 48000)
        XCTAssertEqual(fractions.last, 1)
        XCTAssertEqual(fractions, fractions.sorted(), "progress goes backwards")

        let (channels, reader) = try readAll("\(audio)/\(imported.fileName)")
        XCTAssertEqual(reader.sampleRate, 48000)
        XCTAssertEqual(reader.frameCount, imported.frameCount)
        let middle = 10_000..<86_000
        XCTAssertEqual(frequencyByZeroCrossings(channels[0][middle], sampleRate: 48000), 1000, accuracy: 1)
        XCTAssertEqual(20 * log10(rms(channels[0][middle]) / rms(left[10_000..<78_000])), 0, accuracy: 0.1)
        XCTAssertEqual(20 * log10(rms(channels[1][middle]) / rms(right[10_000..<78_000])), 0, accuracy: 0.1)
        // The converter's tail was flushed: the sine runs to the last frames, not silence.
        let tail = channels[0].count - 300..<channels[0].count - 3
        XCTAssertEqual(20 * log10(rms(channels[0][tail]) / rms(left[10_000..<78_000])), 0, accuracy: 0.5)
        // Aligned in time: the sine's phase at 1 s is where it was in the source.
        XCTAssertEqual(Double(channels[0][48000]), Double(left[44100]), accuracy: 0.01)
    }

    func testSameRate16BitImportIsBitIdentical() throws {
        let folder = makeTempFolder(self)
        let source = "\(folder)/take.flac"
        let format = AudioFileFormat(container: .flac, encoding: .int16, sampleRate: 48000, channelCount: 2)
        try writeFile(source, format: format, channels: [noiseWithEdges(frameCount: 40_000, seed: 5),
                                                         sine(hertz: 440, sampleRate: 48000, frameCount: 40_000, amplitude: 1)])
        let imported = try AudioImporter.importFile(source: source, destinationFolder: folder, sessionSampleRate: 48000)
        XCTAssertEqual(imported.fileName, "take.wav")
        XCTAssertEqual(imported.encoding, .int16)
        XCTAssertFalse(imported.wasResampled)
        XCTAssertEqual(imported.frameCount, 40_000)
        XCTAssertEqual(readInts("\(folder)/take.wav"), readInts(source))
    }

    func testSameRate24BitImportIsBitIdentical() throws {
        let folder = makeTempFolder(self)
        let source = "\(folder)/take.wav"
        let format = AudioFileFormat(container: .wav, encoding: .int24, sampleRate: 44100, channelCount: 1)
        try writeFile(source, format: format, channels: [noiseWithEdges(frameCount: 30_000, seed: 6)])
        let imported = try AudioImporter.importFile(source: source, destinationFolder: folder, sessionSampleRate: 44100)
        XCTAssertEqual(imported.fileName, "take-2.wav", "the source's own name is taken")
        XCTAssertEqual(imported.encoding, .int24)
        XCTAssertEqual(readInts("\(folder)/take-2.wav"), readInts(source))
    }

    func testImportPicksFreshNamesWritesPeaksAndLeavesNoTemporaryFiles() throws {
        let folder = makeTempFolder(self)
        let source = "\(folder)/loop.aiff"
        writeWithSndfile(source, format: 0x020002 /* AIFF 16 */, sampleRate: 48000, channels: 1,
                         interleaved: sine(hertz: 200, sampleRate: 48000, frameCount: 20_000))
        let audio = "\(folder)/audio", peaks = "\(folder)/peaks"
        mkdir(audio, 0o755)
        mkdir(peaks, 0o755)
        let first = try AudioImporter.importFile(source: source, destinationFolder: audio, peaksFolder: peaks, sessionSampleRate: 48000)
        let second = try AudioImporter.importFile(source: source, destinationFolder: audio + "/", peaksFolder: peaks, sessionSampleRate: 48000)
        XCTAssertEqual([first.fileName, second.fileName], ["loop.wav", "loop-2.wav"])
        XCTAssertEqual(folderContents(audio), ["loop-2.wav", "loop.wav"])
        XCTAssertEqual(folderContents(peaks), ["loop-2.wav.peak", "loop.wav.peak"])
        XCTAssertFalse(PeakFile.isStale(peakPath: "\(peaks)/loop.wav.peak", sourcePath: "\(audio)/loop.wav"))
        let peak = try PeakFile.load(path: "\(peaks)/loop-2.wav.peak")
        XCTAssertEqual(peak.sourceFrameCount, 20_000)
        XCTAssertEqual(peak.minMax(channel: 0, fromFrame: 0, toFrame: 20_000).max, 0.5, accuracy: 1e-3)
    }

    func testFailedImportLeavesNothingBehindAndNamesTheSource() throws {
        let folder = makeTempFolder(self)
        let audio = "\(folder)/audio"
        mkdir(audio, 0o755)
        let bad = "\(folder)/bad.wav"
        writeBytes(Array(repeating: 0x41, count: 3000), to: bad)
        XCTAssertThrowsError(try AudioImporter.importFile(source: bad, destinationFolder: audio, sessionSampleRate: 48000)) {
            XCTAssertTrue("\($0)".hasPrefix(bad), "\($0)")
        }
        XCTAssertThrowsError(try AudioImporter.importFile(source: "\(folder)/missing.wav", destinationFolder: audio, sessionSampleRate: 48000)) {
            XCTAssertTrue("\($0)".contains("no such file"), "\($0)")
        }
        XCTAssertEqual(folderContents(audio), [])
    }

    func testImportIntoAMissingFolderSaysSo() throws {
        let folder = makeTempFolder(self)
        let source = "\(folder)/s.wav"
        try writeFile(source, format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1),
                      channels: [[0, 0.5, -0.5]])
        XCTAssertThrowsError(try AudioImporter.importFile(source: source, destinationFolder: "\(folder)/gone", sessionSampleRate: 48000)) {
            XCTAssertEqual("\($0)", "\(folder)/gone: folder does not exist")
        }
    }
}
