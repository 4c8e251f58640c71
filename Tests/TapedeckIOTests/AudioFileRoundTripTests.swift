import CSndfile
import TapedeckIO
import XCTest

/// Writing with AudioFileWriter and reading back with AudioFileReader loses nothing.
final class AudioFileRoundTripTests: XCTestCase {
    private let frameCount = 10_000

    private func signal() -> [[Float]] {
        [noiseWithEdges(frameCount: frameCount, seed: 1), sine(hertz: 997, sampleRate: 48000, frameCount: frameCount, amplitude: 1.0)]
    }

    /// What an integer file of `bits` must hold for `x`: rounded, clipped at the top.
    private func expectedInts(_ x: Float, bits: Int) -> Int32 {
        let scale = Double(1 << (bits - 1))
        let v = min(max((Double(x) * scale).rounded(), -scale), scale - 1)
        return Int32(v) << Int32(32 - bits)
    }

    private func checkIntegerRoundTrip(_ container: AudioContainer, _ encoding: SampleEncoding, file: StaticString = #filePath, line: UInt = #line) throws {
        let folder = makeTempFolder(self)
        let path = "\(folder)/a.\(container.rawValue)"
        let input = signal()
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: 48000, channelCount: 2)
        try writeFile(path, format: format, channels: input)

        let ints = readInts(path)
        XCTAssertEqual(ints.count, frameCount * 2, file: file, line: line)
        var mismatches = 0
        for i in 0..<min(ints.count / 2, frameCount) {
            for ch in 0..<2 where ints[i * 2 + ch] != expectedInts(input[ch][i], bits: encoding.bits) { mismatches += 1 }
        }
        XCTAssertEqual(mismatches, 0, "integer samples differ from the rounded input", file: file, line: line)
        // The most negative integer and full scale survive.
        XCTAssertEqual(ints[1 * 2], Int32.min, file: file, line: line)
        XCTAssertEqual(ints[0], Int32(((1 << (encoding.bits - 1)) - 1) << (32 - encoding.bits)), file: file, line: line)

