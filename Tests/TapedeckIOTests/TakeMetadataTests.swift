import CSndfile
import TapedeckIO
import XCTest

final class TakeMetadataTests: XCTestCase {
    private let sample = TakeMetadata(session: "song", trackNumber: 3, trackName: "Bass DI", timelineFrame: 5_000_000_123,
                                      latencyFrames: 771, speed: 0.5, device: "hw:1,0", deviceChannels: [3, 4],
                                      inputChain: "hpf:cutoff=80,comp:threshold=-18:ratio=4", startedAt: "2025-03-04 12:34:56",
                                      takeGroup: 2, takeNumber: 5)

    /// Writes a short take with `metadata` through the writer the engine uses (header
    /// updates included, as the disk thread does them) and returns what comes back.
    private func roundTrip(_ container: AudioContainer, encoding: SampleEncoding, _ metadata: TakeMetadata) throws -> (TakeMetadata?, [[Float]]) {
        let dir = makeTempFolder(self)
        let path = dir + "/take.\(container.rawValue)"
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: 48000, channelCount: 2)
        let writer = try AudioFileWriter(path: path, format: format, metadata: metadata)
        XCTAssertNil(writer.metadataProblem)
        writer.updateHeader()
        let tone = sine(hertz: 440, sampleRate: 48000, frameCount: 3000)
        try withPointers([tone, tone], offset: 0) { try writer.write($0, frameCount: 3000) }
        writer.updateHeader()
        try writer.close()
        let (channels, _) = try readAll(path)
        return (try TakeMetadata.read(path: path), channels)
    }

    func testAWAVTakeReadsBackEveryFieldItWasWrittenWith() throws {
        let (back, audio) = try roundTrip(.wav, encoding: .int24, sample)
        XCTAssertEqual(back, sample)
        XCTAssertEqual(audio[0].count, 3000, "metadata chunks do not disturb the audio")
        XCTAssertEqual(Double(audio[0][100]), Double(sine(hertz: 440, sampleRate: 48000, frameCount: 101)[100]), accuracy: 1e-6)
    }

    func testAFLACTakeReadsBackEveryFieldFromItsVorbisComments() throws {
        let (back, audio) = try roundTrip(.flac, encoding: .int16, sample)
        XCTAssertEqual(back, sample)
        XCTAssertEqual(audio[1].count, 3000)
    }

    func testAFloatWAVTakeKeepsItsMetadata() throws {
        let (back, _) = try roundTrip(.wav, encoding: .float32, TakeMetadata(timelineFrame: 0, device: "filetap:IN=a,OUT=b"))
        XCTAssertEqual(back?.device, "filetap:IN=a,OUT=b")
    }

    func testTheBextChunkCarriesTheTimelineFrameAsTimeReferenceAndTheIXMLChunkIsThere() throws {
        let dir = makeTempFolder(self)
        let path = dir + "/t.wav"
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 44100, channelCount: 1),
                                         metadata: sample)
        let zeros = [Float](repeating: 0, count: 100)
        try withPointers([zeros], offset: 0) { try writer.write($0, frameCount: 100) }
        try writer.close()
        var info = SF_INFO()
        let h = try XCTUnwrap(sf_open(path, Int32(SFM_READ), &info))
        defer { sf_close(h) }
        var bext = SF_BROADCAST_INFO()
        XCTAssertEqual(sf_command(h, Int32(SFC_GET_BROADCAST_INFO), &bext, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)), Int32(SF_TRUE))
        let reference = UInt64(bext.time_reference_high) << 32 | UInt64(bext.time_reference_low)
        XCTAssertEqual(reference, 5_000_000_123)
        let originator = withUnsafeBytes(of: bext.originator) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        XCTAssertEqual(originator, "Tapedeck")
        let history = withUnsafeBytes(of: bext.coding_history) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        XCTAssertTrue(history.hasPrefix("A=PCM,F=44100,W=16,M=mono,T=Tapedeck"), history)
        let bytes = try String(decoding: Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        XCTAssertTrue(bytes.contains("<PROJECT>song</PROJECT>"))
        XCTAssertTrue(bytes.contains("<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>\(5_000_000_123 & 0xFFFF_FFFF)<"))
    }

    func testValuesWithNewlinesBackslashesAndMarkupSurvive() throws {
        var odd = sample
        odd.trackName = "a<b>&\"c\"\\n\nline two\r"
        odd.inputChain = "gain:db=-3 = x"
        let (wav, _) = try roundTrip(.wav, encoding: .int16, odd)
        XCTAssertEqual(wav, odd)
        let (flac, _) = try roundTrip(.flac, encoding: .int24, odd)
        XCTAssertEqual(flac, odd)
    }

    func testAFileWithoutTapedeckMetadataReadsAsNil() throws {
        let dir = makeTempFolder(self)
        let path = dir + "/plain.wav"
        try writeFile(path, format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1),
                      channels: [[Float](repeating: 0.1, count: 500)])
        XCTAssertNil(try TakeMetadata.read(path: path))
        XCTAssertThrowsError(try TakeMetadata.read(path: dir + "/missing.wav"))
    }

    func testALongDescriptionIsCutOnACharacterBoundaryInTheBextButWholeInTheIXML() throws {
        var long = sample
        long.inputChain = String(repeating: "é", count: 300)
        let (back, _) = try roundTrip(.wav, encoding: .int16, long)
        XCTAssertEqual(back?.inputChain, long.inputChain)
    }

    func testABextTimeReferenceOverInt64MaxIsClampedNotTrapped() throws {
        let path = makeTempFolder(self) + "/crafted.wav"
        var info = SF_INFO()
        info.samplerate = 48000
        info.channels = 1
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        let h = try XCTUnwrap(sf_open(path, Int32(SFM_WRITE), &info))
        var bext = SF_BROADCAST_INFO()
        withUnsafeMutableBytes(of: &bext.description) { raw in
            for (i, b) in "timeline_frame=1".utf8.enumerated() { raw[i] = b }
        }
        bext.time_reference_high = 0xFFFF_FFFF
        bext.time_reference_low = 0xFFFF_FFFF
        XCTAssertEqual(sf_command(h, Int32(SFC_SET_BROADCAST_INFO), &bext, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)), Int32(SF_TRUE))
        var x = [Float](repeating: 0, count: 100)
        sf_writef_float(h, &x, 100)
        sf_close(h)
        XCTAssertEqual(try TakeMetadata.read(path: path)?.timelineFrame, Int64.max)
    }
}
