import XCTest
import TapedeckCore
@testable import TapedeckRemote

/// Issue 45: `/position/smpte` counts the session's timecode rate, as Ardour's global
/// observer sends it (`HH:MM:SS:FF`, a colon before the frames at every rate).
final class OSCTimecodeFeedbackTests: XCTestCase {
    /// What feedback bit 64 sends for the playhead at `frame` in a session at `rate`.
    private func smpte(_ frame: Int64, _ rate: TimecodeRate, sampleRate: Int = 48000) -> [OSCMessage] {
        var session = Session(sampleRate: sampleRate)
        session.timecodeRate = rate
        let view = OSCView(session: session,
                           transport: OSCTransport(rolling: false, recording: false, loop: false, frame: frame, sampleRate: sampleRate),
                           meters: [], endFrame: 0, stopEnds: false)
        var state = OSCFeedbackState(settings: OSCSurfaceSettings(feedback: .timecode), view: view, wind: .none, now: 0)
        state.transport()
        return state.messages.map(\.message).filter { $0.path == "/position/smpte" }
    }

    func testThePlayheadIsSentAtTheSessionsRate() {
        // 2.5 s: frame 12 at 25, 15 at 30, 12 at 24.
        XCTAssertEqual(smpte(120_000, .fps25), [OSCMessage("/position/smpte", [.string("00:00:02:12")])])
        XCTAssertEqual(smpte(120_000, .fps30), [OSCMessage("/position/smpte", [.string("00:00:02:15")])])
        XCTAssertEqual(smpte(120_000, .fps24), [OSCMessage("/position/smpte", [.string("00:00:02:12")])])
        // The last frame of a second at 25 is 24, never 25 or more.
        XCTAssertEqual(smpte(3 * 48000 - 1, .fps25), [OSCMessage("/position/smpte", [.string("00:00:02:24")])])
        XCTAssertEqual(smpte(3 * 44100 - 1, .fps25, sampleRate: 44100), [OSCMessage("/position/smpte", [.string("00:00:02:24")])])
        // Drop-frame: the minute after the first begins at frame 02, written with colons.
        XCTAssertEqual(smpte(2_882_880, .fps29_97Drop), [OSCMessage("/position/smpte", [.string("00:01:00:02")])])
        // A session that never chose counts at Ardour's default, 30.
        XCTAssertEqual(Session().timecodeRate, .fps30)
    }

    func testWithoutBit64NoTimecodeIsSent() {
        let view = OSCView(session: Session(),
                           transport: OSCTransport(rolling: false, recording: false, loop: false, frame: 0, sampleRate: 48000),
                           meters: [], endFrame: 0, stopEnds: false)
        var state = OSCFeedbackState(settings: OSCSurfaceSettings(feedback: .samples), view: view, wind: .none, now: 0)
        state.transport()
        XCTAssertFalse(state.messages.contains { $0.message.path == "/position/smpte" })
    }
}
