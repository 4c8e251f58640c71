import CJACK
import Synchronization
import TapedeckCore
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// What a JACK client should be.
public struct JACKRequest: Sendable {
    /// The name the user gave (`jack` or `jack:CLIENT`), for messages.
    public var deviceName: String
    /// The client's name (JACK makes it unique, `tapedeck-01`, when taken).
    public var clientName: String
    /// The ports, in device-channel order.
    public var ports: JACKPortLayout
    /// Where the ports connect once the client runs.
    public var connection: JACKConnection
    /// The session's rate: JACK's must equal it.
    public var sampleRate: Int
    /// Follow and drive JACK's transport.
    public var transportSync: Bool
    /// Publish bar, beat, tick and tempo as JACK's timebase master.
    public var timebaseMaster: Bool
    /// The tempo map published as timebase master.
    public var tempoMap: TempoMap?
    /// JACK MIDI ports (`jack_midiseq:out`) connected to the client's MIDI input.
    public var midiSources: [String] = []
    /// JACK MIDI ports the client's MIDI output (thru) is connected to.
    public var midiDestinations: [String] = []

    /// A request; by default the client follows and drives the transport, and is not the
    /// timebase master.
    public init(deviceName: String, clientName: String, ports: JACKPortLayout, connection: JACKConnection = .physical,
                sampleRate: Int, transportSync: Bool = true, timebaseMaster: Bool = false, tempoMap: TempoMap? = nil,
                midiSources: [String] = [], midiDestinations: [String] = []) {
        self.deviceName = deviceName
        self.clientName = clientName
        self.ports = ports
        self.connection = connection
        self.sampleRate = sampleRate
        self.transportSync = transportSync
        self.timebaseMaster = timebaseMaster
        self.tempoMap = tempoMap
        self.midiSources = midiSources
        self.midiDestinations = midiDestinations
    }

    /// The client name in a device name: `jack` → `tapedeck`, `jack:Rec` → `Rec`; nil when
    /// the name is not a JACK device.
    public static func clientName(inDeviceName name: String) -> String? {
        if name == "jack" { return "tapedeck" }
        guard name.hasPrefix("jack:") else { return nil }
        let client = String(name.dropFirst(5))
        return client.isEmpty ? "tapedeck" : client
    }
}

/// Tapedeck as a JACK client: JACK's process callback renders the engine
/// (``AudioDeviceClient``) in JACK's real-time thread, on ports of its own. The server sets
/// the rate and the buffer size; JACK's thread is already real-time, so no priority is
/// asked for.
///
/// - Xruns JACK reports are handed to the engine between cycles with the device time they
///   cost (from the gap in JACK's frame time), so they are counted and placed at their
///   frame as on ALSA.
/// - The server going away (killed, or dropping the client as a zombie) or its rate changing
///   fails the device: the engine ends its takes with everything kept, and
///   ``failureDescription(code:)`` says what happened in one line.
/// - A buffer-size change does not rebuild anything: a larger buffer is rendered as several
///   blocks of the size the engine was built for, a smaller one as one short block, in the
///   same cycle (no added latency); ``drainNotices()`` says so once.
/// - With MIDI ports in its layout (`midi_in`, `midi_out`), each cycle's incoming MIDI is
///   handed to the engine at its exact frames of the block that renders it, and the engine's
///   thru is written to `midi_out` at the same frames (``AudioDeviceMIDIClient``).
/// - With transport sync the engine follows JACK's transport (see ``HostTransportDevice``)
///   and takes part in its slow sync, so JACK rolls only once Tapedeck's disk streams are
///   ready where it rolls from.
public final class JACKDevice: HostTransportDevice, @unchecked Sendable {
    public private(set) var configuration: DeviceConfiguration
    /// The client's name on the server (`tapedeck`, or `tapedeck-01` when that was taken).
    public let clientName: String
    /// Full names of the client's audio ports (`tapedeck:Vocal_in`), inputs then outputs.
    public let portNames: [String]
    /// Full names of the client's MIDI ports (`tapedeck:midi_in`), inputs then outputs.
    public let midiPortNames: [String]
    public let followsHostTransport: Bool
    private let jack: OpaquePointer
    private let cycle: JACKCycle
    /// The ports' latency, kept current by JACK's latency callback.
    private let watch: JACKLatencyWatch
    /// `JACK`, or `PipeWire (JACK)` when libjack is PipeWire's.
    private let backend: String
    private let inputs: [OpaquePointer]
    private let outputs: [OpaquePointer]
    private var notices: [String] = []
    private var saidBufferFrames: Int
    private var closed = false
    private var started = false

