import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// Automation played: the fader frame by frame along its lane, live and in export alike; at
/// another speed at the timeline's frames; a send's level and a node's parameter too.
final class AutomationPlaybackTests: XCTestCase {
    private var folder: SessionFolder!
    private let rate = 48000

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    /// A track of a steady 0.5 for `seconds`.
    private func steadyTrack(seconds: Int = 3) throws -> Track {
        try Fixture.steadyTrack(in: folder, seconds: seconds, sampleRate: rate)
    }

    /// A fade from −∞ to 0 dB over the first second: 100 points, even in dB after the first.
    private func fadeLane() -> AutomationLane {
        var points = [AutomationPoint(frame: 0, value: Fader.silentDecibels)]
        for k in 1..<100 {
            points.append(AutomationPoint(frame: Int64(k) * Int64(rate) / 99, value: -60 + 60 * Double(k - 1) / 98, curve: .exponential))
        }
        return AutomationLane(parameter: .gain, points: points)
    }

    /// The engine playing `session` from 0, period by period (live, not freewheeling).
    private func play(_ session: Session, frames: Int, period: Int = 256) throws -> [Float] {
        let device = FreewheelDevice(sampleRate: rate, playbackChannels: 2, periodFrames: period)
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
        var cycles = 0
        while out.count < frames && cycles < 100_000 {
            cycles += 1
            guard device.cycle() else { continue }
            if !rolling { rolling = engine.status().positionFrame > 0 }
            guard rolling else { continue }
            out += UnsafeBufferPointer(start: device.output[0], count: period)
        }
        return Array(out.prefix(frames))
    }

    private func export(_ session: Session, frames: Int, timePitch: TimePitchSettings = .normal) throws -> [Float] {
        let out = folder.exportsFolder + "/x-\(UUID().uuidString).wav"
        _ = try Mixdown(Mixdown.Request(session: session, folder: folder, range: FrameRange(startFrame: 0, endFrame: Int64(frames)),
                                        outputPath: out, container: .wav, encoding: .float32, timePitch: timePitch)).run()
        return try Fixture.readStereo(out).left
    }

    /// The worst difference in dB between `out` and 0.5 × the lane, where the lane is above −60 dB.
    private func worstDecibels(_ out: [Float], lane: AutomationLane, timelineFrame: (Int) -> Int64 = { Int64($0) },
                               range: Range<Int>) -> Double {
        var worst = 0.0
        for f in range {
            let want = 0.5 * Decibels.toLinear(lane.value(at: timelineFrame(f)) ?? 0)
            guard want > 0.5 * Decibels.toLinear(-60) else { continue }
            worst = max(worst, abs(Decibels.fromLinear(Double(out[f]) / want)))
        }
        return worst
    }

    func testAFaderLaneFromSilenceToUnityIsHeardAsItsCurveLiveAndInExport() throws {
        var s = Session()
        var a = try steadyTrack()
        let lane = fadeLane()
        a.automation = [lane]
        // The fader says −20 dB: the lane, which plays, is what is heard.
        a.gainDecibels = -20
        s.tracks = [a]
        let live = try play(s, frames: 60_000)
        let exported = try export(s, frames: 60_000)
        XCTAssertEqual(live.count, 60_000)
        XCTAssertLessThan(worstDecibels(live, lane: lane, range: 0..<60_000), 0.01, "live")
        XCTAssertLessThan(worstDecibels(exported, lane: lane, range: 0..<60_000), 0.01, "export")
        XCTAssertEqual(live[0], 0, accuracy: 1e-9, "from −∞")
        var worst: Float = 0
        for f in 0..<60_000 { worst = max(worst, abs(live[f] - exported[f])) }
        XCTAssertLessThan(worst, 1e-6, "live and export the same")
        // Off: the fader again.
        s.tracks[0].automation[0].mode = .off
        XCTAssertEqual(try export(s, frames: 10_000)[5000], 0.5 * Float(Decibels.toLinear(-20)), accuracy: 1e-6)
    }

