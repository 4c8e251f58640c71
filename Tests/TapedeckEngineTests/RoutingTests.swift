import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// Routing through the one render: buses sum what is sent to them, pre-fader sends ignore the
/// fader, a cue mix reaches its own device outputs, solo follows the routing, and delay
/// compensation lines up every path at every summing point — heard from the engine on a
/// device (what playback plays) and read back from an export (the same engine freewheeled).
final class RoutingTests: XCTestCase {
    private var folder: SessionFolder!
    private let rate = 48000

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    /// A mono float file of `samples` in the session's audio folder; its region from 0.
    private func region(_ samples: [Float], name: String) throws -> Region {
        let writer = try AudioFileWriter(path: folder.audioFolder + "/" + name,
                                         format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: rate, channelCount: 1))
        try samples.withUnsafeBufferPointer { try writer.write([$0.baseAddress!], frameCount: samples.count) }
        try writer.close()
        return Region(file: "audio/" + name, timelineStartFrame: 0, lengthFrames: Int64(samples.count))
    }

    /// Deterministic noise in −0.1…0.1.
    private func noise(_ count: Int, seed: UInt64 = 7) -> [Float] {
        var x = seed
        return (0..<count).map { _ in
            x = x &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: x >> 11) % 1_000_000) / 10_000_000
        }
    }

    /// The engine playing `session` from 0 on a device of `outputs` channels (the control
    /// thread cycling it, period by period): `frames` frames of every output.
    private func play(_ session: Session, frames: Int, outputs: Int = 2, period: Int = 256,
                      during: ((Engine, Int) -> Void)? = nil) throws -> [[Float]] {
        let device = FreewheelDevice(sampleRate: rate, playbackChannels: outputs, periodFrames: period)
        let engine = Engine(device: device)
        defer {
            device.stop()
            engine.close()
        }
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try engine.start()
        engine.play()
        var out = [[Float]](repeating: [], count: outputs)
        var cycles = 0
        while out[0].count < frames && cycles < frames / period * 4 + 100 {
            during?(engine, out[0].count)
            let before = engine.status().positionFrame
            guard device.cycle() else { cycles += 1; continue }
            cycles += 1
            // Only rolling periods count (the first may wait for the disk).
            guard engine.status().positionFrame > before || before > 0 else { continue }
            for c in 0..<outputs { out[c] += UnsafeBufferPointer(start: device.output[c], count: period) }
        }
        return out.map { Array($0.prefix(frames)) }
    }

    /// An export of `session` (the first `frames`), both channels.
    private func export(_ session: Session, frames: Int) throws -> [[Float]] {
        let out = folder.exportsFolder + "/mix-\(UUID().uuidString).wav"
        _ = try Mixdown(Mixdown.Request(session: session, folder: folder, range: FrameRange(startFrame: 0, endFrame: Int64(frames)),
                                        outputPath: out, container: .wav, encoding: .float32)).run()
        let (left, right) = try Fixture.readStereo(out)
        return [left, right]
    }

    private func peak(_ x: ArraySlice<Float>) -> Float { x.map(abs).max() ?? 0 }

    func testABusSumsWhatIsSentToItAtTheSendsLevelAndPan() throws {
        var s = Session()
        let x = [Float](repeating: 0.25, count: 24000)
        var a = Track(name: "A", regions: [try region(x, name: "a.wav")])
        a.sends = [Send(bus: "FX", levelDecibels: -6, pan: 1)]
        s.tracks = [a, Track.makeBus(name: "FX")]
        let centre = Float(PanLaw.mono(pan: 0).left), level = Float(Decibels.toLinear(-6))
        for out in [try play(s, frames: 12000), try export(s, frames: 12000)] {
            // Left: the dry track alone (the send is panned hard right); right: dry + send.
            XCTAssertEqual(out[0][6000], 0.25 * centre, accuracy: 1e-6)
            XCTAssertEqual(out[1][6000], 0.25 * centre + 0.25 * level, accuracy: 1e-6)
        }
    }

    func testAPreFaderSendKeepsSoundingWithTheFaderDownAndAPostFaderSendFollowsIt() throws {
        var s = Session()
        var a = Track(name: "A", gainDecibels: Fader.silentDecibels, regions: [try region(noise(24000), name: "a.wav")])
        a.sends = [Send(bus: "Pre", preFader: true), Send(bus: "Post")]
        var pre = Track.makeBus(name: "Pre"), post = Track.makeBus(name: "Post")
        pre.pan = -1
        post.pan = 1
        s.tracks = [a, pre, post]
        for out in [try play(s, frames: 12000), try export(s, frames: 12000)] {
            XCTAssertGreaterThan(peak(out[0][1000...]), 0.02, "the pre-fader send (left) sounds")
            XCTAssertEqual(peak(out[1][1000...]), 0, "the post-fader send (right) follows the fader to silence")
        }
    }

    /// A headphone cue mix: pre-fader sends to a bus on outputs 3–4 carry the track whatever
    /// the main fader does, and nothing of it reaches outputs 1–2.
    func testACueMixOnOutputsThreeAndFourCarriesOnlyItsPreFaderSends() throws {
        var s = Session()
        let x = [Float](repeating: 0.25, count: 48000)
        var a = Track(name: "A", regions: [try region(x, name: "a.wav")])
        a.sends = [Send(bus: "Cue", levelDecibels: 0, preFader: true)]
        var b = Track(name: "B", regions: [try region(noise(48000), name: "b.wav")])
        b.gainDecibels = -6
        var cue = Track.makeBus(name: "Cue")
        cue.output = .device([3, 4])
        s.tracks = [a, b, cue]
        let out = try play(s, frames: 36000, outputs: 4) { engine, frame in
            // The main fader pulled to −∞ half way: the cue mix does not move.
            if frame == 12032 { engine.setMixer(track: 0, gainDecibels: Fader.silentDecibels, pan: 0, mute: false, solo: false) }
        }
        let centre = Float(PanLaw.mono(pan: 0).left)
        for i in stride(from: 1000, to: 36000, by: 997) {
            XCTAssertEqual(out[2][i], 0.25 * centre, accuracy: 1e-6, "output 3 at \(i): the cue")
            XCTAssertEqual(out[3][i], 0.25 * centre, accuracy: 1e-6, "output 4 at \(i): the cue")
        }
        // Outputs 1–2: A then B; after the fader moved, B alone (B never reaches the cue).
        XCTAssertEqual(peak(out[0][20000...].map { $0 }[...]) < 0.1, true)
        let bGain = Float(Decibels.toLinear(-6)) * centre
        let bNoise = noise(48000)
        for i in stride(from: 20000, to: 36000, by: 499) { XCTAssertEqual(out[0][i], bNoise[i] * bGain, accuracy: 1e-6, "main at \(i): B only") }
    }

    /// Solo along the routing: a soloed track keeps its bus (carrying it alone); a soloed bus
    /// keeps what feeds it; a solo-safe bus stays whatever is soloed.
    func testSoloFollowsTheRouting() throws {
        var s = Session()
        var a = Track(name: "A", pan: -1, regions: [try region([Float](repeating: 0.25, count: 24000), name: "a.wav")])
        a.sends = [Send(bus: "FX")]
        var b = Track(name: "B", pan: 1, regions: [try region([Float](repeating: 0.5, count: 24000), name: "b.wav")])
        b.sends = [Send(bus: "FX")]
        var fx = Track.makeBus(name: "FX")
        fx.output = .device([3, 4])
        s.tracks = [a, b, fx]
        s.tracks[0].solo = true
        var out = try play(s, frames: 12000, outputs: 4)
        XCTAssertEqual(out[0][6000], 0.25, accuracy: 1e-6, "A soloed")
        XCTAssertEqual(out[1][6000], 0, accuracy: 1e-6, "B silenced")
        XCTAssertGreaterThan(out[2][6000], 0.1, "FX carries A")
        XCTAssertEqual(out[2][6000], 0.25 * Float(PanLaw.mono(pan: 0).left), accuracy: 1e-6, "FX carries A alone")
        s.tracks[0].solo = false
        s.tracks[2].solo = true
        out = try play(s, frames: 12000, outputs: 4)
        XCTAssertEqual(out[0][6000], 0.25, accuracy: 1e-6, "A feeds the soloed bus: heard")
        XCTAssertEqual(out[1][6000], 0.5, accuracy: 1e-6, "B too")
        s.tracks[2].solo = false
        s.tracks[1].solo = true
        s.tracks[2].sends = []
        s.tracks[0].sends = []
        s.tracks[1].sends = []
        s.tracks[2].soloSafe = true
        out = try play(s, frames: 12000, outputs: 4)
        XCTAssertEqual(out[0][6000], 0, accuracy: 1e-6, "A not soloed, feeds nothing soloed")
        XCTAssertEqual(Session.audibleFor(s), [false, true, true], "B soloed, FX solo-safe")
    }

    /// The null test: a track's dry path and its send through a bus with a latent node (the
    /// limiter's 5 ms look-ahead, far below its ceiling, so unity) with its polarity flipped
    /// cancel to silence when every path is lined up, live and in export.
    func testATrackAgainstItsInvertedSendThroughALatentBusNullsBelowMinus100dB() throws {
        var s = Session()
        var a = Track(name: "A", regions: [try region(noise(48000), name: "a.wav")])
        a.sends = [Send(bus: "Look")]
        var look = Track.makeBus(name: "Look")
        look.playbackChain = "limiter:ceiling=0,gain:invert=1"
        s.tracks = [a, look]
        let spec = try GraphSpec(session: s, folder: folder)
        let compensation = spec.delayCompensation(sampleRate: rate)
        XCTAssertEqual(compensation.outputLatencyFrames, 240, "the limiter's 5 ms")
        XCTAssertEqual(compensation.outputDelayFrames, [0, 240])
        let floor = Float(Decibels.toLinear(-100))
        let live = try play(s, frames: 40000)
        let exported = try export(s, frames: 40000)
        XCTAssertGreaterThan(peak(try play({ var t = s; t.tracks[1].mute = true; return t }(), frames: 4000)[0][1000...]), 0.01,
                             "the dry path alone is loud")
        for (name, out) in [("live", live), ("export", exported)] {
            XCTAssertLessThan(peak(out[0][512...]), floor, "\(name): left nulls")
            XCTAssertLessThan(peak(out[1][512...]), floor, "\(name): right nulls")
        }
    }

    /// A bus feeding a bus with its own latency, beside a direct path: every path into the
    /// master arrives together (the sum of a latent chain of buses).
    func testDelaysAddUpAlongAChainOfBuses() throws {
        var s = Session()
        var a = Track(name: "A", regions: [try region(noise(48000, seed: 3), name: "a.wav")])
        a.sends = [Send(bus: "One")]
        var one = Track.makeBus(name: "One")
        one.playbackChain = "limiter:ceiling=0"
        one.output = .bus("Two")
        var two = Track.makeBus(name: "Two")
        two.playbackChain = "limiter:ceiling=0,gain:invert=1"
        s.tracks = [a, one, two]
        XCTAssertEqual(try GraphSpec(session: s, folder: folder).delayCompensation(sampleRate: rate).outputLatencyFrames, 480)
        let out = try export(s, frames: 30000)
        XCTAssertLessThan(peak(out[0][1000...]), Float(Decibels.toLinear(-100)), "dry against two latent buses in a row")
    }

    /// Stems are the strips that reach the master (a track routed into a bus is in the bus's
    /// stem): at 2× varispeed, through the one speed point, they still sum to the mix.
    func testStemsAtTwiceSpeedAreWhatReachesTheMasterAndSumToTheMix() throws {
        var s = Session()
        var a = Track(name: "A", pan: -0.5, regions: [try region(noise(48000, seed: 5), name: "a.wav")])
        a.sends = [Send(bus: "FX", levelDecibels: -6)]
        var b = Track(name: "B", regions: [try region(noise(48000, seed: 9), name: "b.wav")])
        b.output = .bus("FX")
        var fx = Track.makeBus(name: "FX")
        fx.playbackChain = "lpf:cutoff=3000"
        s.tracks = [a, b, fx]
        s.masterGainDecibels = -3
        let stems = folder.path + "/stems"
        try FileManager.default.createDirectory(atPath: stems, withIntermediateDirectories: true)
        let out = folder.exportsFolder + "/fast.wav"
        let summary = try Mixdown(Mixdown.Request(session: s, folder: folder, range: FrameRange(startFrame: 0, endFrame: 48000),
                                                  outputPath: out, container: .wav, encoding: .float32, stemsFolder: stems,
                                                  timePitch: TimePitchSettings(speed: 2, mode: .varispeed, pitchSemitones: 0))).run()
        XCTAssertEqual(summary.frameCount, 24000, "half the length")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: stems).sorted(), ["01-A.wav", "03-FX.wav"],
                       "B reaches the master through FX")
        func read(_ path: String) throws -> [[Float]] {
            let (l, r) = try Fixture.readStereo(path)
            return [l, r]
        }
        let mix = try read(out), stemA = try read(stems + "/01-A.wav"), stemFX = try read(stems + "/03-FX.wav")
        XCTAssertEqual(mix[0].count, 24000)
        XCTAssertEqual(stemA[0].count, 24000)
        let master = Float(Decibels.toLinear(-3))
        var worst: Float = 0
        for c in 0..<2 { for i in 0..<24000 { worst = max(worst, abs((stemA[c][i] + stemFX[c][i]) * master - mix[c][i])) } }
        XCTAssertLessThan(worst, 1e-5, "the stems × the master fader are the mix")
        XCTAssertGreaterThan(peak(stemFX[0][1000...]), 0.01)
    }

    func testACycleIsRefusedWithALineNamingIt() throws {
        var s = Session()
        var one = Track.makeBus(name: "One")
        one.output = .bus("Two")
        var two = Track.makeBus(name: "Two")
        two.sends = [Send(bus: "One")]
        s.tracks = [Track(name: "A"), one, two]
        XCTAssertThrowsError(try GraphSpec(session: s, folder: folder)) { error in
            XCTAssertEqual("\(error)", "routing cycle: One → Two → One")
        }
        XCTAssertEqual(SessionValidator.problem(in: s), "routing: routing cycle: One → Two → One")
    }
}

private extension Session {
    static func audibleFor(_ s: Session) -> [Bool] { s.audibleStrips() }
}