    /// Opens a client on the running server (never starting one), registers the ports,
    /// activates it and connects the ports. Throws when no server runs, the rates differ or
    /// a port cannot be made. Control thread.
    public init(request: JACKRequest) throws(DeviceError) {
        td_jack_silence()
        // libjack refuses a longer name with the same status as a missing server.
        let longest = Int(jack_client_name_size()) - 1
        guard request.clientName.utf8.count <= longest else {
            throw DeviceError(device: String(request.deviceName.prefix(40)) + "…",
                              reason: "a JACK client name has at most \(longest) bytes, this one \(request.clientName.utf8.count)")
        }
        var status = jack_status_t(rawValue: 0)
        guard let jack = td_jack_client_open(request.clientName, JackNoStartServer, &status) else {
            throw JACKDevice.openError(request.deviceName, status: status)
        }
        let rate = Int(jack_get_sample_rate(jack))
        guard rate == request.sampleRate else {
            jack_client_close(jack)
            throw DeviceError(device: request.deviceName, reason: "the JACK server runs at \(rate) Hz but the session is \(request.sampleRate) Hz: start JACK at \(request.sampleRate) Hz (jackd -r \(request.sampleRate) …) or use a session at \(rate) Hz")
        }
        let period = Int(jack_get_buffer_size(jack))
        let ports: (inputs: [OpaquePointer], outputs: [OpaquePointer], midiInputs: [OpaquePointer], midiOutputs: [OpaquePointer])
        do { ports = try JACKPorts.register(request.ports, on: jack, device: request.deviceName) } catch {
            jack_client_close(jack)
            throw error
        }
        let cycle = JACKCycle(jack: jack, inputs: ports.inputs, outputs: ports.outputs, midiInputs: ports.midiInputs,
                              midiOutputs: ports.midiOutputs, enginePeriod: period, sampleRate: rate,
                              followsTransport: request.transportSync, timebaseMaster: request.timebaseMaster)
        let watch = JACKLatencyWatch(inputs: ports.inputs, outputs: ports.outputs, midiInputs: ports.midiInputs,
                                     midiOutputs: ports.midiOutputs)
        self.jack = jack
        self.cycle = cycle
        self.watch = watch
        backend = String(cString: jack_get_version_string()).contains("PipeWire") ? "PipeWire (JACK)" : "JACK"
        inputs = ports.inputs
        outputs = ports.outputs
        followsHostTransport = request.transportSync
        clientName = String(cString: jack_get_client_name(jack))
        saidBufferFrames = period
        if let map = request.tempoMap { Self.store(map, in: cycle) }
        // The cycle lives as long as the device; JACK holds it unretained.
        let arg = Unmanaged.passUnretained(cycle).toOpaque()
        jack_set_process_callback(jack, JACKCallbacks.process, arg)
        jack_set_xrun_callback(jack, JACKCallbacks.xrun, arg)
        jack_set_buffer_size_callback(jack, JACKCallbacks.bufferSize, arg)
        jack_set_sample_rate_callback(jack, JACKCallbacks.sampleRate, arg)
        jack_on_info_shutdown(jack, JACKCallbacks.shutdown, arg)
        // The watch lives as long as the cycle (see `close()`); JACK holds it unretained too.
        let watchArg = Unmanaged.passUnretained(watch).toOpaque()
        jack_set_latency_callback(jack, JACKLatencyCallbacks.latency, watchArg)
        jack_set_graph_order_callback(jack, JACKLatencyCallbacks.graphOrder, watchArg)
        if request.transportSync { jack_set_sync_callback(jack, JACKCallbacks.sync, arg) }
        if request.timebaseMaster && jack_set_timebase_callback(jack, 0, JACKCallbacks.timebase, arg) != 0 {
            notices.append("JACK refused Tapedeck as timebase master; bar and beat come from another program")
        }
        guard jack_activate(jack) == 0 else {
            jack_client_close(jack)
            throw DeviceError(device: request.deviceName, reason: "the JACK server would not activate the client '\(clientName)'")
        }
        notices += JACKPorts.connect(request.connection, client: jack, inputs: ports.inputs, outputs: ports.outputs)
        do {
            try JACKPorts.connectMIDI(sources: request.midiSources, destinations: request.midiDestinations, client: jack,
                                      inputs: ports.midiInputs, outputs: ports.midiOutputs, device: request.deviceName)
        } catch {
            jack_deactivate(jack)
            jack_client_close(jack)
            throw error
        }
        portNames = (ports.inputs + ports.outputs).map { String(cString: jack_port_name($0)) }
        midiPortNames = (ports.midiInputs + ports.midiOutputs).map { String(cString: jack_port_name($0)) }
        // JACK computes the ports' latency once they are connected (its callback tells the
        // watch); asked for here so the figures are settled before the first take.
        jack_recompute_total_latencies(jack)
        watch.readNow()
        let table = watch.current
        configuration = DeviceConfiguration(
            name: request.deviceName, sampleRate: rate, captureChannels: ports.inputs.count, playbackChannels: ports.outputs.count,
            periodFrames: period, periodCount: 1, bufferFrames: period,
            captureFormat: ports.inputs.isEmpty ? nil : .float32, playbackFormat: ports.outputs.isEmpty ? nil : .float32,
            captureLatencyFrames: table.capture.map(\.max).max() ?? 0,
            playbackLatencyFrames: table.playback.map(\.max).max() ?? 0, linked: true)
    }