        // Float read → write back at the same depth → the same integers.
        let (floats, reader) = try readAll(path)
        XCTAssertEqual(reader.frameCount, Int64(frameCount), file: file, line: line)
        XCTAssertEqual(reader.losslessEncoding, encoding, file: file, line: line)
        let copy = "\(folder)/b.\(container.rawValue)"
        try writeFile(copy, format: format, channels: floats, blockFrames: 4096)
        XCTAssertEqual(readInts(copy), ints, "float read and write back is not bit-identical", file: file, line: line)
    }

    func testWAV16RoundTripIsBitExact() throws { try checkIntegerRoundTrip(.wav, .int16) }
    func testWAV24RoundTripIsBitExact() throws { try checkIntegerRoundTrip(.wav, .int24) }
    func testFLAC16RoundTripIsBitExact() throws { try checkIntegerRoundTrip(.flac, .int16) }
    func testFLAC24RoundTripIsBitExact() throws { try checkIntegerRoundTrip(.flac, .int24) }

    func testWAVFloatRoundTripIsExactIncludingValuesBeyondFullScale() throws {
        let folder = makeTempFolder(self)
        let path = "\(folder)/f.wav"
        var input = signal()
        input[0][20] = 1.5
        input[0][21] = -3.25
        input[1][22] = .leastNonzeroMagnitude
        let format = AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 44100, channelCount: 2)
        try writeFile(path, format: format, channels: input)
        let (floats, reader) = try readAll(path)
        XCTAssertEqual(reader.channelCount, 2)
        XCTAssertEqual(reader.sampleRate, 44100)
        XCTAssertEqual(floats[0], input[0])
        XCTAssertEqual(floats[1], input[1])
    }

    func testShortRF64OpenedWAVIsClosedAsPlainRIFF() throws {
        let folder = makeTempFolder(self)
        let path = "\(folder)/short.wav"
        let format = AudioFileFormat(container: .wav, encoding: .int24, sampleRate: 48000, channelCount: 1)
        try writeFile(path, format: format, channels: [sine(hertz: 440, sampleRate: 48000, frameCount: 4800)])
        XCTAssertEqual(firstBytes(path, count: 4), Array("RIFF".utf8))
        XCTAssertEqual(Array(firstBytes(path, count: 12).suffix(4)), Array("WAVE".utf8))
        let reader = try AudioFileReader(path: path)
        // libsndfile's RF64 writes the extensible fmt chunk, so the plain file reads as WAVEX.
        let major = reader.sndfileFormat & Int32(SF_FORMAT_TYPEMASK)
        XCTAssertTrue(major == Int32(SF_FORMAT_WAV) || major == Int32(SF_FORMAT_WAVEX), "format \(major)")
        XCTAssertEqual(reader.frameCount, 4800)
    }

    func testAWAVOfKnownLengthUsesTheClassicFormatTagEveryToolReads() throws {
        let folder = makeTempFolder(self)
        for (encoding, tag) in [(SampleEncoding.int16, UInt8(1)), (.int24, 1), (.float32, 3)] {
            let path = "\(folder)/known-\(encoding.rawValue).wav"
            let format = AudioFileFormat(container: .wav, encoding: encoding, sampleRate: 48000, channelCount: 2)
            let writer = try AudioFileWriter(path: path, format: format, expectedFrameCount: 4800)
            let tone = sine(hertz: 440, sampleRate: 48000, frameCount: 4800)
            try tone.withUnsafeBufferPointer { p in
                try writer.write([p.baseAddress!, p.baseAddress!], frameCount: 4800)
            }
            try writer.close()
            // Bytes 20-21 of a RIFF WAV are the fmt chunk's format tag: 1 PCM, 3 IEEE float,
            // 0xFFFE extensible (which ecasound and other older readers refuse).
            XCTAssertEqual(Array(firstBytes(path, count: 22).suffix(2)), [tag, 0], "\(encoding)")
            XCTAssertEqual(try AudioFileReader(path: path).frameCount, 4800)
        }
    }

    func testClippedInputIsClampedNotWrappedInIntegerFiles() throws {
        let folder = makeTempFolder(self)
        let path = "\(folder)/clip.wav"
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1)
        try writeFile(path, format: format, channels: [[2.0, -2.0, .infinity, -.infinity, .nan, 1.0]])
        XCTAssertEqual(readInts(path), [0x7FFF_0000, Int32.min, 0x7FFF_0000, Int32.min, 0, 0x7FFF_0000])
    }

    /// 16-bit writes convert eight samples a step from the samples' bits; every sample must
    /// land where the one-at-a-time rule puts it (×32768, rounded half away from zero,
    /// clipped, NaN as 0), and the peak and the count of samples over full scale must be the
    /// plain loop's — for halves, ±0, NaN, ±infinity, beyond full scale, and noise.
    func testSixteenBitConversionEightAtATimeFollowsTheOneAtATimeRule() throws {
        let path = "\(makeTempFolder(self))/edges.wav"
        var samples: [Float] = [0.5 / 32768, -0.5 / 32768, 1.5 / 32768, -1.5 / 32768, 2.5 / 32768, -2.5 / 32768,
                                0, -0.0, .nan, -.nan, .infinity, -.infinity, 1, -1, 1.0001, -1.0001,
                                32766.5 / 32768, -32767.5 / 32768, 0.49999997 / 32768, -0.49999997 / 32768,
                                Float(0.5).nextUp / 32768, 3, -3, .leastNonzeroMagnitude, -.leastNonzeroMagnitude]
        samples += noiseWithEdges(frameCount: 1000, seed: 9).map { $0 * 1.2 }
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1)
        unlink(path)
        let writer = try AudioFileWriter(path: path, format: format)
        try withPointers([samples], offset: 0) { try writer.write($0, frameCount: samples.count) }
        try writer.close()
        let expected: [Int32] = samples.map { x in
            var v = (x * 32768).rounded()
            v = v.isNaN ? 0 : min(max(v, -32768), 32767)
            return Int32(v) << 16
        }
        XCTAssertEqual(readInts(path), expected)
        let plainPeak = samples.reduce(Float(0)) { $1.isNaN ? $0 : max($0, abs($1)) }
        XCTAssertEqual(writer.peakAmplitude, plainPeak)
        XCTAssertEqual(writer.overCount, Int64(samples.filter { abs($0) > 1 }.count))
    }

    func testHeaderUpdateMidWriteLeavesAReadableFile() throws {
        let folder = makeTempFolder(self)
        let path = "\(folder)/live.wav"
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1)
        let writer = try AudioFileWriter(path: path, format: format)
        let block = sine(hertz: 440, sampleRate: 48000, frameCount: 4800)
        try withPointers([block], offset: 0) { try writer.write($0, frameCount: 4800) }
        writer.updateHeader()
        // Read while the writer is still open, as a crash would leave it.
        let reader = try AudioFileReader(path: path)
        XCTAssertEqual(reader.frameCount, 4800)
        try writer.close()
    }

    func testWritingTheWrongNumberOfChannelsThrowsInsteadOfTrapping() throws {
        let folder = makeTempFolder(self)
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 2)
        let writer = try AudioFileWriter(path: "\(folder)/x.wav", format: format)
        let one = [Float](repeating: 0, count: 10)
        XCTAssertThrowsError(try withPointers([one], offset: 0) { try writer.write($0, frameCount: 10) }) { error in
            XCTAssertTrue("\(error)".contains("x.wav"))
        }
    }
}

