import CJACKProbe
import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckTransport
@testable import TapedeckDevices

/// Issue 39: retroactive capture through a stalled JACK server. The memory keeps its whole
/// length with the frames JACK lost as silence where they were lost, says where, and every
/// other sample is where it was played (judged by a cosine played by JACK's frame time, so
/// its phase names the device time of every sample).
final class JACKRetroStallTests: XCTestCase {
    static let toneHz = 997.0

    func testAServerStallInsideTheWindowIsSilenceAtItsPlaceAndTheKeptTakeIsWhole() throws {
        let fixture = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [])
        session.tracks.append(Track(name: "Vocal", inputChannels: [1], armed: true))
        try folder.save(session)
        guard let sine = td_jack_loop_open("tdretrosine", 1, 0, 1, Self.toneHz) else { throw XCTSkip("the sine client did not open") }
        defer { td_jack_loop_close(sine) }
        var options = TransportOptions()
        options.retroSeconds = 4
        let provider = JackProvider()
        let transport = try Transport(session: session, folder: folder, device: try provider.open(name: "jack", sampleRate: 48000),
                                      provider: provider, options: options)
        defer { transport.close() }
        JackTools.run(["/usr/bin/jack_connect", "tdretrosine:out_1", "tapedeck:Vocal_in"])
        func deviceFrame() -> Int64 { transport.engine.status().deviceFrame }
        func waitForDeviceFrame(_ frame: Int64) {
            let deadline = Date().addingTimeInterval(60)
            while deviceFrame() < frame && Date() < deadline { usleep(10_000) }
        }
        // Four seconds heard whole, then kept: the tone's phase there ties the timeline to
        // JACK's frame time.
        waitForDeviceFrame(5 * 48000)
        let before = try XCTUnwrap(try transport.keepRetro().first, "kept before the stall")
        // The server stops for 200 ms; kept one second later, the window holds the stall.
        kill(fixture.pid, SIGSTOP)
        usleep(200_000)
        kill(fixture.pid, SIGCONT)
        let resumed = deviceFrame()
        waitForDeviceFrame(resumed + 48000)
        let after = try XCTUnwrap(try transport.keepRetro().first, "kept after the stall")
        _ = transport.snapshot()
        let xruns = transport.events.filter { $0.kind == EngineEvent.Kind.deviceXrun }

        XCTAssertEqual(after.region.lengthFrames, 4 * 48000, "the whole four seconds, the stall inside them; xruns \(xruns.map { ($0.frame, $0.frames) })")
        let first = try JackTools.firstChannel(folder.absolutePath(of: before.region.file))
        let second = try JackTools.firstChannel(folder.absolutePath(of: after.region.file))
        XCTAssertEqual(Int64(second.count), after.region.lengthFrames)
        // The frame time of timeline frame t is t + offset, one offset for both takes.
        let offset = try XCTUnwrap(Self.frameTimeOffset(first, timelineStart: before.region.timelineStartFrame),
                                   "the first take holds the tone")
        func spans(_ take: FinishedTake) -> [Range<Int64>] {
            take.markers.compactMap { m in
                let words = m.name.split(separator: " ")
                guard m.name.hasPrefix("xrun: "), words.count > 1, let n = Int64(words[1]) else { return nil }
                return (m.frame - take.region.timelineStartFrame)..<(m.frame - take.region.timelineStartFrame + n)
            }
        }
        let gaps = spans(after)
        // The stall was seen. What it cost varies: jackd2's dummy driver often catches up
        // with no frame lost, or loses a cycle or three; the cycles it held become silence
        // too. Whatever it was, the judge below holds every sample to the tone at its frame
        // or to a said silence, so a loss left unsaid (the rest would land early) or a said
        // silence with audio in it fails there.
        XCTAssertFalse(xruns.isEmpty, "the stall is an xrun")
        for (take, samples) in [(before, first), (after, second)] {
            let judged = Self.judge(samples, timelineStart: take.region.timelineStartFrame, offset: offset, silentSpans: spans(take))
            XCTAssertEqual(judged.wrong, 0, "\(take.region.file): every sample where it was played, silence only where said: \(judged.runs); markers \(take.markers); xruns \(xruns.map { ($0.frame, $0.frames) })")
        }
        // What both takes hold is the same audio at the same timeline frames.
        let overlapStart = max(before.region.timelineStartFrame, after.region.timelineStartFrame)
        let overlapEnd = min(before.region.timelineStartFrame + before.region.lengthFrames, after.region.timelineStartFrame + after.region.lengthFrames)
        XCTAssertGreaterThan(overlapEnd, overlapStart, "the two windows overlap")
        var differ = 0
        for t in overlapStart..<max(overlapStart, overlapEnd)
        where first[Int(t - before.region.timelineStartFrame)] != second[Int(t - after.region.timelineStartFrame)] { differ += 1 }
        XCTAssertEqual(differ, 0, "the frames both takes kept are the same at the same place")
        print("retro through a stall: \(gaps) silent in the kept take, xruns \(xruns.map { ($0.frame, $0.frames) })")
    }

    /// td-jack-loop's tone at JACK frame time `f`.
    static func tone(_ f: Int64) -> Float {
        let t = (Double(f % 48000) * toneHz / 48000).truncatingRemainder(dividingBy: 1)
        return Float(0.25 * cos(2 * Double.pi * t))
    }

    /// The offset from timeline frame to JACK frame time (modulo the tone's one-second
    /// period) that the take's first 64 samples of tone agree with.
    static func frameTimeOffset(_ x: [Float], timelineStart: Int64) -> Int64? {
        guard let k = x.indices.first(where: { x[$0] != 0 && $0 + 64 < x.count }) else { return nil }
        return (Int64(0)..<48000).first { o in
            (0..<64).allSatisfy { i in abs(x[k + i] - tone(timelineStart + Int64(k + i) + o)) < 1e-4 }
        }
    }

    /// Samples neither the tone at their frame nor silence inside a said span; where (runs).
    static func judge(_ x: [Float], timelineStart: Int64, offset: Int64, silentSpans: [Range<Int64>]) -> (wrong: Int, runs: String) {
        var wrong = 0
        var runs: [String] = []
        var runStart = -1
        for k in x.indices {
            let silent = silentSpans.contains { $0.contains(Int64(k)) }
            let want = silent ? 0 : tone(timelineStart + Int64(k) + offset)
            let bad = abs(x[k] - want) >= 1e-4
            if bad { wrong += 1; if runStart < 0 { runStart = k } }
            if !bad && runStart >= 0 { if runs.count < 20 { runs.append("\(runStart)+\(k - runStart)") }; runStart = -1 }
        }
        if runStart >= 0 { runs.append("\(runStart)+\(x.count - runStart)") }
        return (wrong, runs.joined(separator: ", "))
    }
}
