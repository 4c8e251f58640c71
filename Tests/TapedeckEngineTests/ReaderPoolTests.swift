import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine

/// The files a track's regions read from are borrowed from a bounded pool: the process's open
/// descriptors (counted in /proc/self/fd) stay bounded however many files the regions name,
/// and the samples are those of each region.
final class ReaderPoolTests: XCTestCase {
    private func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    func testElevenHundredRegionsOfTheirOwnFilesStreamWithABoundedNumberOfOpenFiles() throws {
        let dir = try Fixture.temporaryFolder()
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let frames = 4800, count = 1_100
        var regions: [Region] = [], paths: [String?] = []
        for i in 0..<count {
            let path = dir + "/r\(i).wav"
            let w = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
            let samples = [Float](repeating: Float(i % 250 + 1) / 512, count: frames)
            try samples.withUnsafeBufferPointer { try w.write([$0.baseAddress!], frameCount: frames) }
            try w.close()
            regions.append(Region(file: path, timelineStartFrame: Int64(i * frames), lengthFrames: Int64(frames)))
            paths.append(path)
        }
        let before = openDescriptors()
        let pool = ReaderPool(capacity: 16)
        let source = try LayeredTrackSource(regions: regions, paths: paths, blockFrames: 4096, pool: pool)
        XCTAssertLessThanOrEqual(openDescriptors() - before, 2, "probing leaves no file open")
        let channel = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { channel.deallocate() }
        var most = 0, wrong = 0
        var at: Int64 = 0
        let end = Int64(count * frames)
        // Read backwards in blocks as well as forwards, so readers are opened, reused and closed.
        for pass in 0..<2 {
            at = 0
            while at < end {
                let n = Int(min(4096, end - at))
                let start = pass == 0 ? at : end - at - Int64(n)
                channel.update(repeating: 0, count: n)
                try [channel].withUnsafeBufferPointer { try source.add(blockStart: start, frameCount: n, into: $0) }
                for k in 0..<n where channel[k] != Float((Int(start) + k) / frames % 250 + 1) / 512 { wrong += 1 }
                most = max(most, openDescriptors() - before)
                XCTAssertLessThanOrEqual(pool.openCount, pool.capacity)
                at += Int64(n)
            }
        }
        XCTAssertEqual(wrong, 0, "samples that differ from their region's level")
        XCTAssertLessThanOrEqual(most, pool.capacity + 2, "open files stay within the pool's capacity")
        XCTAssertGreaterThan(most, 0, "the regions were read from open files")
        pool.closeIdle()
        XCTAssertEqual(pool.openCount, 0)
        XCTAssertLessThanOrEqual(openDescriptors() - before, 1)
    }
}