/// 16-bit stereo WAV and AIFF are converted by Tapedeck, eight frames a step, instead of by
/// libsndfile: the floats must be libsndfile's own, bit for bit.
final class Stereo16ReadTests: XCTestCase {
    private func check(format: Int32, name: String) throws {
        let path = "\(makeTempFolder(self))/\(name)"
        // Every corner of 16 bits (full scale both ways, ±1 LSB, 0) and noise, an odd length.
        var interleaved: [Float] = [1, -1, 32767 / 32768, -32767 / 32768, 1 / 32768, -1 / 32768, 0, 0]
        let noise = noiseWithEdges(frameCount: 2 * 1003, seed: 5)
        interleaved += noise
        XCTAssertTrue(writeWithSndfile(path, format: format, sampleRate: 48000, channels: 2, interleaved: interleaved))
        var info = SF_INFO()
        guard let h = sf_open(path, Int32(SFM_READ), &info) else { return XCTFail("libsndfile cannot open \(path)") }
        var reference = [Float](repeating: 0, count: Int(info.frames) * 2)
        _ = reference.withUnsafeMutableBufferPointer { sf_readf_float(h, $0.baseAddress, info.frames) }
        sf_close(h)
        let (channels, _) = try readAll(path)
        XCTAssertEqual(channels[0].count, Int(info.frames))
        let left = stride(from: 0, to: reference.count, by: 2).map { reference[$0] }
        let right = stride(from: 1, to: reference.count, by: 2).map { reference[$0] }
        XCTAssertEqual(channels[0].map(\.bitPattern), left.map(\.bitPattern), "left")
        XCTAssertEqual(channels[1].map(\.bitPattern), right.map(\.bitPattern), "right")
        XCTAssertLessThan(channels[1][0], -0.999, "full scale negative on the right")
    }

    func testWAV16StereoReadsAsLibsndfileDoes() throws {
        try check(format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), name: "s.wav")
    }

    func testAIFF16StereoReadsAsLibsndfileDoes() throws {
        try check(format: Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_16), name: "s.aiff")
    }
}
