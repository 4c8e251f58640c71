import CSndfile
import TapedeckIO
import XCTest

/// Cue points and labels (WAV) and chapter comments (FLAC) written by ``AudioFileWriter``:
/// every count and name length leaves a file libsndfile reads whole, with the points in it.
final class FileCuesTests: XCTestCase {
    private func write(_ container: AudioContainer, cues: [CuePoint], frames: Int = 48000) throws -> String {
        let path = makeTempFolder(self) + "/cues.\(container.rawValue)"
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: container, encoding: .int16, sampleRate: 48000, channelCount: 1),
                                         expectedFrameCount: Int64(frames), metadata: TakeMetadata(session: "s"), cues: cues)
        XCTAssertNil(writer.metadataProblem)
        let tone = sine(hertz: 440, sampleRate: 48000, frameCount: frames)
        try withPointers([tone], offset: 0) { try writer.write($0, frameCount: frames) }
        try writer.close()
        return path
    }

    func testEveryCountAndNameLengthLeavesAWAVLibsndfileReadsWithItsCuesAndLabels() throws {
        let names = ["A", "Bb", "Ccc", "Dddd", "Chorus é", "Outro", String(repeating: "x", count: 300)]
        for count in 1...names.count {
            let cues = (0..<count).map { CuePoint(frame: Int64(1000 * ($0 + 1)), name: names[$0]) }
            let path = try write(.wav, cues: cues)
            let (channels, _) = try readAll(path)
            XCTAssertEqual(channels[0].count, 48000, "\(count) cues: the data chunk is found")
            var info = SF_INFO()
            let h = try XCTUnwrap(sf_open(path, Int32(SFM_READ), &info))
            defer { sf_close(h) }
            var table = SF_CUES()
            XCTAssertEqual(sf_command(h, Int32(SFC_GET_CUE), &table, Int32(MemoryLayout<SF_CUES>.size)), Int32(SF_TRUE))
            XCTAssertEqual(Int(table.cue_count), count)
            let back = withUnsafeBytes(of: &table.cue_points) { raw in
                raw.bindMemory(to: SF_CUE_POINT.self).prefix(count).map { p in
                    (p.position, withUnsafeBytes(of: p.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
                }
            }
            XCTAssertEqual(back.map(\.0), cues.map { UInt32($0.frame) })
            XCTAssertEqual(back.map(\.1), cues.map { String($0.name.prefix(255)) }, "labels come back through libsndfile's own adtl reader")
        }
    }

    func testCuesPastTheEndAreLeftOutAndSaid() throws {
        let path = makeTempFolder(self) + "/c.wav"
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1),
                                         expectedFrameCount: 100, cues: [CuePoint(frame: 10, name: "in"), CuePoint(frame: 500, name: "out")])
        XCTAssertEqual(writer.metadataProblem, "could not store 1 marker (a WAV holds 10000 cue points before 2^32 frames)")
        try writer.close()
    }

    func testAFLACGetsChapterCommentsAndKeepsItsAudioAndOtherComments() throws {
        let path = try write(.flac, cues: [CuePoint(frame: 72000, name: "Late"), CuePoint(frame: 24000, name: "Early")], frames: 96000)
        let (channels, _) = try readAll(path)
        XCTAssertEqual(channels[0].count, 96000)
        XCTAssertEqual(channels[0][5000], sine(hertz: 440, sampleRate: 48000, frameCount: 5001)[5000], accuracy: 1.0 / 32768)
        XCTAssertEqual(try TakeMetadata.read(path: path)?.session, "s", "libsndfile's comments are kept")
        let bytes = try String(decoding: Data(contentsOf: URL(fileURLWithPath: path)).prefix(4096), as: UTF8.self)
        for entry in ["CHAPTER001=00:00:00.500", "CHAPTER001NAME=Early", "CHAPTER002=00:00:01.500", "CHAPTER002NAME=Late"] {
            XCTAssertTrue(bytes.contains(entry), entry)
        }
    }
}
