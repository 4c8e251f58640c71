import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// Chain edits diff by node: the nodes an edit does not change keep their instance and their
/// state (a reverb's tail rings on when an EQ is put before it), the material plays on without
/// a new read, and a node is freed only once no chain that plays holds it.
final class NodeIdentityTests: XCTestCase {
    private var folder: SessionFolder!

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    /// A track of one loud burst, then silence, through `chain`.
    private func session(chain: String) throws -> Session {
        unlink(folder.audioFolder + "/burst.wav")
        var x = [Float](repeating: 0, count: 96_000)
        for i in 0..<2400 { x[i] = Float(0.5 * sin(Double(i) * 0.1)) }
        let writer = try AudioFileWriter(path: folder.audioFolder + "/burst.wav",
                                         format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        try x.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: x.count) }
        try writer.close()
        var s = Session()
        s.tracks = [Track(name: "A", playbackChain: chain, regions: [Region(file: "audio/burst.wav", timelineStartFrame: 0, lengthFrames: 96_000)])]
        return s
    }

    /// The engine playing `session` period by period; at `editAt` (device frames rendered) the
    /// chain becomes `edit`. Returns the left output and the engine's graphs' chains.
    private func play(_ session: Session, frames: Int, editAt: Int? = nil, edit: String = "",
                      check: ((Engine) -> Void)? = nil) throws -> [Float] {
        let device = FreewheelDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256)
        let engine = Engine(device: device)
        defer {
            device.stop()
            engine.close()
        }
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try engine.start()
        engine.play()
        var out: [Float] = []
        var rolling = false
        while out.count < frames {
            if let at = editAt, out.count == at {
                var edited = session
                edited.tracks[0].playbackChain = edit
                try engine.apply(try GraphSpec(session: edited, folder: folder))
                check?(engine)
            }
            guard device.cycle() else { continue }
            if !rolling { rolling = engine.status().positionFrame > 0 }
            guard rolling else { continue }
            out += UnsafeBufferPointer(start: device.output[0], count: 256)
        }
        return out
    }

    func testAReverbsTailRingsOnWhenANodeIsPutBeforeIt() throws {
        let reference = try play(try session(chain: "reverb:size=0.9"), frames: 48_000)
        var kept = false
        let edited = try play(try session(chain: "reverb:size=0.9"), frames: 48_000, editAt: 12_032, edit: "gain:0,reverb:size=0.9") { engine in
            let graphs = engine.graphs
            guard graphs.count >= 2, let old = graphs[graphs.count - 2].strips[0].chain, let new = graphs.last?.strips[0].chain else { return }
            kept = new.nodes.count == 2 && new.nodes[1] === old.nodes[0]
            XCTAssertTrue(new.nodes[0] !== old.nodes[0], "the gain is new")
        }
        XCTAssertTrue(kept, "the reverb node is the same instance after the edit")
        // Unity gain before it: the tail is the one that would have rung without the edit.
        var worst: Float = 0
        for i in 12_032..<48_000 { worst = max(worst, abs(edited[i] - reference[i])) }
        XCTAssertGreaterThan(reference[20_000...].map(abs).max() ?? 0, 1e-3, "the tail is still sounding")
        XCTAssertLessThan(worst, 1e-6, "the tail rings on through the edit")
    }

    func testAnEditThatChangesAFileOrTheLatencyMakesNewNodesAndFreesOnlyWhatNothingPlays() throws {
        let dir = folder.samplesFolder
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let s = try session(chain: "hpf:80,reverb")
        let device = FreewheelDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256)
        let engine = Engine(device: device)
        try engine.prepare(try GraphSpec(session: s, folder: folder))
        try engine.start()
        engine.play()
        for _ in 0..<10 { _ = device.cycle() }
        let first = try XCTUnwrap(engine.graphs.last?.strips[0].chain)
        let reverb = first.nodes[1]
        // The hpf removed: the reverb is kept; the old chain, once left, is released but the
        // reverb it shared is not.
        var edited = s
        edited.tracks[0].playbackChain = "reverb"
        try engine.apply(try GraphSpec(session: edited, folder: folder))
        let second = try XCTUnwrap(engine.graphs.last?.strips[0].chain)
        XCTAssertTrue(second.nodes[0] === reverb)
        XCTAssertTrue(engine.graphs.last?.strips[0].voice === engine.graphs.first?.strips[0].voice, "the material plays on, not read again")
        for _ in 0..<10 { _ = device.cycle() }
        engine.collectGarbage()
        XCTAssertTrue(first.isReleased, "the old chain is released")
        // Still working: the kept reverb processes a period without trouble.
        for _ in 0..<10 { XCTAssertTrue(device.cycle()) }
        // A limiter added: the chain delays by more, so the track gets a new strip (a new
        // read ahead); its reverb is new too (the old strip may play as its fallback).
        edited.tracks[0].playbackChain = "limiter,reverb"
        try engine.apply(try GraphSpec(session: edited, folder: folder))
        let third = try XCTUnwrap(engine.graphs.last?.strips[0].chain)
        XCTAssertFalse(third.nodes[1] === reverb, "a strip that reads ahead anew gets nodes of its own")
        for _ in 0..<40 { _ = device.cycle() }
        device.stop()
        engine.close()
        XCTAssertTrue(second.isReleased && third.isReleased)
    }
}
