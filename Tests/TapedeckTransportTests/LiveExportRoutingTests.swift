import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport

/// One render: a session with two buses (a reverb and a slap delay), pre- and post-fader
/// sends, a bus routed into a bus, and a master chain, played on a device paced in real time
/// (`jacktap`), is the export of the same session sample for sample — at 1× and at 2×
/// varispeed, where the buses run at timeline rate before the one speed point.
final class LiveExportRoutingTests: XCTestCase {
    private func session(in dir: String) throws -> (Session, SessionFolder) {
        let rate = 48000
        let signals = (0..<3).map { TransportFixture.noise(4 * rate, seed: UInt32(31 + $0), amplitude: 0.25) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: signals)
        session.tracks[0].pan = -0.4
        session.tracks[0].sends = [Send(bus: "Slap", levelDecibels: -3, preFader: true)]
        session.tracks[0].gainDecibels = -4
        session.tracks[1].sends = [Send(bus: "Verb", levelDecibels: -6, pan: 0.5)]
        session.tracks[1].playbackChain = "hpf:120"
        session.tracks[2].output = .bus("Verb")
        var slap = Track.makeBus(name: "Slap")
        slap.playbackChain = "delay:time=90:feedback=0.3"
        slap.output = .bus("Verb")
        var verb = Track.makeBus(name: "Verb")
        verb.playbackChain = "reverb:size=0.6,limiter:ceiling=-0.5"
        verb.gainDecibels = -2
        session.tracks += [slap, verb]
        session.masterChain = "eq,comp:threshold=-20"
        session.masterGainDecibels = -1.5
        try folder.save(session)
        return (session, folder)
    }

    /// Both channels of a WAV file.
    private func wav(_ path: String) throws -> (left: [Float], right: [Float]) {
        let reader = try AudioFileReader(path: path)
        var left: [Float] = [], right: [Float] = []
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 4096), r = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { l.deallocate(); r.deallocate() }
        while true {
            let n = try reader.read(into: [l, r], frameCount: 4096)
            if n == 0 { break }
            left += UnsafeBufferPointer(start: l, count: n)
            right += UnsafeBufferPointer(start: r, count: n)
        }
        return (left, right)
    }

    /// The first frame of `x` louder than silence.
    private func onset(_ x: [Float]) -> Int? { x.firstIndex { abs($0) > 1e-7 } }

    private func compare(settings: TimePitchSettings, file: StaticString = #filePath, line: UInt = #line) throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try session(in: dir)
        let out = dir + "/out.raw"
        let transport = try Transport(session: session, folder: folder, device: try TransportFixture.device("jacktap:OUT=\(out)"),
                                      startsDevice: false)
        if !settings.isIdentity {
            transport.setTimePitch(settings)
            XCTAssertTrue(transport.engine.waitForTimePitch(), file: file, line: line)
        }
        transport.play(from: 0)
        try transport.startDevice()
        let end = TransportFixture.waitFor(transport, timeout: 30) { $0.state == .stopped }
        transport.close()
        XCTAssertEqual(end.xrunCount, 0, "a paced run with no xrun", file: file, line: line)
        let played = try TransportFixture.stereo(out)
        let path = dir + "/export.wav"
        _ = try Mixdown(Mixdown.Request(session: session, folder: folder, range: FrameRange(startFrame: 0, endFrame: session.endFrame),
                                        outputPath: path, container: .wav, encoding: .float32, timePitch: settings,
                                        quality: .fast)).run()
        let exported = try wav(path)
        // Live, the output lags by the device's prefill and what the master lines up: the
        // export has dropped the latter. Both start where the music starts.
        guard let liveStart = onset(played.left), let exportStart = onset(exported.left) else {
            return XCTFail("silence", file: file, line: line)
        }
        let count = min(exported.left.count - exportStart, played.left.count - liveStart) - 4096
        XCTAssertGreaterThan(count, 0, file: file, line: line)
        guard count > 0 else { return }
        XCTAssertGreaterThan(count, Int(Double(session.endFrame) / settings.speed) * 3 / 4, file: file, line: line)
        // Where the onsets agree to within a filter's pre-ring (a varispeed's sinc rings a few
        // frames ahead of the music live; the export drops what lies before its first frame):
        // the lag that lines the two up, found over a second of the music.
        var lag = 0, best = Float.infinity
        for candidate in -64...64 {
            var e: Float = 0
            for i in stride(from: 4096, to: min(count, 52_000), by: 3) {
                let at = liveStart + candidate + i
                if at >= 0 && at < played.left.count { e = max(e, abs(played.left[at] - exported.left[exportStart + i])) }
            }
            if e < best { best = e; lag = candidate }
        }
        var worst: Float = 0
        for i in 0..<count {
            let at = liveStart + lag + i
            guard at >= 0 && at < played.left.count else { continue }
            worst = max(worst, abs(played.left[at] - exported.left[exportStart + i]), abs(played.right[at] - exported.right[exportStart + i]))
        }
        XCTAssertLessThan(worst, 1e-6, "speed \(settings.speed): live and export differ by \(worst)", file: file, line: line)
    }

    func testABusSessionPlaysAsItExportsAtOneTimesSpeed() throws {
        try compare(settings: .normal)
    }

    func testABusSessionPlaysAsItExportsAtTwiceSpeedVarispeed() throws {
        try compare(settings: TimePitchSettings(speed: 2, mode: .varispeed, pitchSemitones: 0))
    }
}
