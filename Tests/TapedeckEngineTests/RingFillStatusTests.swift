import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// The status's playback ring fill is the emptiest ring's, taken by the audio thread after the
/// strips pulled their period (the disk thread is woken by it when a ring runs below half).
final class RingFillStatusTests: XCTestCase {
    private var folder: SessionFolder!

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    /// Track "A" plays 2 s of a tone, "B" has no material (its fill is always 1), both through
    /// a bus (a bus streams nothing either).
    private func session() throws -> Session {
        let frames = 96_000
        let x = (0..<frames).map { Float(0.25 * sin(Double($0) * 0.05)) }
        let writer = try AudioFileWriter(path: folder.audioFolder + "/a.wav",
                                         format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        try x.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: frames) }
        try writer.close()
        var s = Session()
        var a = Track(name: "A", regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: Int64(frames))])
        a.output = .bus("Sub")
        var b = Track(name: "B")
        b.output = .bus("Sub")
        s.tracks = [b, a, Track.makeBus(name: "Sub")]
        return s
    }

    func testTheFillIsTheEmptiestRingsAfterItsPeriodWasTaken() throws {
        let period = 256
        let device = FreewheelDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: period)
        var options = EngineOptions()
        options.renderThreads = 1
        let engine = Engine(device: device, options: options)
        defer {
            device.stop()
            engine.close()
        }
        try engine.prepare(try GraphSpec(session: try session(), folder: folder))
        try engine.start()
        engine.play()
        var rollingPeriods = 0
        var fills: [Double] = []
        var cycles = 0
        while rollingPeriods < 40 && cycles < 5000 {
            cycles += 1
            guard device.cycle() else { continue }
            guard engine.status().positionFrame > 0 else { continue }
            rollingPeriods += 1
            fills.append(engine.status().playbackRingFill)
        }
        XCTAssertEqual(rollingPeriods, 40, "the transport rolled")
        // A's ring holds a second and a bit; every rolling period took 256 frames out of it
        // after the disk's last whole block, so it is never full when the fill is taken.
        let ringFrames = 48000 + period + EngineOptions().diskBlockFrames
        let highest = Double(ringFrames - period) / Double(ringFrames)
        for (k, fill) in fills.enumerated() {
            XCTAssertLessThanOrEqual(fill, highest + 0.001, "period \(k): the fill is A's ring's, not the empty track's or the bus's 1")
            XCTAssertGreaterThan(fill, 0, "period \(k): A's ring holds material")
        }
    }
}
