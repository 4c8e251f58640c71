import TapedeckIO
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Bad files and bad places give one clear line naming the file and the reason, never a trap.
final class AudioFileErrorTests: XCTestCase {
    private func openError(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> AudioFileError? {
        do {
            _ = try AudioFileReader(path: path)
            XCTFail("\(path) opened", file: file, line: line)
            return nil
        } catch {
            XCTAssertTrue(error.description.contains(path), "'\(error)' does not name the file", file: file, line: line)
            XCTAssertFalse(error.description.contains("\n"), "'\(error)' is not one line", file: file, line: line)
            return error
        }
    }

    func testMissingFileSaysNoSuchFile() {
        let folder = makeTempFolder(self)
        XCTAssertEqual(openError("\(folder)/nothing.wav")?.reason, "no such file")
    }

    func testEmptyFileSaysItIsEmpty() {
        let folder = makeTempFolder(self)
        writeBytes([], to: "\(folder)/empty.wav")
        XCTAssertEqual(openError("\(folder)/empty.wav")?.reason, "the file is empty")
    }

    func testRandomBytesSayNotAnAudioFile() {
        let folder = makeTempFolder(self)
        var noise = SeededNoise(seed: 7)
        writeBytes((0..<5000).map { _ in UInt8(truncatingIfNeeded: Int(noise.next() * 1000)) }, to: "\(folder)/random.wav")
        XCTAssertTrue(openError("\(folder)/random.wav")?.reason.contains("not a readable audio file") ?? false)
    }

    func testTruncatedWAVSaysTruncated() throws {
        let folder = makeTempFolder(self)
        let path = "\(folder)/cut.wav"
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1)
        try writeFile(path, format: format, channels: [sine(hertz: 440, sampleRate: 48000, frameCount: 10_000)])
        XCTAssertEqual(truncate(path, Int(fileSize(path)) - 12_000), 0)
        let reason = openError(path)?.reason ?? ""
        XCTAssertTrue(reason.contains("truncated"), reason)
    }

    func testHeaderOnlyWAVCutInsideTheHeaderIsRefused() throws {
        let folder = makeTempFolder(self)
        let path = "\(folder)/stub.wav"
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1)
        try writeFile(path, format: format, channels: [sine(hertz: 440, sampleRate: 48000, frameCount: 1000)])
        XCTAssertEqual(truncate(path, 20), 0)
        XCTAssertNotNil(openError(path))
    }

    func testFolderSaysItIsAFolder() {
        let folder = makeTempFolder(self)
        XCTAssertTrue(openError(folder)?.reason.contains("folder") ?? false)
    }

    func testWritingIntoAMissingFolderSaysTheFolderDoesNotExist() {
        let folder = makeTempFolder(self)
        let path = "\(folder)/no/such/take.wav"
        let format = AudioFileFormat(container: .wav, encoding: .int24, sampleRate: 48000, channelCount: 2)
        XCTAssertThrowsError(try AudioFileWriter(path: path, format: format)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix(path), text)
            XCTAssertTrue(text.contains("does not exist"), text)
        }
    }

    func testWritingWhereAFileStandsForTheFolderSaysItIsNotAFolder() {
        let folder = makeTempFolder(self)
        writeBytes([1, 2, 3], to: "\(folder)/plain")
        let path = "\(folder)/plain/take.flac"
        let format = AudioFileFormat(container: .flac, encoding: .int16, sampleRate: 48000, channelCount: 1)
        XCTAssertThrowsError(try AudioFileWriter(path: path, format: format)) { error in
            XCTAssertTrue("\(error)".contains("not a folder"), "\(error)")
        }
    }

    func testWritingIntoAnUnwritableFolderSaysPermissionDenied() throws {
        try XCTSkipIf(getuid() == 0, "root writes anywhere; the not-a-folder test covers this path")
        let folder = makeTempFolder(self)
        let locked = "\(folder)/locked"
        mkdir(locked, 0o555)
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1)
        XCTAssertThrowsError(try AudioFileWriter(path: "\(locked)/take.wav", format: format)) { error in
            XCTAssertTrue("\(error)".contains("permission denied"), "\(error)")
        }
    }

    func testWritingOntoAFolderSaysItIsAFolder() {
        let folder = makeTempFolder(self)
        let format = AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 1)
        XCTAssertThrowsError(try AudioFileWriter(path: folder, format: format)) { error in
            XCTAssertTrue("\(error)".contains("folder"), "\(error)")
        }
    }

    func testFLACFloatIsRefusedWithAReason() {
        let folder = makeTempFolder(self)
        let format = AudioFileFormat(container: .flac, encoding: .float32, sampleRate: 48000, channelCount: 1)
        XCTAssertThrowsError(try AudioFileWriter(path: "\(folder)/x.flac", format: format)) { error in
            XCTAssertTrue("\(error)".contains("FLAC"), "\(error)")
        }
    }
}