    deinit { close() }

    /// Starts rendering `client` in JACK's process callback (the client already runs; JACK's
    /// thread is real-time already, so `realtimePriority` asks for nothing more). Control thread.
    public func start(client: AudioDeviceClient, realtimePriority: Bool) throws(DeviceError) {
        guard !closed, !started else { throw DeviceError(device: configuration.name, reason: "it is already running") }
        if cycle.failure.load(ordering: .acquiring) != 0 {
            throw DeviceError(device: configuration.name, reason: failureText())
        }
        started = true
        cycle.attach(client)
    }

    /// Ends the cycles (the engine hears its last one), deactivates and closes the client:
    /// its ports go away. Safe to call twice. Control thread.
    public func stop() { close() }

    private func close() {
        guard !closed else { return }
        closed = true
        cycle.stop()
        cycle.trace?.write()
        // A client whose server died is left alone: libjack has let go of what it points to
        // (a failed open since may even have torn its globals down), and touching it crashes.
        // Its threads may still call back with the cycle as their argument, so the cycle is
        // kept alive for good (a few kilobytes, once per server that died).
        let alive = cycle.callable.withLock { alive in
            let was = alive
            alive = false
            return was
        }
        guard alive else {
            _ = Unmanaged.passRetained(cycle)
            _ = Unmanaged.passRetained(watch)
            return
        }
        jack_deactivate(jack)
        jack_client_close(jack)
    }

    /// Each port's latency as JACK computed it last: an input's capture latency, an output's
    /// playback latency (the most of its range; a range whose ends differ is unsure).
    public var latency: DeviceLatency {
        let table = watch.current
        var report = DeviceLatency(backend: backend, captureFrames: table.capture.map(\.max), playbackFrames: table.playback.map(\.max),
                                   origin: "port latencies")
        report.unsureCaptureChannels = table.capture.indices.filter { table.capture[$0].min != table.capture[$0].max }.map { $0 + 1 }
        report.unsurePlaybackChannels = table.playback.indices.filter { table.playback[$0].min != table.playback[$0].max }.map { $0 + 1 }
        return report
    }

    /// Moves on whenever JACK recomputed its latencies or its graph changed.
    public var latencyGeneration: Int { watch.current.generation }

    /// The server's: the residual belongs to the hardware behind it, whichever client name
    /// (`jack`, `jack:Rec`) records. `JACK_DEFAULT_SERVER` names it (else `default`).
    public var calibrationName: String {
        let server = getenv("JACK_DEFAULT_SERVER").map { String(cString: $0) } ?? "default"
        return (backend == "JACK" ? "jack@" : "pipewire-jack@") + (server.isEmpty ? "default" : server)
    }

    /// Runs `body` on the client while it is alive (nil once it closed or its server went).
    /// Control thread.
    private func withClient<T>(_ body: (OpaquePointer) -> T) -> T? {
        guard !closed else { return nil }
        return cycle.callable.withLock { alive in alive ? body(jack) : nil }
    }

    /// What happened to the client, in one line.
    public func failureDescription(code: Int32) -> String {
        DeviceError(device: configuration.name, reason: failureText()).description
    }

