import CSndfile
import TapedeckIO
import XCTest

/// Formats Tapedeck does not write but must read: W64, AIFF, Ogg Vorbis, MP3.
final class AudioFileFormatsTests: XCTestCase {
    private let rate = 44100
    private let frameCount = 44100

    /// Writes a stereo 1 kHz sine at -6 dBFS (left) and half that (right) with libsndfile in
    /// `format`, reads it back and checks length, channels, rate and level.
    private func checkReads(format: Int32, ext: String, frameTolerance: Int64 = 0, levelToleranceDecibels: Double,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        let folder = makeTempFolder(self)
        let path = "\(folder)/s.\(ext)"
        let left = sine(hertz: 1000, sampleRate: rate, frameCount: frameCount, amplitude: 0.5)
        let right = sine(hertz: 1000, sampleRate: rate, frameCount: frameCount, amplitude: 0.25)
        var interleaved = [Float](repeating: 0, count: frameCount * 2)
        for i in 0..<frameCount { interleaved[2 * i] = left[i]; interleaved[2 * i + 1] = right[i] }
        XCTAssertTrue(writeWithSndfile(path, format: format, sampleRate: rate, channels: 2, interleaved: interleaved), file: file, line: line)

        let (channels, reader) = try readAll(path, blockFrames: 1024)
        XCTAssertEqual(reader.channelCount, 2, file: file, line: line)
        XCTAssertEqual(reader.sampleRate, rate, file: file, line: line)
        XCTAssertEqual(Double(reader.frameCount), Double(frameCount), accuracy: Double(frameTolerance), file: file, line: line)
        XCTAssertEqual(Double(channels[0].count), Double(frameCount), accuracy: Double(frameTolerance), file: file, line: line)
        // Level over the middle, away from codec start-up and tail.
        let middle = frameCount / 4..<frameCount * 3 / 4
        let expected = 0.5 / 2.0.squareRoot()
        let leftDecibels = 20 * log10(rms(channels[0][middle]) / expected)
        let rightDecibels = 20 * log10(rms(channels[1][middle]) / (expected / 2))
        XCTAssertEqual(leftDecibels, 0, accuracy: levelToleranceDecibels, file: file, line: line)
        XCTAssertEqual(rightDecibels, 0, accuracy: levelToleranceDecibels, file: file, line: line)
        XCTAssertEqual(frequencyByZeroCrossings(channels[0][middle], sampleRate: rate), 1000, accuracy: 1, file: file, line: line)
    }

    func testW64IsReadWithExactLengthAndLevel() throws {
        try checkReads(format: Int32(SF_FORMAT_W64 | SF_FORMAT_PCM_24), ext: "w64", levelToleranceDecibels: 0.001)
    }

    func testAIFFIsReadWithExactLengthAndLevel() throws {
        try checkReads(format: Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_16), ext: "aiff", levelToleranceDecibels: 0.001)
    }

    func testRF64IsReadWithExactLengthAndLevel() throws {
        try checkReads(format: Int32(SF_FORMAT_RF64 | SF_FORMAT_FLOAT), ext: "rf64", levelToleranceDecibels: 0.001)
    }

    func testOggVorbisIsReadWithItsLengthAndLevel() throws {
        let format = Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        try XCTSkipUnless(sndfileCanWrite(format: format, channels: 2), "this libsndfile cannot write Ogg Vorbis")
        try checkReads(format: format, ext: "ogg", levelToleranceDecibels: 0.2)
    }

    func testMP3IsReadWithItsLengthAndLevel() throws {
        let format = Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)
        try XCTSkipUnless(sndfileCanWrite(format: format, channels: 2), "this libsndfile cannot write MP3")
        // MP3 frames are 1152 samples and the encoder adds delay: the length is approximate.
        try checkReads(format: format, ext: "mp3", frameTolerance: 2 * 1152, levelToleranceDecibels: 0.5)
    }
}
