import CJACK
import Synchronization
import TapedeckCore
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// MIDI ports on a JACK server, beside whatever device plays the audio: a JACK client of its
/// own (`tapedeck-midi`) with an input port `midi_in` and an output port `midi_out`. Its
/// process callback — JACK's real-time thread — hands each incoming message to its
/// ``MIDIInputPort`` stamped with the monotonic time of its frame, and writes what the engine
/// sends on (MIDI thru) at the frames its times fall on.
///
/// When the audio itself runs on JACK (the JACK backend), the device's own MIDI ports feed
/// the engine within the cycle instead (``AudioDeviceMIDIClient``); this client is for MIDI
/// from JACK while the audio goes elsewhere (ALSA, or ALSA's jack plugin, as the tests do).
public final class JACKMIDIPorts: @unchecked Sendable {
    /// What arrives on `midi_in`; attach it to the engine.
    public let input: MIDIInputPort
    /// What the engine sends to `midi_out`; attach it to the engine.
    public let output: MIDIOutputPort
    /// The client's name as JACK gave it (it may add a number).
    public private(set) var clientName = ""
    private var client: OpaquePointer?
    private var inPort: OpaquePointer?
    private var outPort: OpaquePointer?
    private let active = Atomic<Bool>(false)

    /// Opens the client on the running JACK server (never starts one), registers its two
    /// ports, activates it and connects `midi_in` from each of `sources` and `midi_out` to
    /// each of `destinations` (JACK port names, `jack_midiseq:out`). Control thread.
    public init(clientName name: String = "tapedeck-midi", sources: [String] = [], destinations: [String] = [],
                surface: ControlSurface = .off) throws(MIDIError) {
        td_jack_silence()
        var status = jack_status_t(0)
        guard let c = td_jack_client_open(name, JackNoStartServer, &status) else {
            throw MIDIError("cannot open a JACK client: \(status.rawValue & JackServerFailed.rawValue != 0 ? "no JACK server is running" : "JACK status 0x\(String(status.rawValue, radix: 16))")")
        }
        client = c
        clientName = String(cString: jack_get_client_name(c))
        input = MIDIInputPort(name: "JACK \(clientName):midi_in", surface: surface)
        output = MIDIOutputPort(name: "JACK \(clientName):midi_out")
        inPort = jack_port_register(c, "midi_in", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0)
        outPort = jack_port_register(c, "midi_out", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput.rawValue), 0)
        guard inPort != nil, outPort != nil else {
            close()
            throw MIDIError("cannot register JACK MIDI ports on \(clientName)")
        }
        let process: JackProcessCallback = { frames, arg in
            guard let arg else { return 0 }
            Unmanaged<JACKMIDIPorts>.fromOpaque(arg)._withUnsafeGuaranteedRef { $0.process(frames: frames) }
            return 0
        }
        jack_set_process_callback(c, process, Unmanaged.passUnretained(self).toOpaque())
        guard jack_activate(c) == 0 else {
            close()
            throw MIDIError("cannot activate the JACK client \(clientName)")
        }
        active.store(true, ordering: .releasing)
        do {
            for s in sources { try connect(from: s, to: "\(clientName):midi_in") }
            for d in destinations { try connect(from: "\(clientName):midi_out", to: d) }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private func connect(from: String, to: String) throws(MIDIError) {
        guard let client else { return }
        let r = jack_connect(client, from, to)
        guard r == 0 || r == EEXIST else {
            let ports = JACKPorts.names(client, pattern: nil, flags: 0, midi: true)
            throw MIDIError("cannot connect JACK port \(from.terminalSafe) to \(to.terminalSafe)\(ports.isEmpty ? "" : " (MIDI ports: \(ports.joined(separator: ", ")))")")
        }
    }

    /// The MIDI output ports of the running JACK server (what `--midi-in jack:PORT` takes),
    /// or nil when no server runs. Opens a client for the moment, never starting a server.
    public static func sourcePorts() -> [String]? {
        td_jack_silence()
        var status = jack_status_t(0)
        guard let c = td_jack_client_open("tapedeck-list", JackNoStartServer, &status) else { return nil }
        defer { jack_client_close(c) }
        return JACKPorts.names(c, pattern: nil, flags: JackPortIsOutput.rawValue, midi: true)
    }

    /// Deactivates and closes the client. Control thread; safe to call twice.
    public func close() {
        active.store(false, ordering: .releasing)
        if let client {
            jack_deactivate(client)
            jack_client_close(client)
        }
        client = nil
        inPort = nil
        outPort = nil
    }

    /// JACK's process callback: incoming messages to the input port, stamped; due outgoing
    /// messages to `midi_out`.
    ///
    /// JACK's real-time thread: no allocation, no locks.
    private func process(frames: jack_nframes_t) {
        guard active.load(ordering: .acquiring), let client, let inPort, let outPort else { return }
        // JACK's clock is CLOCK_MONOTONIC_RAW: map its times onto ours through both read now.
        let offset = monotonicNanoseconds() - Int64(jack_get_time()) * 1000
        let cycleStart = jack_last_frame_time(client)
        if let buffer = jack_port_get_buffer(inPort, frames) {
            let count = jack_midi_get_event_count(buffer)
            var event = jack_midi_event_t()
            for i in 0..<count where jack_midi_event_get(&event, buffer, i) == 0 {
                // Stamped with the time of its frame in this cycle (JACK's own placement): a time
                // at or after now, so the engine never finds it late and keeps its spacing exactly.
                let frame = cycleStart &+ event.time
                let ns = Int64(jack_frames_to_time(client, frame)) * 1000 + offset
                input.receive(UnsafeBufferPointer(start: event.buffer, count: event.size), atNanoseconds: ns)
            }
        }
        guard let buffer = jack_port_get_buffer(outPort, frames) else { return }
        jack_midi_clear_buffer(buffer)
        var last: jack_nframes_t = 0
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3) { bytes in
            while let m = output.messages.peek() {
                let due = jack_time_to_frames(client, jack_time_t(max(0, (m.nanoseconds - offset) / 1000)))
                let at = due &- cycleStart
                // Due in a later cycle: it waits (times past are sent at once).
                if Int32(bitPattern: at) >= Int32(frames) { break }
                _ = output.messages.pop()
                let frame = min(max(last, Int32(bitPattern: at) < 0 ? 0 : at), frames - 1)
                bytes[0] = m.status; bytes[1] = m.data1; bytes[2] = m.data2
                if jack_midi_event_write(buffer, frame, bytes.baseAddress, 1 + MIDISequence.dataBytes(status: m.status)) == 0 { last = frame }
            }
        }
    }
}
