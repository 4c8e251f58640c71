import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine

/// Overlapping regions layer — the upper replaces what lies under it, with 5 ms crossfades —
/// in export and in the live disk thread's streamer alike, to the sample.
final class LayeredPlaybackTests: XCTestCase {
    private var folder: SessionFolder!

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    private func writeConstant(_ value: Float, frames: Int, name: String) throws {
        let writer = try AudioFileWriter(path: folder.audioFolder + "/" + name,
                                         format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        let samples = [Float](repeating: value, count: frames)
        try samples.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: frames) }
        try writer.close()
    }

    /// A 0.25 region under a 0.5 one from 12000 to 24000, the track panned hard left (unity).
    private func layeredSession() throws -> Session {
        try writeConstant(0.25, frames: 48000, name: "under.wav")
        try writeConstant(0.5, frames: 12000, name: "over.wav")
        var s = Session()
        s.tracks = [Track(name: "Vocal", pan: -1, regions: [
            Region(file: "audio/under.wav", timelineStartFrame: 0, lengthFrames: 48000),
            Region(file: "audio/over.wav", timelineStartFrame: 12000, lengthFrames: 12000),
        ])]
        return s
    }

    private func export(_ session: Session, range: FrameRange, encoding: SampleEncoding = .float32) throws -> (left: [Float], summary: Mixdown.Summary) {
        let out = folder.exportsFolder + "/mix-\(UUID().uuidString).wav"
        let summary = try Mixdown(Mixdown.Request(session: session, folder: folder, range: range, outputPath: out,
                                                  container: .wav, encoding: encoding, workerCount: 1)).run()
        return (try Fixture.readStereo(out).left, summary)
    }

    func testTheUpperRegionReplacesWhatLiesUnderItWithShortCrossfades() throws {
        let session = try layeredSession()
        let mix = try export(session, range: FrameRange(startFrame: 0, endFrame: 48000)).left
        XCTAssertEqual(mix.count, 48000)
        XCTAssertEqual(mix[11999], 0.25)
        XCTAssertEqual(mix[12000], 0.25, accuracy: 1e-6, "the upper fades in from nothing")
        XCTAssertEqual(mix[12120], 0.375, accuracy: 1e-4, "halfway through the 240-frame crossfade")
        for i in stride(from: 12240, to: 23760, by: 7) { XCTAssertEqual(mix[i], 0.5, "replaced, not summed, at \(i)") }
        XCTAssertEqual(mix[23880], 0.375, accuracy: 1e-4)
        XCTAssertEqual(mix[24000], 0.25)
        XCTAssertLessThanOrEqual(mix.max() ?? 0, 0.5 + 1e-6, "never the sum 0.75")
    }

    func testRaisingTheLowerRegionBringsItOnTop() throws {
        var session = try layeredSession()
        try session.raiseRegion(RegionRef(track: 0, region: 0))
        let mix = try export(session, range: FrameRange(startFrame: 0, endFrame: 48000)).left
        XCTAssertEqual(mix[18000], 0.25, "the long region now covers the short one")
    }

    func testLivePlaybackStreamsTheSameSamplesAsTheExport() throws {
        let session = try layeredSession()
        let mix = try export(session, range: FrameRange(startFrame: 0, endFrame: 48000)).left
        let spec = try GraphSpec(session: session, folder: folder)
        let streamer = try TrackStreamer(sources: spec.tracks[0].sources, channelCount: spec.tracks[0].channelCount, blockFrames: 4096)
        var live: [Float] = []
        var at: Int64 = 0
        while at < 48000 {
            let n = Int(min(4096, 48000 - at))
            try streamer.render(start: at, frameCount: n)
            live += UnsafeBufferPointer(start: streamer.output[0], count: n)
            at += Int64(n)
        }
        XCTAssertEqual(live, mix, "the disk thread and export render identical samples")
    }

    func testARangeRendersExactlyWhatTheWholeExportHasThere() throws {
        var session = try layeredSession()
        // The lower region ends inside the upper one's crossfade, where the range starts: it is
        // outside the range, yet it still makes the upper region fade in there.
        session.tracks[0].regions[0].lengthFrames = 12100
        let whole = try export(session, range: FrameRange(startFrame: 0, endFrame: 48000)).left
        let part = try export(session, range: FrameRange(startFrame: 12100, endFrame: 30000)).left
        XCTAssertEqual(part[0], 0.5 * 100 / 240, accuracy: 1e-6, "still fading in")
        XCTAssertEqual(part, Array(whole[12100..<30000]))
    }

    func testOversAreCountedKeptInFloatAndClippedInIntegersAndTheMasterFaderLowersThem() throws {
        try writeConstant(0.8, frames: 1000, name: "loud.wav")
        var s = Session()
        // Two tracks hard left, summing to 1.6 (+4.1 dBFS) on the left only.
        s.tracks = (0..<2).map { Track(name: "T\($0)", pan: -1, regions: [Region(file: "audio/loud.wav", timelineStartFrame: 0, lengthFrames: 1000)]) }
        let float = try export(s, range: FrameRange(startFrame: 0, endFrame: 1000))
        XCTAssertEqual(float.summary.overCount, 1000)
        XCTAssertEqual(float.summary.peakDecibels, 20 * log10(1.6), accuracy: 0.01)
        XCTAssertEqual(float.left[500], 1.6, accuracy: 1e-6, "32-bit float keeps the overs")
        XCTAssertTrue(float.summary.clipText.contains("1000 samples over 0 dBFS kept"), float.summary.clipText)
        let int = try export(s, range: FrameRange(startFrame: 0, endFrame: 1000), encoding: .int16)
        XCTAssertEqual(int.summary.overCount, 1000)
        XCTAssertEqual(int.left[500], 32767.0 / 32768, accuracy: 1e-6, "16-bit clips at full scale")
        XCTAssertTrue(int.summary.clipText.contains("CLIPPED: 1000 samples"), int.summary.clipText)
        XCTAssertTrue(int.summary.clipText.contains("peak 4.1 dB over"), int.summary.clipText)
        s.masterGainDecibels = -6
        let lowered = try export(s, range: FrameRange(startFrame: 0, endFrame: 1000))
        XCTAssertEqual(lowered.summary.overCount, 0)
        XCTAssertEqual(lowered.left[500], 1.6 * Float(pow(10, -6.0 / 20)), accuracy: 1e-5, "the master fader scales the mix")
        XCTAssertEqual(lowered.summary.clipText, "")
    }
}
