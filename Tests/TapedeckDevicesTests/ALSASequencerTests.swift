import XCTest
import CALSA
import TapedeckCore
@testable import TapedeckEngine
@testable import TapedeckDevices

/// MIDI input from the ALSA sequencer, against the real kernel sequencer. Machines without it
/// (no /dev/snd/seq: the snd-seq module is not loaded, as in containers and on CI) skip these
/// tests, saying so.
final class ALSASequencerTests: XCTestCase {
    private func requireSequencer() throws {
        guard access("/dev/snd/seq", R_OK | W_OK) == 0 else {
            throw XCTSkip("no ALSA sequencer on this machine (/dev/snd/seq is missing: the snd-seq kernel module is not loaded); the sequencer input is tested where it exists")
        }
    }

    func testWithoutASequencerOpeningSaysWhy() throws {
        guard access("/dev/snd/seq", F_OK) != 0 else { throw XCTSkip("this machine has a sequencer") }
        XCTAssertThrowsError(try ALSASequencerInput(source: nil)) { error in
            XCTAssertTrue("\(error)".contains("cannot open the ALSA sequencer") && "\(error)".contains("snd-seq"), "\(error)")
        }
    }

    func testANoteSentByAnotherSequencerClientArrivesStampedOnThePort() throws {
        try requireSequencer()
        let input = try ALSASequencerInput(source: nil, clientName: "Tapedeck test")
        defer { input.close() }
        try input.start()
        // A sender: a client of its own with an output port, subscribed to Tapedeck's input.
        var seq: OpaquePointer?
        XCTAssertGreaterThanOrEqual(snd_seq_open(&seq, "default", SND_SEQ_OPEN_OUTPUT, 0), 0)
        defer { snd_seq_close(seq) }
        let port = snd_seq_create_simple_port(seq, "out", UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ),
                                              UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION))
        var addr = snd_seq_addr_t()
        XCTAssertGreaterThanOrEqual(snd_seq_parse_address(seq, &addr, "Tapedeck test"), 0)
        XCTAssertGreaterThanOrEqual(snd_seq_connect_to(seq, port, Int32(addr.client), Int32(addr.port)), 0)
        var encoder: OpaquePointer?
        snd_midi_event_new(16, &encoder)
        defer { snd_midi_event_free(encoder) }
        var event = snd_seq_event_t()
        let before = monotonicNanoseconds()
        for byte in [UInt8(0x90), 60, 100] { _ = snd_midi_event_encode_byte(encoder, Int32(byte), &event) }
        event.source.port = UInt8(port)
        event.dest.client = UInt8(SND_SEQ_ADDRESS_SUBSCRIBERS)
        event.dest.port = UInt8(SND_SEQ_ADDRESS_UNKNOWN)
        event.queue = UInt8(SND_SEQ_QUEUE_DIRECT)
        XCTAssertGreaterThanOrEqual(snd_seq_event_output_direct(seq, &event), 0)
        let deadline = Date().addingTimeInterval(2)
        var got: TimedMIDIMessage?
        while got == nil && Date() < deadline {
            got = input.port.messages.pop()
            usleep(1000)
        }
        let m = try XCTUnwrap(got, "the note reached the port")
        XCTAssertEqual([m.status, m.data1, m.data2], [0x90, 60, 100])
        XCTAssertGreaterThanOrEqual(m.nanoseconds, before, "stamped when it arrived")
        XCTAssertLessThan(m.nanoseconds - before, 100_000_000)
    }
}
