import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// The process graph on several threads: every summing point adds what reaches it in the
/// one-thread walk's order, so a routed, automated session plays and exports the same bits
/// on 1, 2 and 4 threads, sample for sample.
final class ParallelGraphTests: XCTestCase {
    private var folder: SessionFolder!
    private let rate = 48000

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    /// Deterministic noise in −0.3…0.3, `channels` interleaved-free channels, as a float WAV.
    private func region(_ name: String, frames: Int, channels: Int = 1, seed: UInt64) throws -> Region {
        var x = seed
        let data = (0..<channels).map { _ in
            (0..<frames).map { _ -> Float in
                x = x &* 6364136223846793005 &+ 1442695040888963407
                return Float(Int64(bitPattern: x >> 11) % 1_000_000) / 3_333_333
            }
        }
        let writer = try AudioFileWriter(path: folder.audioFolder + "/" + name,
                                         format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: rate,
                                                                 channelCount: channels))
        try writer.write(data.map { p in p.withUnsafeBufferPointer { $0.baseAddress! } }, frameCount: frames)
        withExtendedLifetime(data) {}
        try writer.close()
        return Region(file: "audio/" + name, timelineStartFrame: 0, lengthFrames: Int64(frames))
    }

    /// Tracks with chains (a latent limiter among them), three or more paths into each bus so
    /// their order shows in the bits, pre- and post-fader sends, a send's level lane, a
    /// track's fader, pan and compressor threshold lanes, a bus into another bus, a bus on
    /// device outputs 3–4, a muted track, and a master chain with its own latency.
    private func session(frames: Int) throws -> Session {
        var s = Session()
        let chains = ["hpf:80,comp:-18,eq:midGain=-4,gain:-3", "limiter", "lpf:3000,delay:time=10ms:feedback=0.2", "",
                      "comp:-24:ratio=6,eq:lowGain=3", "gain:-1"]
        for k in 0..<chains.count {
            var t = Track(name: "t\(k)", inputChannels: k % 3 == 2 ? [1, 2] : [1], gainDecibels: -6 - Double(k), pan: Double(k % 5) / 2 - 1,
                          playbackChain: chains[k],
                          regions: [try region("t\(k).wav", frames: frames, channels: k % 3 == 2 ? 2 : 1, seed: UInt64(k + 1))])
            t.sends = [Send(bus: "Verb", levelDecibels: -9 - Double(k), preFader: k % 2 == 0),
                       Send(bus: "Sub", levelDecibels: -12, pan: Double(k) / 6)]
            s.tracks.append(t)
        }
        s.tracks[3].output = .bus("Sub")
        s.tracks[5].mute = true
        let step = Int64(rate / 20)
        let points = frames / Int(step) + 1
        s.tracks[0].automation = [
            AutomationLane(parameter: .gain, points: (0..<points).map { AutomationPoint(frame: Int64($0) * step, value: -3 - Double($0 % 7)) }),
            AutomationLane(parameter: .pan, points: (0..<points).map { AutomationPoint(frame: Int64($0) * step, value: Double($0 % 5) / 2 - 1) }),
            AutomationLane(parameter: .node("comp", "threshold"), points: (0..<points).map { AutomationPoint(frame: Int64($0) * step, value: -12 - Double($0 % 9)) }),
            AutomationLane(parameter: .send("Verb"), points: (0..<points).map { AutomationPoint(frame: Int64($0) * step, value: -20 + Double($0 % 6)) }),
        ]
        var verb = Track.makeBus(name: "Verb")
        verb.playbackChain = "reverb"
        verb.output = .bus("Sub")
        var sub = Track.makeBus(name: "Sub")
        sub.playbackChain = "eq:highGain=-3,limiter"
        var cue = Track.makeBus(name: "Cue")
        cue.output = .device([3, 4])
        s.tracks[1].sends.append(Send(bus: "Cue", levelDecibels: -3, preFader: true))
        s.tracks[2].sends.append(Send(bus: "Cue", levelDecibels: -4))
        s.tracks[4].sends.append(Send(bus: "Cue", levelDecibels: -5))
        s.tracks += [verb, sub, cue]
        s.masterChain = "eq:lowGain=-2,limiter"
        return s
    }

    /// The engine playing `session` from 0 on `threads` threads at `period` frames, the control
    /// thread cycling a four-output device: `frames` frames of every output. Half way, a fader,
    /// a pan and a send level move.
    private func play(_ session: Session, threads: Int, period: Int, frames: Int) throws -> [[Float]] {
        let device = FreewheelDevice(sampleRate: rate, playbackChannels: 4, periodFrames: period)
        var options = EngineOptions()
        options.renderThreads = threads
        let engine = Engine(device: device, options: options)
        defer {
            device.stop()
            engine.close()
        }
        XCTAssertEqual(engine.core.threads?.count ?? 1, threads, "the engine runs on the threads asked for")
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try engine.start()
        engine.play()
        var out = [[Float]](repeating: [], count: 4)
        var cycles = 0
        var moved = false
        while out[0].count < frames && cycles < frames / period * 4 + 100 {
            if !moved && out[0].count >= frames / 2 {
                moved = true
                engine.setMixer(track: 2, gainDecibels: -20, pan: 0.7, mute: false, solo: false)
                engine.setSend(track: 4, index: 0, levelDecibels: 0, pan: -0.5)
            }
            let before = engine.status().positionFrame
            guard device.cycle() else { cycles += 1; continue }
            cycles += 1
            guard engine.status().positionFrame > before || before > 0 else { continue }
            for c in 0..<4 { out[c] += UnsafeBufferPointer(start: device.output[c], count: period) }
        }
        return out.map { Array($0.prefix(frames)) }
    }

    /// The first sample where `a` and `b` differ in their bits, or nil.
    private func firstDifference(_ a: [Float], _ b: [Float]) -> Int? {
        guard a.count == b.count else { return min(a.count, b.count) }
        return a.indices.first { a[$0].bitPattern != b[$0].bitPattern }
    }

    func testARoutedAutomatedSessionPlaysTheSameBitsOnOneTwoAndFourThreads() throws {
        let frames = 36000
        let s = try session(frames: frames)
        for period in [64, 256] {
            let one = try play(s, threads: 1, period: period, frames: frames)
            XCTAssertGreaterThan(one[0].map(abs).max() ?? 0, 0.01, "the mix sounds")
            XCTAssertGreaterThan(one[2].map(abs).max() ?? 0, 0.001, "the cue bus reaches outputs 3-4")
            for threads in [2, 4] {
                let many = try play(s, threads: threads, period: period, frames: frames)
                for c in 0..<4 {
                    XCTAssertNil(firstDifference(one[c], many[c]),
                                 "output \(c + 1), \(threads) threads, \(period)-frame periods: differs from one thread")
                }
            }
        }
    }

    func testAnExportIsTheSameBitsOnOneTwoAndFourThreads() throws {
        let frames = 40000
        let s = try session(frames: frames)
        func export(threads: Int) throws -> [Float] {
            let out = folder.exportsFolder + "/mix-\(threads).wav"
            _ = try Mixdown(Mixdown.Request(session: s, folder: folder, range: FrameRange(startFrame: 0, endFrame: Int64(frames)),
                                            outputPath: out, container: .wav, encoding: .float32, workerCount: threads)).run()
            let (left, right) = try Fixture.readStereo(out)
            return left + right
        }
        let one = try export(threads: 1)
        XCTAssertEqual(one.count, 2 * frames)
        XCTAssertGreaterThan(one.map(abs).max() ?? 0, 0.01)
        for threads in [2, 4] {
            XCTAssertNil(firstDifference(one, try export(threads: threads)), "the export on \(threads) threads differs from one thread")
        }
    }
}
