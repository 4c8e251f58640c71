import CALSA
import Synchronization
import TapedeckCore
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// Why a MIDI source could not be opened or connected; one line for the user.
public struct MIDIError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The line.
    public var description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// One port of another ALSA sequencer client that sends MIDI (a keyboard, a controller, a
/// program), as `tapedeck devices --midi` lists them.
public struct ALSASequencerSource: Sendable, Equatable {
    /// `client:port`, e.g. `20:0`.
    public var address: String
    /// The client's name (`Keystation 49`).
    public var clientName: String
    /// The port's name.
    public var portName: String
    /// Whether it is hardware (connected by default) rather than a program.
    public var isHardware: Bool
}

/// MIDI input from the ALSA sequencer: Tapedeck appears as a sequencer client (`Tapedeck`)
/// with an input port (`MIDI in`), connected from the port `--midi-in` names or else from
/// every hardware port. A thread of its own waits on the sequencer, stamps each message with
/// the monotonic clock as it arrives, turns the sequencer's event into MIDI bytes with
/// libasound's own encoder (`snd_midi_event_decode`), and hands them to its ``MIDIInputPort``.
///
/// Machines without the sequencer (no `/dev/snd/seq`: the kernel's snd-seq module is not
/// loaded) cannot open it; the error says so.
public final class ALSASequencerInput: @unchecked Sendable {
    /// Where its messages go; attach it to the engine.
    public let port: MIDIInputPort
    /// The ports connected, as `client:port name`.
    public private(set) var connected: [String] = []
    private var seq: OpaquePointer?
    private var decoder: OpaquePointer?
    private var myPort: Int32 = -1
    private var thread: RealtimeThread?
    private let quit = Atomic<Bool>(false)
    private var wakePipe: [Int32] = [-1, -1]