    private func failureText() -> String {
        let detail = cycle.failureDetail.load(ordering: .acquiring)
        switch JACKFailure(rawValue: cycle.failure.load(ordering: .acquiring)) {
        case .rateChanged:
            return "the JACK server changed its rate to \(detail) Hz; the session is \(configuration.sampleRate) Hz (the takes were kept up to there)"
        case .serverGone:
            let words = String(cString: cycle.reason)
            let zombie = detail & Int64(JackClientZombie.rawValue) != 0
            let why = zombie ? "it dropped Tapedeck's client as too slow" : "the server went away"
            return "the JACK server stopped serving '\(clientName)': \(why)\(words.isEmpty ? "" : " (\(words))")"
        case nil:
            return "the JACK client '\(clientName)' stopped"
        }
    }

    /// News since the last call: ports that could not be connected, the timebase refused, a
    /// buffer-size change and what Tapedeck does about it. Control thread.
    public func drainNotices() -> [String] {
        let frames = cycle.bufferFrames.load(ordering: .relaxed)
        if frames != saidBufferFrames {
            saidBufferFrames = frames
            // JACK does not recompute the ports' latency on a new buffer size (only on a new
            // connection): asked here, so the next take uses the new figure.
            withClient { jack_recompute_total_latencies($0) }
            let engine = configuration.periodFrames
            let how = frames > engine ? "each cycle is rendered as \((frames + engine - 1) / engine) blocks of \(engine)"
                : frames < engine ? "each cycle is rendered as one block of \(frames)" : "as the engine was built"
            notices.append("JACK's buffer size is now \(frames) frames: \(how), nothing added to the latency")
        }
        defer { notices = [] }
        return notices
    }

    // MARK: - Transport

    public func requestHostStart() { withClient { jack_transport_start($0) } }

    public func requestHostStop() { withClient { jack_transport_stop($0) } }

    public func requestHostLocate(to frame: Int64) {
        // JACK's transport counts frames in 32 bits (24 hours at 48 kHz).
        withClient { _ = jack_transport_locate($0, UInt32(clamping: max(frame, 0))) }
    }

    public func publishTempo(_ map: TempoMap) { Self.store(map, in: cycle) }

    public var hostCycleFrames: Int { cycle.bufferFrames.load(ordering: .relaxed) }

    private static func store(_ map: TempoMap, in cycle: JACKCycle) {
        cycle.tempoBits.store(map.tempoBPM.bitPattern, ordering: .relaxed)
        if map.isConstant {
            cycle.tempoTableBits.store(0, ordering: .releasing)
        } else {
            let table = TempoTable(map)
            cycle.keptTempoTables.append(table)
            cycle.tempoTableBits.store(UInt(bitPattern: Unmanaged.passUnretained(table).toOpaque()), ordering: .releasing)
        }
        cycle.beatsPerBar.store(max(1, map.timeSignature.beatsPerBar), ordering: .relaxed)
        cycle.beatUnit.store(max(1, map.timeSignature.beatUnit), ordering: .relaxed)
    }

    // MARK: - Server

    /// Whether a JACK server answers (`JACK_DEFAULT_SERVER` or the default one), without
    /// starting one. Control thread; opens and closes a client (a few milliseconds).
    public static func serverIsRunning() -> Bool {
        td_jack_silence()
        var status = jack_status_t(rawValue: 0)
        guard let probe = td_jack_client_open("tapedeck-probe", JackNoStartServer, &status) else { return false }
        jack_client_close(probe)
        return true
    }

    private static func openError(_ device: String, status: jack_status_t) -> DeviceError {
        let bits = status.rawValue
        let server = getenv("JACK_DEFAULT_SERVER").map { "'\(String(cString: $0))'" } ?? "(the default one)"
        if bits & JackServerFailed.rawValue != 0 || bits & JackServerError.rawValue != 0 {
            return DeviceError(device: device, reason: "no JACK server is running \(server): start one (jackd -d alsa, qjackctl, or PipeWire's JACK) or pick an ALSA device")
        }
        if bits & JackVersionError.rawValue != 0 {
            return DeviceError(device: device, reason: "the JACK server speaks another protocol version than this libjack")
        }
        if bits & JackShmFailure.rawValue != 0 {
            return DeviceError(device: device, reason: "cannot reach the JACK server's shared memory (another user's server?)")
        }
        return DeviceError(device: device, reason: "the JACK server refused the client (status 0x\(String(bits, radix: 16)))")
    }
}
