import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckDevices

/// A chain replaced while playing is released (its delay lines and reverb tanks freed) once
/// the audio thread has left it, and never while anything still plays through it. The live
/// engine released none, so every chain edit while playing leaked its old chain (issue 25).
final class ChainReleaseTests: XCTestCase {
    func testReplacedChainsAreReleasedOnceTheAudioThreadLeftThem() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 48000)
        try folder.create(session)
        let frames = 96_000
        let tone = (0..<frames).map { Float(0.3 * sin(Double($0) * 0.05)) }
        let w = try AudioFileWriter(path: folder.audioFolder + "/t.wav",
                                    format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        try tone.withUnsafeBufferPointer { p in try w.write([p.baseAddress!], frameCount: frames) }
        try w.close()
        session.tracks = [
            Track(name: "a", playbackChain: "delay:1/4", regions: [Region(file: "audio/t.wav", timelineStartFrame: 0, lengthFrames: Int64(frames))]),
            // Elsewhere on the timeline: a strip is reused by any track with the same material.
            Track(name: "b", playbackChain: "reverb", regions: [Region(file: "audio/t.wav", timelineStartFrame: 1000, lengthFrames: Int64(frames))]),
        ]
        session.masterChain = "limiter"
        let engine = Engine(device: LoopbackDevice(sampleRate: 48000, periodFrames: 256, delayFrames: 0))
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try engine.start()
        engine.play()
        let first = try XCTUnwrap(engine.graphs.last)
        let firstA = try XCTUnwrap(first.strips[0].chain), kept = try XCTUnwrap(first.strips[1].chain)
        let master = try XCTUnwrap(first.masterChain)

        // Track a's chain replaced by another kind of node: a new instance; b's untouched.
        var edited = session
        edited.tracks[0].playbackChain = "reverb"
        try engine.apply(try GraphSpec(session: edited, folder: folder))
        let second = try XCTUnwrap(engine.graphs.last)
        let secondA = try XCTUnwrap(second.strips[0].chain)
        XCTAssertFalse(secondA === firstA)
        XCTAssertTrue(second.strips[1].chain === kept, "an unchanged track keeps its chain")
        XCTAssertTrue(engine.waitUntilApplied(timeoutSeconds: 10))
        // Let the new strip take over from its fallback, then collect.
        let deadline = Date().addingTimeInterval(10)
        while !firstA.isReleased && Date() < deadline {
            usleep(10_000)
            engine.collectGarbage()
        }
        XCTAssertTrue(firstA.isReleased, "the replaced chain is released")
        XCTAssertFalse(secondA.isReleased || kept.isReleased || master.isReleased, "what plays is not")

        // Many edits while playing: every replaced chain released, none that plays.
        var replaced: [ChainInstance] = [secondA]
        for i in 0..<20 {
            edited.tracks[0].playbackChain = i % 2 == 0 ? "delay:1/8" : "reverb"
            try engine.apply(try GraphSpec(session: edited, folder: folder))
            replaced.append(try XCTUnwrap(engine.graphs.last?.strips[0].chain))
            usleep(20_000)
            engine.collectGarbage()
        }
        let playing = replaced.removeLast()
        XCTAssertTrue(engine.waitUntilApplied(timeoutSeconds: 10))
        let end = Date().addingTimeInterval(10)
        while replaced.contains(where: { !$0.isReleased }) && Date() < end {
            usleep(10_000)
            engine.collectGarbage()
        }
        XCTAssertEqual(replaced.filter { !$0.isReleased }.count, 0, "every replaced chain released")
        XCTAssertFalse(playing.isReleased || kept.isReleased || master.isReleased)
        XCTAssertTrue(engine.isRunning)

        _ = engine.close()
        XCTAssertTrue(playing.isReleased && kept.isReleased && master.isReleased, "closing releases the rest")
    }
}
