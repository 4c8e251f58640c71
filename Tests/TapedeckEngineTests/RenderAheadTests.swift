import Foundation
import Synchronization
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// Playback rendered ahead by the workers: faders still move at the device period, a chain
/// parameter is heard within the render-ahead time, a locate drops what was rendered ahead, a
/// loop set while rolling is rendered ahead and wraps frame-exact, a worker that fell behind
/// fills the emptiest strips first, and a strip that is armed or monitors its input is never
/// rendered ahead.
final class RenderAheadTests: XCTestCase {
    private var folder: SessionFolder!
    private let rate = 48000
    private let period = 64

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    /// A mono float file whose frame f holds `value(f)`; its region from 0.
    private func region(_ name: String, frames: Int, _ value: (Int) -> Float) throws -> Region {
        let samples = (0..<frames).map(value)
        let writer = try AudioFileWriter(path: folder.audioFolder + "/" + name,
                                         format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: rate, channelCount: 1))
        try samples.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: frames) }
        try writer.close()
        return Region(file: "audio/" + name, timelineStartFrame: 0, lengthFrames: Int64(frames))
    }

    /// A running engine on two threads over `session` (tracks in `listening` hear the input).
    private func start(_ session: Session, listening: [Int] = [], threads: Int = 2) throws -> (Engine, SteppedDevice) {
        let device = SteppedDevice(periodFrames: period)
        var options = EngineOptions()
        options.renderThreads = threads
        options.realtimePriority = false
        let engine = Engine(device: device, options: options)
        try engine.prepare(try GraphSpec(session: session, folder: folder, listening: Set(listening)))
        try engine.start()
        addTeardownBlock {
            device.stop()
            engine.close()
        }
        return (engine, device)
    }

    /// The installed graph's strip `i`'s ahead buffer.
    private func ahead(_ engine: Engine, strip i: Int) -> AheadBuffer? { engine.graphs.last?.strips[i].ahead }

    /// Cycles one period and waits (up to two seconds) until the strips that are rendered
    /// ahead hold their whole capacity again. Returns the period's left output.
    @discardableResult
    private func step(_ engine: Engine, _ device: SteppedDevice, fill: [Int] = [0]) -> [Float] {
        _ = device.cycle()
        let until = Date().addingTimeInterval(2)
        while Date() < until {
            // Full: no room for another block.
            let full = fill.allSatisfy { i in
                ahead(engine, strip: i).map { $0.heldFrames.load(ordering: .relaxed) + $0.blockFrames > $0.capacityFrames } ?? true
            }
            if full { break }
            // Standing or waiting to roll: a moment for the disk, then the next period.
            if engine.status().transport != .rolling {
                usleep(500)
                break
            }
            usleep(200)
        }
        return Array(UnsafeBufferPointer(start: device.output[0], count: period))
    }

    /// Rolls until the transport rolls and the ahead buffer of strip 0 is full.
    private func roll(_ engine: Engine, _ device: SteppedDevice) throws {
        engine.play()
        for _ in 0..<400 where engine.status().transport != .rolling { step(engine, device) }
        XCTAssertEqual(engine.status().transport, .rolling)
        for _ in 0..<4 { step(engine, device) }
        let a = try XCTUnwrap(ahead(engine, strip: 0), "a track that plays from disk has an ahead buffer")
        XCTAssertGreaterThan(a.heldFrames.load(ordering: .relaxed) + a.blockFrames, a.capacityFrames, "the workers rendered it ahead")
    }

    private let centre = Float(PanLaw.mono(pan: 0).left)

    func testAFaderMoveIsHeardWithinOneDevicePeriod() throws {
        var s = Session()
        s.tracks = [Track(name: "A", playbackChain: "gain:0", regions: [try region("a.wav", frames: 96000) { _ in 0.5 }])]
        let (engine, device) = try start(s)
        try roll(engine, device)
        let before = step(engine, device)
        XCTAssertEqual(before[period - 1], 0.5 * centre, accuracy: 1e-6)
        engine.setMixer(track: 0, gainDecibels: -20, pan: 0, mute: false, solo: false)
        let after = step(engine, device)
        // The fader glides from the very next period on (over its 256 frames), whatever was
        // rendered ahead.
        XCTAssertLessThan(after[period - 1], 0.5 * centre * 0.95, "the fader moves in the next device period")
        var last: [Float] = []
        for _ in 0..<(GainGlide.lengthFrames / period) { last = step(engine, device) }
        XCTAssertEqual(last[period - 1], 0.05 * centre, accuracy: 1e-5, "and lands within its glide")
    }

    func testAChainParameterIsHeardWithinTheRenderAheadTime() throws {
        var s = Session()
        s.tracks = [Track(name: "A", playbackChain: "gain:0", regions: [try region("a.wav", frames: 96000) { _ in 0.5 }])]
        let (engine, device) = try start(s)
        try roll(engine, device)
        let capacity = try XCTUnwrap(ahead(engine, strip: 0)).capacityFrames
        XCTAssertLessThanOrEqual(capacity, rate / 50, "no more than 20 ms ahead")
        engine.set(ChainValueChange(place: .playback(strip: 0), node: 0, value: .parameter("gain", .number(-20))))
        var heard: [Float] = []
        for _ in 0..<((capacity + 4 * rate / 100) / period) { heard += step(engine, device) }
        let old = 0.5 * centre
        // What was rendered ahead plays first, at the old value: the workers did run the chain early.
        XCTAssertEqual(heard[period - 1], old, accuracy: 1e-6, "the next period was rendered ahead, before the change")
        let first = try XCTUnwrap(heard.firstIndex { abs($0 - old) > 1e-5 }, "the new value is heard")
        XCTAssertLessThanOrEqual(first, capacity + period, "heard within the render-ahead time")
        // Then the node's own 20 ms ramp to the new value.
        XCTAssertEqual(heard[heard.count - 1], old * 0.1, accuracy: 1e-5)
    }

    func testALocateDropsEverythingRenderedAhead() throws {
        // Frame f of the material holds f / 2^17: every output sample tells its frame.
        var s = Session()
        s.tracks = [Track(name: "A", playbackChain: "gain:0", regions: [try region("a.wav", frames: 480000) { Float($0) / 131072 }])]
        let (engine, device) = try start(s)
        try roll(engine, device)
        func frame(_ sample: Float) -> Int { Int((sample / centre * 131072).rounded()) }
        for target in [Int64(200000), 48000] {
            engine.locate(to: target)
            var heard: [Float] = []
            var rolled = false
            for _ in 0..<2000 where heard.count < 8 * period {
                let before = engine.status().transport
                let out = step(engine, device)
                if before == .rolling && rolled { heard += out }
                if engine.status().transport == .rolling { rolled = true }
            }
            XCTAssertGreaterThan(heard.count, 0, "rolled again after the locate")
            // The first period rolled after the locate (skipped above) starts at the target;
            // every later one goes on from there, frame after frame: nothing of the old place.
            let first = frame(heard[0])
            XCTAssertEqual(first, Int(target) + period, "the second rolling period after the locate to \(target)")
            for (k, sample) in heard.enumerated() where frame(sample) != first + k {
                XCTFail("frame \(frame(sample)) heard at \(k) after the locate to \(target) (old material rendered ahead)")
                break
            }
        }
    }

    func testALoopSetWhileRollingIsRenderedAheadAndWrapsFrameExact() throws {
        // The second chain delays by its look-ahead, which the voice reads ahead to make up.
        for chain in ["gain:0", "limiter"] {
            try loopWhileRolling(chain: chain, threads: 2)
            try loopWhileRolling(chain: chain, threads: 1)
        }
    }

    /// A loop set while rolling takes effect at its end (its switch point). Until then the
    /// workers go on rendering ahead (they once stopped until the switch point: a whole
    /// loop's length of every strip on the device period), and every frame heard is the one
    /// the loop says: when the switch point is far (a latent chain once lost its latency's
    /// worth before the first wrap, on one thread too), and, rendering ahead, when it falls
    /// inside what the workers hold (once all of it was dropped: that much silence).
    private func loopWhileRolling(chain: String, threads: Int) throws {
        var s = Session()
        s.tracks = [Track(name: "A", playbackChain: chain, regions: [try region("a-\(chain)-\(threads).wav", frames: 480000) { Float($0) / 131072 }])]
        let (engine, device) = try start(s, threads: threads)
        let what = "\(chain) on \(threads) thread\(threads == 1 ? "" : "s")"
        /// A period; on one thread also a period's time for the disk, as a paced device gives
        /// it (with the workers, ``step(_:_:fill:)`` waits for them).
        func next() -> [Float] {
            let out = step(engine, device)
            if threads == 1 { usleep(UInt32(period * 1_000_000 / rate)) }
            return out
        }
        if threads > 1 {
            try roll(engine, device)
        } else {
            engine.play()
            for _ in 0..<400 where engine.status().transport != .rolling { _ = next() }
        }
        func frame(_ sample: Float) -> Int { Int((sample / centre * 131072).rounded()) }
        /// Checks that `heard` goes on from frame `from` one frame at a time round `loopEnd`;
        /// returns how often it wrapped.
        func follows(_ heard: [Float], from: Int, loopEnd: Int) -> Int {
            var was = from, wraps = 0
            for (k, sample) in heard.enumerated() {
                let expected = was + 1 == loopEnd ? 0 : was + 1
                if expected == 0 { wraps += 1 }
                guard frame(sample) == expected else {
                    let silence = heard[k...].prefix { $0 == 0 }.count
                    XCTFail("\(what): frame \(frame(sample)) heard at \(k) after frame \(was) (expected \(expected), loop end \(loopEnd); \(silence) silent frames from there)")
                    return wraps
                }
                was = expected
            }
            return wraps
        }
        var last = frame(next()[period - 1])
        let far = 12800
        engine.setLoop(FrameRange(startFrame: 0, endFrame: Int64(far)), enabled: true)
        var heard = next()
        let a = ahead(engine, strip: 0)
        XCTAssertEqual(a == nil, threads == 1, "\(what): rendered ahead on more than one thread only")
        let blocksBefore = a?.renderedBlocks.load(ordering: .relaxed) ?? 0
        for _ in 0..<20 { heard += next() }
        XCTAssertLessThan(frame(heard[heard.count - 1]), far - 20 * period, "\(what): still before the loop's switch point")
        if let a {
            XCTAssertGreaterThanOrEqual(a.renderedBlocks.load(ordering: .relaxed) - blocksBefore, 10,
                                        "\(what): the workers render ahead while the loop waits for its switch point")
        }
        while heard.count < 2 * far + 8 * period { heard += next() }
        XCTAssertGreaterThanOrEqual(follows(heard, from: last, loopEnd: far), 1, "\(what): the loop wrapped")

        // A loop ending a few periods on: inside what the voice's ring holds (on one thread
        // the loop's start had no room there until the switch point was played: 31 frames of
        // silence after the wrap), and inside what the workers hold rendered ahead. Not on
        // one thread with a latent chain whose look-ahead reaches past the loop's end (192
        // frames here, the end 160 on): the chain has already taken in what follows the end,
        // and with nothing rendered ahead there is no way to hear the loop exactly (it is
        // primed, and what is left before the wrap is silent: a known limit).
        last = frame(heard[heard.count - 1])
        if let a {
            XCTAssertGreaterThan(a.heldFrames.load(ordering: .relaxed), 5 * period, "\(what): rendered ahead past the next switch point")
        } else if chain != "gain:0" {
            return
        }
        let near = last + 1 + 5 * period / 2
        engine.setLoop(FrameRange(startFrame: 0, endFrame: Int64(near)), enabled: true)
        heard = []
        while heard.count < near + 16 * period { heard += next() }
        XCTAssertGreaterThanOrEqual(follows(heard, from: last, loopEnd: near), 1, "\(what): the nearer loop wrapped")
    }

    func testAWorkerBehindFillsTheEmptiestStripsFirst() throws {
        // Six strips rendered ahead, full; then, as after a worker fell behind, two of them
        // emptied (the device period rendered them itself) and the rest a block down.
        var s = Session()
        let material = try region("a.wav", frames: 96000) { _ in 0.25 }
        s.tracks = (0..<6).map { Track(name: "T\($0)", playbackChain: "gain:0", regions: [material]) }
        let (engine, device) = try start(s)
        try roll(engine, device)
        for _ in 0..<8 { step(engine, device, fill: Array(0..<6)) }
        // The test thread is the device's between periods: it closes the window, so the
        // workers stand still, and takes a worker's place below.
        engine.core.closeAhead()
        let buffers = try (0..<6).map { try XCTUnwrap(ahead(engine, strip: $0)) }
        let block = buffers[0].blockFrames, levels = buffers[0].capacityFrames / block
        XCTAssertGreaterThanOrEqual(levels, 3, "a few blocks ahead at \(period)-frame periods")
        for a in buffers { XCTAssertEqual(a.frames, levels * block, "full before") }
        let scratch = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
        scratch.initialize(to: .allocate(capacity: levels * block))
        defer {
            scratch[0].deallocate()
            scratch.deallocate()
        }
        let emptied: Set<Int> = [1, 4]
        for (i, a) in buffers.enumerated() {
            let k = emptied.contains(i) ? a.frames : block
            XCTAssertEqual(a.take(into: scratch, seq: a.readSeq, frameCount: k), k)
        }
        // As the window opens: the next period's blocks first.
        engine.core.aheadLevel.store(1, ordering: .relaxed)
        // Every block goes to the two empty strips until they hold what the others do.
        for call in 0..<(2 * (levels - 1)) {
            XCTAssertTrue(engine.core.renderAhead(thread: 1), "block \(call) rendered")
            if call == 1 {
                XCTAssertEqual(emptied.map { buffers[$0].frames }, [block, block], "each empty strip got the next period's block first")
            }
        }
        for (i, a) in buffers.enumerated() {
            XCTAssertEqual(a.frames, (levels - 1) * block, "strip \(i): the empty ones filled first, the rest untouched")
        }
        // Then everyone's last block, and nothing more.
        for _ in 0..<6 { XCTAssertTrue(engine.core.renderAhead(thread: 1)) }
        XCTAssertFalse(engine.core.renderAhead(thread: 1), "all full")
        for a in buffers { XCTAssertEqual(a.frames, levels * block) }
    }

    func testAnArmedOrMonitoredStripIsNeverRenderedAhead() throws {
        var s = Session()
        let material = try region("a.wav", frames: 96000) { _ in 0.1 }
        s.tracks = [Track(name: "Plain", playbackChain: "gain:0", regions: [material]),
                    Track(name: "Armed", inputChannels: [1], armed: true, playbackChain: "gain:0", regions: [material]),
                    Track(name: "Monitored", inputChannels: [1], playbackChain: "gain:0", regions: [material], monitoring: .input),
                    // Fed by its input but not hearing it: it plays its material, yet never ahead.
                    Track(name: "Fed", inputChannels: [1], playbackChain: "gain:0", regions: [material], monitoring: .off)]
        let (engine, device) = try start(s, listening: [1, 2, 3])
        try roll(engine, device)
        for _ in 0..<40 { step(engine, device) }
        XCTAssertGreaterThan(try XCTUnwrap(ahead(engine, strip: 0)).renderedBlocks.load(ordering: .relaxed), 10)
        for i in [1, 2, 3] {
            let blocks = ahead(engine, strip: i)?.renderedBlocks.load(ordering: .relaxed) ?? 0
            XCTAssertEqual(blocks, 0, "strip \(i) (listening to its input) was rendered ahead")
        }
    }
}
