import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Every armed track records at once, each from its own input channel into its own file.
final class MultitrackRecordTests: XCTestCase {
    func testEightArmedTracksRecordEightChannelsBitIdenticalAndAligned() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/band")
        var session = Session(sampleRate: 48000)
        session.tracks = (1...8).map { Track(name: "mic \($0)", inputChannels: [$0], armed: true, monitoring: .off) }
        try folder.create(session)
        let frames = 30_000
        let input = RecordSupport.signal(frames: frames + 4096, channels: 8, bits: 16, seed: 8)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let r = try Tapedeck.run(["record", folder.path, "--device", "filetap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                  "--bits", "16", "--duration", "\(frames)f", "--json"], environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let start = try XCTUnwrap(RecordSupport.jsonLines(r.stdout).first)
        XCTAssertEqual(start["tracks"] as? [Int], Array(1...8))
        XCTAssertEqual((start["files"] as? [String])?.count, 8)
        let tracks = try folder.load().tracks
        let regions = try tracks.map { try XCTUnwrap($0.regions.first, "\($0.name) has its take") }
        XCTAssertEqual(Set(regions.map(\.timelineStartFrame)), [0], "every take starts on the same frame")
        XCTAssertEqual(Set(regions.map(\.lengthFrames)), [Int64(frames)])
        XCTAssertEqual(Set(regions.map(\.file)).count, 8, "a file each")
        for (k, region) in regions.enumerated() {
            let got = try RecordSupport.readInts(folder.absolutePath(of: region.file), bits: 16)
            XCTAssertEqual(got.channels, 1)
            let channel = (0..<frames).map { input[$0 * 8 + k] }
            XCTAssertTrue(got.values == channel, "track \(k + 1) holds exactly input channel \(k + 1)")
        }
    }

    func testTracksPicksWhichTracksRecordAndTheOthersStayEmpty() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let folder = SessionFolder(path: dir.path + "/band")
        var session = Session(sampleRate: 48000)
        session.tracks = (1...4).map { Track(name: "mic \($0)", inputChannels: [$0], armed: true, monitoring: .off) }
        try folder.create(session)
        RecordSupport.writeRaw(RecordSupport.signal(frames: 20_000, channels: 4, bits: 16, seed: 2), bits: 16, to: dir.path + "/in.raw")
        let r = try Tapedeck.run(["record", folder.path, "--tracks", "1,3-4", "--device", "filetap:IN=\(dir.path)/in.raw",
                                  "--device-format", "s16", "--bits", "16", "--duration", "4800f"], environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try folder.load().tracks.map(\.regions.count), [1, 0, 1, 1])
        for wrong in ["0", "1,1", "2-1", "5", "mic 9"] {
            let bad = try Tapedeck.run(["record", folder.path, "--tracks", wrong, "--device", "filetap", "--duration", "100f"],
                                       environment: RecordSupport.environment)
            XCTAssertEqual(bad.status, 64, "--tracks \(wrong): \(bad.stderr)")
            XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)
        }
    }
}
