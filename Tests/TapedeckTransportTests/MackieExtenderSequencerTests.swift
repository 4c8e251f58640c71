import XCTest
import CALSA
import TapedeckCore
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// A Mackie Control XT on the ALSA sequencer (`--midi-xt PORT`): the transport opens a
/// sequencer client of the XT's own, hears its fader as the XT's (not the main unit's, not
/// music) and sends its feedback back to its port whole. Skipped where there is no sequencer
/// (the XT runs end to end over JACK MIDI in MackieEndToEndTests).
final class MackieExtenderSequencerTests: XCTestCase {
    func testAnXTOnTheSequencerIsHeardAndAnsweredOnItsOwnPort() throws {
        guard access("/dev/snd/seq", R_OK | W_OK) == 0 else {
            throw XCTSkip("no ALSA sequencer on this machine (/dev/snd/seq is missing); the XT is tested over JACK MIDI")
        }
        // The XT: a client of the test's own with one port both ways.
        var seq: OpaquePointer?
        XCTAssertGreaterThanOrEqual(snd_seq_open(&seq, "default", SND_SEQ_OPEN_DUPLEX, Int32(SND_SEQ_NONBLOCK)), 0)
        defer { snd_seq_close(seq) }
        snd_seq_set_client_name(seq, "td-xt-test")
        let caps = SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ | SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE
        let port = snd_seq_create_simple_port(seq, "xt", UInt32(caps), UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION))
        XCTAssertGreaterThanOrEqual(port, 0)

        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try TransportFixture.session(in: dir, signals: [])
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0, paced: true)
        var options = TransportOptions()
        options.midi.surface = .mcu
        options.midi.extenders = [.alsa("\(snd_seq_client_id(seq)):\(port)")]
        let transport = try Transport(session: session, folder: folder, device: device, options: options, startsDevice: false)
        defer { transport.close() }
        XCTAssertEqual(transport.surfaceExtenderCount, 1)

        // The XT's fader 1 to 0 dB.
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
            heard = transport.collectExtenderMessages(0)
            usleep(1000)
        }
        XCTAssertEqual(heard, [.fader(strip: 0, position: 12808)])
        XCTAssertEqual(transport.collectSurfaceMessages(), [], "the XT's fader is not the main unit's")

        // Feedback: the XT's scribble strip, in its header, arrives whole on its port.
        let scribble = MackieControl.scribbleMessage(strip: 0, line: 0, text: "Track 9", device: MackieControl.Device.xt)
        transport.sendToExtender(0, [scribble])
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