    /// Opens the sequencer and connects from `source` (an address `20:0`, or a client name
    /// as `aconnect -l` shows it), or from every hardware port when nil. Control thread.
    public init(source: String?, surface: ControlSurface = .off, clientName: String = "Tapedeck") throws(MIDIError) {
        try ALSASequencerInput.checkDevice()
        var handle: OpaquePointer?
        let opened = snd_seq_open(&handle, "default", SND_SEQ_OPEN_INPUT, 0)
        guard opened >= 0, let handle else {
            let why = String(cString: snd_strerror(opened))
            let hint = access("/dev/snd/seq", F_OK) != 0 ? " (/dev/snd/seq is missing: the snd-seq kernel module is not loaded)" : ""
            throw MIDIError("cannot open the ALSA sequencer: \(why)\(hint)")
        }
        seq = handle
        snd_seq_set_client_name(handle, clientName)
        myPort = snd_seq_create_simple_port(handle, "MIDI in", UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE),
                                            UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION))
        guard myPort >= 0 else {
            snd_seq_close(handle)
            seq = nil
            throw MIDIError("cannot create the ALSA sequencer port: \(String(cString: snd_strerror(myPort)))")
        }
        var dev: OpaquePointer?
        snd_midi_event_new(512, &dev)
        decoder = dev
        if let dev { snd_midi_event_no_status(dev, 1) }
        port = MIDIInputPort(name: "ALSA \(clientName):MIDI in", surface: surface)
        do {
            if let source {
                var addr = snd_seq_addr_t()
                let parsed = snd_seq_parse_address(handle, &addr, source)
                guard parsed >= 0 else {
                    let names = (try? ALSASequencerInput.sources(seq: handle))?.map { "\($0.address) \($0.clientName)" } ?? []
                    throw MIDIError("no ALSA sequencer port '\(source.terminalSafe)'\(names.isEmpty ? " (none sends MIDI)" : " (ports: \(names.joined(separator: ", ")))")")
                }
                try connect(addr.client, addr.port, name: source)
            } else {
                for s in try ALSASequencerInput.sources(seq: handle) where s.isHardware {
                    let parts = s.address.split(separator: ":").compactMap { Int32($0) }
                    try? connect(UInt8(parts[0]), UInt8(parts[1]), name: "\(s.address) \(s.clientName)")
                }
            }
        } catch {
            close()
            throw (error as? MIDIError) ?? MIDIError("\(error)")
        }
    }

    deinit { close() }

    private func connect(_ client: UInt8, _ port: UInt8, name: String) throws(MIDIError) {
        guard let seq else { return }
        let r = snd_seq_connect_from(seq, myPort, Int32(client), Int32(port))
        guard r >= 0 else { throw MIDIError("cannot connect from ALSA sequencer port \(name.terminalSafe): \(String(cString: snd_strerror(r)))") }
        connected.append(name)
    }

    /// Refuses at once where there is no sequencer device (libasound would print its own
    /// line about it on stderr before failing).
    private static func checkDevice() throws(MIDIError) {
        guard access("/dev/snd/seq", F_OK) == 0 else {
            throw MIDIError("cannot open the ALSA sequencer: /dev/snd/seq is missing (the snd-seq kernel module is not loaded)")
        }
    }

    /// Every port of every other client that sends MIDI.
    public static func sources() throws(MIDIError) -> [ALSASequencerSource] {
        try checkDevice()
        var handle: OpaquePointer?
        let r = snd_seq_open(&handle, "default", SND_SEQ_OPEN_INPUT, 0)
        guard r >= 0, let handle else { throw MIDIError("cannot open the ALSA sequencer: \(String(cString: snd_strerror(r)))") }
        defer { snd_seq_close(handle) }
        return try sources(seq: handle)
    }

    private static func sources(seq: OpaquePointer) throws(MIDIError) -> [ALSASequencerSource] {
        var clientInfo: OpaquePointer?, portInfo: OpaquePointer?
        snd_seq_client_info_malloc(&clientInfo)
        snd_seq_port_info_malloc(&portInfo)
        defer { snd_seq_client_info_free(clientInfo); snd_seq_port_info_free(portInfo) }
        guard let clientInfo, let portInfo else { throw MIDIError("out of memory listing the sequencer's ports") }
        let me = snd_seq_client_id(seq)
        var out: [ALSASequencerSource] = []
        snd_seq_client_info_set_client(clientInfo, -1)
        while snd_seq_query_next_client(seq, clientInfo) >= 0 {
            let client = snd_seq_client_info_get_client(clientInfo)
            // 0 is the system client (timer, announce); our own ports are not sources.
            guard client != 0, client != me else { continue }
            let clientName = String(cString: snd_seq_client_info_get_name(clientInfo))
            snd_seq_port_info_set_client(portInfo, client)
            snd_seq_port_info_set_port(portInfo, -1)
            while snd_seq_query_next_port(seq, portInfo) >= 0 {
                let caps = snd_seq_port_info_get_capability(portInfo)
                let wanted = UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)
                guard caps & wanted == wanted, caps & UInt32(SND_SEQ_PORT_CAP_NO_EXPORT) == 0 else { continue }
                let type = snd_seq_port_info_get_type(portInfo)
                let port = snd_seq_port_info_get_port(portInfo)
                let isThrough = clientName.hasPrefix("Midi Through")
                out.append(ALSASequencerSource(address: "\(client):\(port)", clientName: clientName,
                                               portName: String(cString: snd_seq_port_info_get_name(portInfo)),
                                               isHardware: !isThrough && type & UInt32(SND_SEQ_PORT_TYPE_HARDWARE) != 0))
            }
        }
        return out
    }

    /// Starts the thread that reads the sequencer. Control thread.
    public func start() throws(MIDIError) {
        guard thread == nil, seq != nil else { return }
        quit.store(false, ordering: .relaxed)
        guard pipe(&wakePipe) == 0 else { throw MIDIError("cannot start the MIDI thread: \(String(cString: strerror(errno)))") }
        let t = RealtimeThread(name: "tapedeck-midi") { [self] _ in run() }
        // Just below the audio thread (70): a message waits for nothing but the audio.
        guard t.start(priority: 65, realtime: true) else { throw MIDIError("cannot start the MIDI thread") }
        thread = t
    }

    /// Ends the thread and closes the sequencer. Control thread; safe to call twice.
    public func close() {
        quit.store(true, ordering: .releasing)
        if wakePipe[1] >= 0 { var b: UInt8 = 1; _ = write(wakePipe[1], &b, 1) }
        thread?.join()
        thread = nil
        for fd in wakePipe where fd >= 0 { Glibc.close(fd) }
        wakePipe = [-1, -1]
        if let decoder { snd_midi_event_free(decoder) }
        decoder = nil
        if let seq { snd_seq_close(seq) }
        seq = nil
    }

    /// The MIDI thread: waits on the sequencer (and the wake pipe), stamps and hands on.
    private func run() {
        guard let seq, let decoder else { return }
        // A negative count is an error code: poll the wake pipe alone rather than trap.
        let count = max(0, Int(snd_seq_poll_descriptors_count(seq, Int16(POLLIN))))
        var fds = [pollfd](repeating: pollfd(), count: count + 1)
        _ = fds.withUnsafeMutableBufferPointer { snd_seq_poll_descriptors(seq, $0.baseAddress, UInt32(count), Int16(POLLIN)) }
        fds[count] = pollfd(fd: wakePipe[0], events: Int16(POLLIN), revents: 0)
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 512)
        defer { bytes.deallocate() }
        var sysex: [UInt8] = []
        sysex.reserveCapacity(512)
        while !quit.load(ordering: .acquiring) {
            guard poll(&fds, nfds_t(fds.count), 1000) > 0 else { continue }
            while !quit.load(ordering: .relaxed) {
                var event: UnsafeMutablePointer<snd_seq_event_t>?
                let r = snd_seq_event_input(seq, &event)
                guard r >= 0, let event else { break }
                let now = monotonicNanoseconds()
                let n = Int(snd_midi_event_decode(decoder, bytes, 512, event))
                if n > 0 && (bytes[0] == 0xF0 || !sysex.isEmpty) {
                    // SysEx may come in pieces: gather up to its F7.
                    sysex.append(contentsOf: UnsafeBufferPointer(start: bytes, count: n))
                    if sysex.last == 0xF7 || sysex.count > 4096 {
                        sysex.withUnsafeBufferPointer { port.receive($0, atNanoseconds: now) }
                        sysex.removeAll(keepingCapacity: true)
                    }
                } else if n > 0 {
                    port.receive(UnsafeBufferPointer(start: bytes, count: n), atNanoseconds: now)
                }
                // After every event, SysEx and port notices included: the sequencer is open
                // in blocking mode, so reading with nothing buffered would wait for the next
                // event and never see `quit` (closing hung after an MMC button).
                if snd_seq_event_input_pending(seq, 0) == 0 { break }
            }
        }
    }
}
