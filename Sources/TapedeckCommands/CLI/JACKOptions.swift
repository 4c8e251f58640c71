import TapedeckCore
import TapedeckEngine
import TapedeckTransport
import TapedeckDevices

/// The JACK flags `record`, `play` and the screen share: `--connect`, `--timebase`,
/// `--jack-transport` (read here, declared in ``SharedOptions/jack``).
struct JACKOptions {
    var connection = JACKConnection.physical
    var timebaseMaster = false
    var transportSync = true
    /// JACK MIDI ports to connect to the client's `midi_in` (`--midi-in jack:PORT`) and to
    /// send its `midi_out` (thru) to (`--midi-out`).
    var midiSources: [String] = []
    var midiDestinations: [String] = []

    /// The defaults: connected to the physical ports, following JACK's transport.
    init() {}

    /// Reads the flags; a flag given for a device that is not JACK is a usage mistake.
    init(arguments: inout Arguments, deviceName: String) throws(UsageError) {
        let connect = try arguments.option("--connect")
        timebaseMaster = arguments.flag("--timebase")
        let sync = try arguments.option("--jack-transport")
        if let connect {
            guard !connect.isEmpty else { throw UsageError("\(arguments.command): --connect needs a pattern (or physical, none)") }
            connection = JACKConnection(text: connect)
        }
        transportSync = (sync ?? "sync") == "sync"
        if JACKRequest.clientName(inDeviceName: deviceName) == nil {
            let given = [connect.map { _ in "--connect" }, timebaseMaster ? "--timebase" : nil, sync.map { _ in "--jack-transport" }]
            if let flag = given.compactMap({ $0 }).first {
                throw UsageError("\(arguments.command): \(flag) is for JACK: add --device jack (or jack:CLIENT)")
            }
        }
        if timebaseMaster && !transportSync {
            throw UsageError("\(arguments.command): --timebase publishes bar and beat on JACK's transport: it needs --jack-transport sync")
        }
    }

    /// Connects the client's MIDI ports as `setup` asks (`--midi-in jack:PORT`, `--midi-out`).
    mutating func connectMIDI(_ setup: MIDISetup) {
        midiSources = setup.jackSources
        midiDestinations = setup.jackOutputs
    }

    /// The JACK client for device `name` (`jack`, `jack:CLIENT`): `inputs` and `outputs`
    /// ports, the inputs named after `tracks` (name, 1-based device channels) that listen, and
    /// a MIDI input and output (thru).
    func request(deviceName name: String, sampleRate: Int, inputs: Int, outputs: Int,
                 tracks: [(name: String, channels: [Int])], tempoMap: TempoMap) -> JACKRequest? {
        guard let client = JACKRequest.clientName(inDeviceName: name) else { return nil }
        return JACKRequest(deviceName: name, clientName: client,
                           ports: JACKPortLayout.named(inputs: inputs, outputs: outputs, tracks: tracks, midi: true),
                           connection: connection, sampleRate: sampleRate, transportSync: transportSync,
                           timebaseMaster: timebaseMaster, tempoMap: tempoMap, midiSources: midiSources,
                           midiDestinations: midiDestinations)
    }
}
