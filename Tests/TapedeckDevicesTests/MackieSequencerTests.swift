import XCTest
import CALSA
import TapedeckCore
@testable import TapedeckEngine
@testable import TapedeckDevices

/// A Mackie Control surface on the ALSA sequencer: its fader reaches the input port's surface
/// ring (not the audio thread's), and feedback SysEx reaches it whole. Skipped where there is
/// no sequencer (the JACK MIDI path is tested end to end in MackieEndToEndTests).
final class MackieSequencerTests: XCTestCase {
    func testASurfaceOnTheSequencerIsHeardAndAnswered() throws {
        guard access("/dev/snd/seq", R_OK | W_OK) == 0 else {
            throw XCTSkip("no ALSA sequencer on this machine (/dev/snd/seq is missing); the surface is tested over JACK MIDI")
        }
        // The surface: a client of the test's own with one port both ways.
        var seq: OpaquePointer?
        XCTAssertGreaterThanOrEqual(snd_seq_open(&seq, "default", SND_SEQ_OPEN_DUPLEX, Int32(SND_SEQ_NONBLOCK)), 0)
        defer { snd_seq_close(seq) }
        snd_seq_set_client_name(seq, "td-mackie-test")
        let caps = SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ | SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE
        let port = snd_seq_create_simple_port(seq, "surface", UInt32(caps), UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION))
        XCTAssertGreaterThanOrEqual(port, 0)
        let address = "\(snd_seq_client_id(seq)):\(port)"
        let input = try ALSASequencerInput(source: address, surface: .mcu, clientName: "Tapedeck test")
        defer { input.close() }
        try input.start()
        let output = try ALSASequencerOutput(destination: address, clientName: "Tapedeck test out")
        defer { output.close() }

        // Fader 1 to 0 dB.
        var encoder: OpaquePointer?
        snd_midi_event_new(16, &encoder)
        defer { snd_midi_event_free(encoder) }
        var event = snd_seq_event_t()
        for byte in [UInt8(0xE0), 8, 100] { _ = snd_midi_event_encode_byte(encoder, Int32(byte), &event) }
        event.source.port = UInt8(port)
        event.dest.client = UInt8(SND_SEQ_ADDRESS_SUBSCRIBERS)
        event.dest.port = UInt8(SND_SEQ_ADDRESS_UNKNOWN)
        event.queue = UInt8(SND_SEQ_QUEUE_DIRECT)
        XCTAssertGreaterThanOrEqual(snd_seq_event_output_direct(seq, &event), 0)
        var heard: [MackieMessage] = []
        var deadline = Date().addingTimeInterval(5)
        while heard.isEmpty && Date() < deadline {
            heard = input.port.drainSurface()
            usleep(1000)
        }
        XCTAssertEqual(heard, [.fader(strip: 0, position: 12808)])
        XCTAssertNil(input.port.messages.pop(), "the surface's fader is not music for the audio thread")

        // Feedback: a scribble strip's SysEx arrives whole.
        let scribble = MackieControl.scribbleMessage(strip: 0, line: 0, text: "Drums")
        XCTAssertTrue(output.send(scribble))
        var decoder: OpaquePointer?
        snd_midi_event_new(256, &decoder)
        defer { snd_midi_event_free(decoder) }
        snd_midi_event_no_status(decoder, 1)
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        deadline = Date().addingTimeInterval(5)
        while got.count < scribble.count && Date() < deadline {
            var received: UnsafeMutablePointer<snd_seq_event_t>?
            if snd_seq_event_input(seq, &received) >= 0, let received {
                let n = Int(snd_midi_event_decode(decoder, &buffer, 256, received))
                if n > 0 { got += buffer[0..<n] }
            } else {
                usleep(1000)
            }
        }
        XCTAssertEqual(got, scribble)
    }
}