    /// At 2× varispeed device frame f plays timeline frame 2f: the fade arrives by then.
    func testAtTwiceSpeedTheCurveArrivesAtTheTimelinesFrames() throws {
        var s = Session()
        var a = try steadyTrack(seconds: 4)
        let lane = AutomationLane(parameter: .gain, points: [AutomationPoint(frame: 0, value: -40, curve: .exponential),
                                                             AutomationPoint(frame: 96_000, value: 0)])
        a.automation = [lane]
        s.tracks = [a]
        let out = try export(s, frames: 192_000, timePitch: TimePitchSettings(speed: 2, mode: .varispeed, pitchSemitones: 0))
        XCTAssertEqual(out.count, 96_000)
        // Away from the resampler's edges; the fade reaches 0 dB at device frame 48 000.
        let atTimeline = worstDecibels(out, lane: lane, timelineFrame: { Int64($0) * 2 }, range: 2000..<60_000)
        XCTAssertLessThan(atTimeline, 0.05, "the lane at the timeline's frames")
        let atDevice = worstDecibels(out, lane: lane, range: 2000..<60_000)
        XCTAssertGreaterThan(atDevice, 3, "not at the device's")
    }

    func testASendsLevelAndANodesParameterFollowTheirLanes() throws {
        var s = Session()
        var a = try steadyTrack()
        a.gainDecibels = Fader.silentDecibels
        a.sends = [Send(bus: "FX", preFader: true)]
        a.playbackChain = "gain"
        a.automation = [
            AutomationLane(parameter: .send("FX"), points: [AutomationPoint(frame: 0, value: -30), AutomationPoint(frame: 48_000, value: -6)]),
            AutomationLane(parameter: .node("gain", "gain"), points: [AutomationPoint(frame: 0, value: 0), AutomationPoint(frame: 72_000, value: 0),
                                                                       AutomationPoint(frame: 72_001, value: -12)]),
        ]
        var fx = Track.makeBus(name: "FX")
        fx.pan = -1
        s.tracks = [a, fx]
        let out = try export(s, frames: 120_000)
        let centre = PanLaw.mono(pan: 0).left
        func level(_ f: Int) -> Double { Decibels.fromLinear(Double(out[f]) / (0.5 * centre)) }
        XCTAssertEqual(level(0), -30, accuracy: 0.05, "the send starts at its lane's −30 dB")
        XCTAssertEqual(level(24_000), Decibels.fromLinear((Decibels.toLinear(-30) + Decibels.toLinear(-6)) / 2), accuracy: 0.05,
                       "half way in amplitude")
        XCTAssertEqual(level(60_000), -6, accuracy: 0.05)
        // The gain node's parameter stepped to −12 dB at 1.5 s; its own 20 ms smoothing joins it.
        XCTAssertEqual(level(110_000), -18, accuracy: 0.05, "the node's parameter moved by its lane")
    }

    /// A pan lane sweeping left to right is heard at the pan law frame by frame, live and in
    /// export; a mute lane silences exactly the frames between its points.
    func testAPanLaneAndAMuteLaneAreHeardFrameByFrame() throws {
        var s = Session()
        var a = try steadyTrack(seconds: 2)
        a.pan = 0
        a.automation = [
            AutomationLane(parameter: .pan, points: [AutomationPoint(frame: 0, value: -1), AutomationPoint(frame: 48_000, value: 1)]),
            AutomationLane(parameter: .mute, points: [AutomationPoint(frame: 0, value: 0), AutomationPoint(frame: 60_013, value: 1),
                                                      AutomationPoint(frame: 70_001, value: 0)]),
        ]
        s.tracks = [a]
        let out = folder.exportsFolder + "/pan.wav"
        _ = try Mixdown(Mixdown.Request(session: s, folder: folder, range: FrameRange(startFrame: 0, endFrame: 90_000),
                                        outputPath: out, container: .wav, encoding: .float32)).run()
        let (left, right) = try Fixture.readStereo(out)
        var worst = 0.0
        for f in stride(from: 0, to: 48_000, by: 7) {
            let want = PanLaw.mono(pan: -1 + 2 * Double(f) / 48_000)
            worst = max(worst, abs(Double(left[f]) - 0.5 * want.left), abs(Double(right[f]) - 0.5 * want.right))
        }
        XCTAssertLessThan(worst, 1e-5, "the pan law along the lane (joined every 32 frames)")
        XCTAssertEqual(Double(right[50_000]), 0.5 * PanLaw.mono(pan: 1).right, accuracy: 1e-6, "held after the last point")
        XCTAssertEqual(right[60_012], right[50_000], accuracy: 1e-7, "heard up to the mute's point")
        XCTAssertEqual(right[60_013], 0, "muted from its point")
        XCTAssertEqual(right[70_000], 0, "muted up to the next point")
        XCTAssertEqual(right[70_001], right[50_000], accuracy: 1e-7, "heard again from it")
        let live = try play(s, frames: 90_000, period: 64)
        var apart: Float = 0
        for f in 0..<90_000 { apart = max(apart, abs(live[f] - left[f])) }
        XCTAssertLessThan(apart, 1e-6, "live as exported")
    }
}
