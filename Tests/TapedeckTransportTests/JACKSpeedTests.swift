import XCTest
import CJACKProbe
import TapedeckCore
import TapedeckDSP
@testable import TapedeckEngine
@testable import TapedeckTransport

/// Following JACK's transport at another speed: JACK's frames run at 1×, Tapedeck's playhead
/// at its own speed, and the mix's time-pitch (one stretcher on the mix bus) sounds from the
/// frame JACK rolls from, at the track's pitch and level.
final class JACKSpeedTests: XCTestCase {
    func testAtHalfSpeedJackRollsFromThePlayheadAndTheStretchedMixKeepsItsPitch() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tone = (0..<48000 * 30).map { Float(0.25 * sin(2 * Double.pi * 500 * Double($0) / 48000)) }
        let (session, folder) = try TransportFixture.session(in: dir, signals: [tone])
        let listener = try JackProbe(name: "listener", inputs: 1)
        let transport = try Transport(session: session, folder: folder, device: try JackTools.device(outputs: 2))
        defer { transport.close() }
        listener.connect("tapedeck:out_L", "listener:in_1")
        transport.setTimePitch(TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 0))
        usleep(300_000)

        transport.play(from: 48000)
        TransportFixture.waitFor(transport) { $0.state == .playing && $0.positionFrame > 60000 }
        let a = transport.snapshot().positionFrame
        let t0 = Transport.monotonicSeconds()
        usleep(1_000_000)
        let b = transport.snapshot().positionFrame
        let rate = Double(b - a) / (Transport.monotonicSeconds() - t0)
        XCTAssertEqual(rate, 24000, accuracy: 4000, "the playhead moves at half speed while JACK's frames run at 1×")
        transport.stop()
        TransportFixture.waitFor(transport) { $0.state == .stopped }
        usleep(200_000)

        let heard = listener.heard()
        guard let first = heard.frames.firstIndex(where: { $0 >= 0 }) else { return XCTFail("JACK's transport never rolled") }
        listener.assertFirstHeardRolling(at: first, from: 48000, "JACK rolls from where Tapedeck plays from")
        let onset = JackTools.onset(heard.samples, threshold: 0.05, from: max(0, first - 4800))
        XCTAssertNotNil(onset, "the stretched mix is heard")
        if let onset {
            XCTAssertLessThan(abs(onset - first), 2048, "sound starts with the roll (the stretcher's delay absorbed)")
        }
        let steady = heard.samples[(first + 24000)..<(first + 48000)]
        let windows = stride(from: steady.startIndex, to: steady.endIndex - 4799, by: 4800).map { Int(JackTools.frequency(steady[$0..<($0 + 4800)])) }
        XCTAssertEqual(JackTools.frequency(steady), 500, accuracy: 10,
                       "stretched, not varispeed: the pitch stays (per 0.1 s: \(windows), xruns: \(transport.events.filter { $0.kind == .deviceXrun }.map { ($0.frame, $0.frames) }))")
        let rms = sqrt(steady.reduce(0) { $0 + Double($1 * $1) } / Double(steady.count))
        let centre = PanLaw.gains(channelCount: 1, pan: 0).left
        XCTAssertEqual(rms, 0.25 / 2.0.squareRoot() * centre, accuracy: 0.03, "at the track's level")
        // Closed cleanly: the server takes a new client at once.
        transport.close()
        let again = td_jack_probe_open("again", 1, 0, 0, 0, 0, 48000)
        XCTAssertNotNil(again, "a client opens on the server after Tapedeck's closed")
        if let again { td_jack_probe_close(again) }
    }
}
