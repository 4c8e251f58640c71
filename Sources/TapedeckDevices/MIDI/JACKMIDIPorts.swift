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
/// from JACK while the audio goes elsewhere (ALSA, or ALSA's jack plugin, as the tests do),
/// and for the port pairs of a Mackie surface's extenders (``Extender``) on either.
public final class JACKMIDIPorts: @unchecked Sendable {
    /// The port pair of one Mackie Control extender (XT): `mackie_xtN_in` and
    /// `mackie_xtN_out`, N from 1, as Ardour gives each extender a pair of its own
    /// ("mackie control in ext 2"). What arrives is the control side's (the XT's messages,
    /// ``MIDIInputPort/drainSurface()``), never the engine's; feedback goes out as it comes.
    public final class Extender: @unchecked Sendable {
        /// What the extender sends (drained by the control side only).
        public let input: MIDIInputPort
        /// Feedback to the extender.
        public let surfaceOutput = MIDISurfaceOutput()
        /// The two ports' short names (`mackie_xt1_in`, `mackie_xt1_out`).
        public let inName: String, outName: String
        fileprivate var inPort: OpaquePointer?
        fileprivate var outPort: OpaquePointer?

        init(number: Int, clientName: String) {
            inName = "mackie_xt\(number)_in"
            outName = "mackie_xt\(number)_out"
            input = MIDIInputPort(name: "JACK \(clientName):\(inName)", surface: .mcu)
        }
    }

    /// The extenders' port pairs, in strip order (the first XT's strips follow the main unit's).
    public private(set) var extenders: [Extender] = []
    /// What arrives on `midi_in`; attach it to the engine.
    public let input: MIDIInputPort
    /// What the engine sends to `midi_out`; attach it to the engine.
    public let output: MIDIOutputPort
    /// Feedback to a control surface (``ControlSurface/mackie``) the control side queues;
    /// sent on `midi_out` after the thru.
    public let surfaceOutput = MIDISurfaceOutput()
    /// The client's name as JACK gave it (it may add a number).
    public private(set) var clientName = ""
    private var client: OpaquePointer?
    private var inPort: OpaquePointer?
    private var outPort: OpaquePointer?
    private let active = Atomic<Bool>(false)
    private var sampleRate: Int64 = 48000
    // JACK's thread.
    /// When this client's cycles begin on CLOCK_MONOTONIC (see ``process(frames:)``).
    private var cycleClock = CycleClock()
    private var lastCycleStart: jack_nframes_t = 0
    private var haveLastCycle = false

