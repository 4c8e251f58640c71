import CALSA
import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// MIDI out to one ALSA sequencer port: feedback to a control surface (Mackie Control's motor
/// faders, LEDs and scribble strips). A client of its own (`Tapedeck`, port `Surface out`),
/// opened non-blocking so a surface that stops reading never stalls the screen: what its
/// queue cannot take is dropped (the next change sends afresh).
///
/// Control thread only (the screen's): each message goes out directly, no queue, no thread.
public final class ALSASequencerOutput: @unchecked Sendable {
    /// The port it sends to, as asked for (`20:0`, a client's name).
    public let destination: String
    private var seq: OpaquePointer?
    private var encoder: OpaquePointer?
    private var myPort: Int32 = -1

    /// Opens the sequencer and connects to `destination` (an address `20:0`, or a client name
    /// as `aconnect -l` shows it). Control thread.
    public init(destination: String, clientName: String = "Tapedeck") throws(MIDIError) {
        self.destination = destination
        guard access("/dev/snd/seq", F_OK) == 0 else {
            throw MIDIError("cannot open the ALSA sequencer: /dev/snd/seq is missing (the snd-seq kernel module is not loaded)")
        }
        var handle: OpaquePointer?
        let opened = snd_seq_open(&handle, "default", SND_SEQ_OPEN_OUTPUT, Int32(SND_SEQ_NONBLOCK))
        guard opened >= 0, let handle else { throw MIDIError("cannot open the ALSA sequencer: \(String(cString: snd_strerror(opened)))") }
        seq = handle
        snd_seq_set_client_name(handle, clientName)
        myPort = snd_seq_create_simple_port(handle, "Surface out", UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ),
                                            UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION))
        var enc: OpaquePointer?
        snd_midi_event_new(256, &enc)
        encoder = enc
        var addr = snd_seq_addr_t()
        guard myPort >= 0, encoder != nil else {
            close()
            throw MIDIError("cannot create the ALSA sequencer's output port")
        }
        guard snd_seq_parse_address(handle, &addr, destination) >= 0 else {
            close()
            throw MIDIError("no ALSA sequencer port '\(destination.terminalSafe)' to send surface feedback to")
        }
        let r = snd_seq_connect_to(handle, myPort, Int32(addr.client), Int32(addr.port))
        guard r >= 0 else {
            close()
            throw MIDIError("cannot connect to ALSA sequencer port \(destination.terminalSafe): \(String(cString: snd_strerror(r)))")
        }
    }

    deinit { close() }

    /// Sends one whole message (a channel message or SysEx from `F0` to `F7`); false when it
    /// could not go (not a message, the port closed, the receiver's queue full). Control thread.
    @discardableResult
    public func send(_ message: [UInt8]) -> Bool {
        guard let seq, let encoder, !message.isEmpty else { return false }
        snd_midi_event_reset_encode(encoder)
        var event = snd_seq_event_t()
        return message.withUnsafeBufferPointer { bytes -> Bool in
            // The encoder keeps SysEx in its own buffer, which the event points at until the
            // next encode: sent before that.
            guard snd_midi_event_encode(encoder, bytes.baseAddress, bytes.count, &event) == bytes.count else { return false }
            event.source.port = UInt8(myPort)
            event.dest.client = UInt8(SND_SEQ_ADDRESS_SUBSCRIBERS)
            event.dest.port = UInt8(SND_SEQ_ADDRESS_UNKNOWN)
            event.queue = UInt8(SND_SEQ_QUEUE_DIRECT)
            return snd_seq_event_output_direct(seq, &event) >= 0
        }
    }

    /// Closes the port. Control thread; safe to call twice.
    public func close() {
        if let encoder { snd_midi_event_free(encoder) }
        encoder = nil
        if let seq { snd_seq_close(seq) }
        seq = nil
    }
}
