import CSndfile
import TapedeckIO
import XCTest

/// A cut-off Ogg Vorbis makes libsndfile report SF_COUNT_MAX frames; the reader must give
/// the frames that really decode (or refuse the file), never that count.
final class DamagedOggTests: XCTestCase {
    private let rate = 44100
    private let frameCount = 10 * 44100

    /// An Ogg Vorbis of ten seconds of sine, cut at each of `fractions` of its size.
    private func truncatedOggs(fractions: [Double]) throws -> [String] {
        let format = Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        try XCTSkipUnless(sndfileCanWrite(format: format, channels: 1), "this libsndfile cannot write Ogg Vorbis")
        let folder = makeTempFolder(self)
        let whole = "\(folder)/whole.ogg"
        XCTAssertTrue(writeWithSndfile(whole, format: format, sampleRate: rate, channels: 1,
                                       interleaved: sine(hertz: 440, sampleRate: rate, frameCount: frameCount)))
        let bytes = firstBytes(whole, count: Int(fileSize(whole)))
        return fractions.enumerated().map { i, f in
            let path = "\(folder)/cut\(i).ogg"
            writeBytes(Array(bytes[0..<Int(Double(bytes.count) * f)]), to: path)
            return path
        }
    }

    func testATruncatedOggReportsExactlyTheFramesThatDecodeOrIsRefused() throws {
        var opened = 0, withAudio = 0
        for path in try truncatedOggs(fractions: [0.05, 0.3, 0.5, 0.77, 0.95]) {
            let reader: AudioFileReader
            do { reader = try AudioFileReader(path: path) } catch { continue }
            opened += 1
            XCTAssertLessThanOrEqual(reader.frameCount, Int64(frameCount), path)
            var read: Int64 = 0
            let buf = UnsafeMutablePointer<Float>.allocate(capacity: 1000)
            defer { buf.deallocate() }
            while true {
                let n = (try? reader.read(into: [buf], frameCount: 1000)) ?? 0
                if n == 0 { break }
                read += Int64(n)
            }
            XCTAssertEqual(read, reader.frameCount, "\(path): the count is what reads back")
            if read > 0 { withAudio += 1 }
        }
        XCTAssertGreaterThan(opened, 0)
        XCTAssertGreaterThan(withAudio, 0, "cuts late in the file keep whole pages that decode")
    }

    func testATruncatedOggImportsItsDecodableFramesOrIsRefusedWithAReason() throws {
        let folder = makeTempFolder(self)
        for path in try truncatedOggs(fractions: [0.3, 0.77]) {
            do {
                let imported = try AudioImporter.importFile(source: path, destinationFolder: folder, sessionSampleRate: rate)
                XCTAssertGreaterThan(imported.frameCount, 0)
                XCTAssertLessThanOrEqual(imported.frameCount, Int64(frameCount))
                XCTAssertEqual(try AudioFileReader(path: folder + "/" + imported.fileName).frameCount, imported.frameCount)
            } catch {
                XCTAssertFalse(error.reason.isEmpty)
            }
        }
    }
}