    /// Opens the client on the running JACK server (never starts one), registers its two
    /// ports, activates it and connects `midi_in` from each of `sources` and `midi_out` to
    /// each of `destinations` (JACK port names, `jack_midiseq:out`). With `extenders` (one
    /// per Mackie XT: the JACK port its input is connected from and the one its output is
    /// connected to, either nil: connected by hand) it registers their port pairs too.
    /// Control thread.
    public init(clientName name: String = "tapedeck-midi", sources: [String] = [], destinations: [String] = [],
                surface: ControlSurface = .off,
                extenders extenderPorts: [(source: String?, destination: String?)] = []) throws(MIDIError) {
        td_jack_silence()
        var status = jack_status_t(0)
        guard let c = td_jack_client_open(name, JackNoStartServer, &status) else {
            throw MIDIError("cannot open a JACK client: \(status.rawValue & JackServerFailed.rawValue != 0 ? "no JACK server is running" : "JACK status 0x\(String(status.rawValue, radix: 16))")")
        }
        client = c
        clientName = String(cString: jack_get_client_name(c))
        sampleRate = Int64(max(jack_get_sample_rate(c), 1))
        input = MIDIInputPort(name: "JACK \(clientName):midi_in", surface: surface)
        output = MIDIOutputPort(name: "JACK \(clientName):midi_out")
        inPort = jack_port_register(c, "midi_in", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0)
        outPort = jack_port_register(c, "midi_out", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput.rawValue), 0)
        guard inPort != nil, outPort != nil else {
            close()
            throw MIDIError("cannot register JACK MIDI ports on \(clientName)")
        }
        for n in extenderPorts.indices {
            let x = Extender(number: n + 1, clientName: clientName)
            x.inPort = jack_port_register(c, x.inName, JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0)
            x.outPort = jack_port_register(c, x.outName, JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput.rawValue), 0)
            guard x.inPort != nil, x.outPort != nil else {
                close()
                throw MIDIError("cannot register JACK MIDI ports \(x.inName) and \(x.outName) on \(clientName)")
            }
            extenders.append(x)
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
            for (x, ports) in zip(extenders, extenderPorts) {
                if let s = ports.source, !s.isEmpty { try connect(from: s, to: "\(clientName):\(x.inName)") }
                if let d = ports.destination, !d.isEmpty { try connect(from: "\(clientName):\(x.outName)", to: d) }
            }
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
        for x in extenders { x.inPort = nil; x.outPort = nil }
    }

    /// JACK's process callback: incoming messages to the input port, stamped; due outgoing
    /// messages to `midi_out`.
    ///
    /// A message is stamped with when its frame of this cycle happened: the cycle's start as
    /// this client's own delay-locked loop follows it (``CycleClock``, fed the moments the
    /// cycles run and JACK's frame count between them), plus its offset. Not with JACK's
    /// `jack_frames_to_time`: after JACK's own thread ran late (measured on the dummy
    /// server under load: a cycle 106 ms after the one before it with only a period's frames
    /// between them), JACK's filtered mapping put this client's cycles up to 89 ms before
    /// they ran, off by tens of milliseconds for seconds after (overshooting by 20 ms), and
    /// so did every note's stamp — while the device the engine plays on, woken by the same
    /// late cycles, was not. The loop starts afresh on such a jump and follows wake-ups
    /// otherwise, as the engine's own loop does for a device that cannot tell its clock.
    ///
    /// JACK's real-time thread: no allocation, no locks.
    private func process(frames: jack_nframes_t) {
        guard active.load(ordering: .acquiring), let client, let inPort, let outPort else { return }
        let now = monotonicNanoseconds()
        let cycleStart = jack_last_frame_time(client)
        // Frame time wraps at 2^32; the signed difference of two readings does not. (A late
        // cycle may read the next one's frame time, and the next reads it again: 0 frames.)
        let elapsedFrames = haveLastCycle ? max(0, Int64(Int32(bitPattern: cycleStart &- lastCycleStart))) : Int64(frames)
        haveLastCycle = true
        lastCycleStart = cycleStart
        cycleClock.tick(now: now, elapsedNanoseconds: elapsedFrames * 1_000_000_000 / sampleRate,
                        periodNanoseconds: Int64(frames) * 1_000_000_000 / sampleRate)
        let began = cycleClock.window.endNanoseconds
        if let buffer = jack_port_get_buffer(inPort, frames) {
            let count = jack_midi_get_event_count(buffer)
            var event = jack_midi_event_t()
            for i in 0..<count where jack_midi_event_get(&event, buffer, i) == 0 {
                let ns = began + Int64(event.time) * 1_000_000_000 / sampleRate
                input.receive(UnsafeBufferPointer(start: event.buffer, count: event.size), atNanoseconds: ns)
            }
        }
        guard let buffer = jack_port_get_buffer(outPort, frames) else { return }
        jack_midi_clear_buffer(buffer)
        var last: jack_nframes_t = 0
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3) { bytes in
            while let m = output.messages.peek() {
                // Its frame in this cycle, on the clock the inputs are stamped with.
                let at = (m.nanoseconds - began) * sampleRate / 1_000_000_000
                // Due in a later cycle: it waits (times past are sent at once).
                if at >= Int64(frames) { break }
                _ = output.messages.pop()
                let frame = jack_nframes_t(min(max(Int64(last), at), Int64(frames) - 1))
                bytes[0] = m.status; bytes[1] = m.data1; bytes[2] = m.data2
                if jack_midi_event_write(buffer, frame, bytes.baseAddress, 1 + MIDISequence.dataBytes(status: m.status)) == 0 { last = frame }
            }
        }
        // Surface feedback at the last frame written (a full buffer keeps the rest for the
        // next cycle).
        while surfaceOutput.sendNext({ raw in
            guard let p = raw.baseAddress else { return true }
            return jack_midi_event_write(buffer, last, p.assumingMemoryBound(to: UInt8.self), raw.count) == 0
        }) {}
        for x in extenders { processExtender(x, frames: frames, began: began) }
    }

    /// An extender's cycle: what it sent to its input port (the control side's), its
    /// feedback out of its output at the cycle's start. JACK's real-time thread: no
    /// allocation, no locks.
    private func processExtender(_ x: Extender, frames: jack_nframes_t, began: Int64) {
        guard let inPort = x.inPort, let outPort = x.outPort else { return }
        if let buffer = jack_port_get_buffer(inPort, frames) {
            var event = jack_midi_event_t()
            for i in 0..<jack_midi_get_event_count(buffer) where jack_midi_event_get(&event, buffer, i) == 0 {
                x.input.receive(UnsafeBufferPointer(start: event.buffer, count: event.size),
                                atNanoseconds: began + Int64(event.time) * 1_000_000_000 / sampleRate)
            }
        }
        guard let buffer = jack_port_get_buffer(outPort, frames) else { return }
        jack_midi_clear_buffer(buffer)
        while x.surfaceOutput.sendNext({ raw in
            guard let p = raw.baseAddress else { return true }
            return jack_midi_event_write(buffer, 0, p.assumingMemoryBound(to: UInt8.self), raw.count) == 0
        }) {}
    }
}
