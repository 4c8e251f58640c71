import CJACK
import TapedeckCore
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// The ports Tapedeck's JACK client registers, by short name (`Vocal_in`, `out_L`), in
/// device-channel order: input k is capture channel k + 1, output k playback channel k + 1.
///
/// Every port the client has is registered in ``JACKPorts/register(_:on:)`` from this one
/// list, so adding a kind of port is a field here and a loop there.
public struct JACKPortLayout: Sendable, Equatable {
    /// Audio inputs, one per capture channel.
    public var audioInputs: [String]
    /// Audio outputs, one per playback channel.
    public var audioOutputs: [String]
    /// MIDI inputs: what arrives is handed to the engine in the same cycle, at its frame.
    public var midiInputs: [String]
    /// MIDI outputs: each gets what the engine sends on (MIDI thru), at its frame.
    public var midiOutputs: [String]

    /// A layout with these names (made unique and JACK-safe).
    public init(audioInputs: [String], audioOutputs: [String], midiInputs: [String] = [], midiOutputs: [String] = []) {
        var taken = Set<String>()
        self.audioInputs = audioInputs.map { JACKPortLayout.unique(JACKPortLayout.safe($0), taken: &taken) }
        self.audioOutputs = audioOutputs.map { JACKPortLayout.unique(JACKPortLayout.safe($0), taken: &taken) }
        self.midiInputs = midiInputs.map { JACKPortLayout.unique(JACKPortLayout.safe($0), taken: &taken) }
        self.midiOutputs = midiOutputs.map { JACKPortLayout.unique(JACKPortLayout.safe($0), taken: &taken) }
    }

    /// `inputs` capture ports named after the tracks that listen to them — `Vocal_in` for a
    /// mono track's channel, `Keys_in_L`/`Keys_in_R` for a stereo pair — and `in_N` where no
    /// track or several do; `outputs` playback ports, `out_L` and `out_R` first, then `out_N`.
    /// With `midi`, a MIDI input `midi_in` and a MIDI output `midi_out` (thru) as well.
    /// `tracks` are (name, 1-based device channels) of the tracks that listen.
    public static func named(inputs: Int, outputs: Int, tracks: [(name: String, channels: [Int])], midi: Bool = false) -> JACKPortLayout {
        var users: [Int: [String]] = [:]
        for t in tracks {
            for (k, ch) in t.channels.prefix(2).enumerated() {
                let side = t.channels.count < 2 ? "" : (k == 0 ? "_L" : "_R")
                users[ch, default: []].append(t.name + "_in" + side)
            }
        }
        let ins = (1...max(inputs, 1)).prefix(inputs).map { ch in users[ch]?.count == 1 ? users[ch]![0] : "in_\(ch)" }
        let outs = (1...max(outputs, 1)).prefix(outputs).map { ch in
            ch == 1 && outputs >= 2 ? "out_L" : ch == 2 ? "out_R" : "out_\(ch)"
        }
        return JACKPortLayout(audioInputs: ins, audioOutputs: outs, midiInputs: midi ? ["midi_in"] : [],
                              midiOutputs: midi ? ["midi_out"] : [])
    }

    /// Letters, digits and `_ - .` only (JACK's `client:port` needs no `:` in a port name,
    /// and shells and patterns like plain names), at most 48 characters.
    static func safe(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
        let cleaned = String(name.map { allowed.contains($0) ? $0 : "_" }.prefix(48))
        return cleaned.isEmpty ? "port" : cleaned
    }

    private static func unique(_ name: String, taken: inout Set<String>) -> String {
        var candidate = name
        var n = 2
        while taken.contains(candidate) {
            candidate = "\(name)_\(n)"
            n += 1
        }
        taken.insert(candidate)
        return candidate
    }
}

/// Where Tapedeck's ports are connected when the client starts.
public enum JACKConnection: Sendable, Equatable {
    /// To the physical (system) capture and playback ports, in order.
    case physical
    /// To the ports whose full names match this regular expression (JACK's own matching):
    /// inputs from matching outputs, outputs to matching inputs, in order.
    case pattern(String)
    /// Nowhere: the user (or a patchbay) connects them.
    case none

    /// `--connect` text: `none`, `physical` (or `system`), or a pattern.
    public init(text: String) {
        switch text {
        case "none": self = .none
        case "physical", "system": self = .physical
        default: self = .pattern(text)
        }
    }
}

/// Registering and connecting the client's ports. Control thread.
enum JACKPorts {
    /// Registers every port of `layout`; the registered ports of each kind, in order.
    static func register(_ layout: JACKPortLayout, on client: OpaquePointer, device: String) throws(DeviceError)
        -> (inputs: [OpaquePointer], outputs: [OpaquePointer], midiInputs: [OpaquePointer], midiOutputs: [OpaquePointer]) {
        func add(_ name: String, flags: JackPortFlags, midi: Bool = false) throws(DeviceError) -> OpaquePointer {
            guard let port = jack_port_register(client, name, midi ? td_jack_midi_type() : td_jack_audio_type(),
                                                UInt(flags.rawValue), 0) else {
                throw DeviceError(device: device, reason: "JACK refused to register the port '\(name)' (a name taken, or too many ports)")
            }
            return port
        }
        var inputs: [OpaquePointer] = []
        var outputs: [OpaquePointer] = []
        for name in layout.audioInputs { inputs.append(try add(name, flags: JackPortIsInput)) }
        for name in layout.audioOutputs { outputs.append(try add(name, flags: JackPortIsOutput)) }
        var midiInputs: [OpaquePointer] = []
        var midiOutputs: [OpaquePointer] = []
        for name in layout.midiInputs { midiInputs.append(try add(name, flags: JackPortIsInput, midi: true)) }
        for name in layout.midiOutputs { midiOutputs.append(try add(name, flags: JackPortIsOutput, midi: true)) }
        return (inputs, outputs, midiInputs, midiOutputs)
    }

    /// Connects the first MIDI input from each of `sources` and the first MIDI output to each
    /// of `destinations` (full JACK port names, `jack_midiseq:out`): the user named them, so
    /// one that cannot be connected is an error naming the MIDI ports there are.
    static func connectMIDI(sources: [String], destinations: [String], client: OpaquePointer, inputs: [OpaquePointer],
                            outputs: [OpaquePointer], device: String) throws(DeviceError) {
        func link(_ from: String, _ to: String) throws(DeviceError) {
            let code = jack_connect(client, from, to)
            guard code == 0 || code == EEXIST else {
                let there = names(client, pattern: nil, flags: 0, midi: true)
                throw DeviceError(device: device, reason: "cannot connect the JACK MIDI port \(from.terminalSafe) to \(to.terminalSafe)"
                                  + (there.isEmpty ? "" : " (MIDI ports: \(there.joined(separator: ", ")))"))
            }
        }
        if let input = inputs.first {
            for source in sources { try link(source, String(cString: jack_port_name(input))) }
        }
        if let output = outputs.first {
            for destination in destinations { try link(String(cString: jack_port_name(output)), destination) }
        }
    }

    /// Connects `inputs` and `outputs` as `connection` says; what could not be connected, in
    /// words (nothing to connect to is not an error for `.none`).
    static func connect(_ connection: JACKConnection, client: OpaquePointer, inputs: [OpaquePointer],
                        outputs: [OpaquePointer]) -> [String] {
        let own = String(cString: jack_get_client_name(client)) + ":"
        let sources: [String]
        let sinks: [String]
        switch connection {
        case .none:
            return []
        case .physical:
            sources = names(client, pattern: nil, flags: JackPortIsPhysical.rawValue | JackPortIsOutput.rawValue)
            sinks = names(client, pattern: nil, flags: JackPortIsPhysical.rawValue | JackPortIsInput.rawValue)
        case .pattern(let p):
            sources = names(client, pattern: p, flags: JackPortIsOutput.rawValue).filter { !$0.hasPrefix(own) }
            sinks = names(client, pattern: p, flags: JackPortIsInput.rawValue).filter { !$0.hasPrefix(own) }
        }
        var problems: [String] = []
        if case .pattern(let p) = connection, sources.isEmpty && sinks.isEmpty {
            problems.append("--connect '\(p)': no JACK port matches (see jack_lsp); the ports are left unconnected")
        }
        for (port, source) in zip(inputs, sources) {
            let name = String(cString: jack_port_name(port))
            let code = jack_connect(client, source, name)
            if code != 0 && code != EEXIST { problems.append("cannot connect \(source) to \(name)") }
        }
        for (port, sink) in zip(outputs, sinks) {
            let name = String(cString: jack_port_name(port))
            let code = jack_connect(client, name, sink)
            if code != 0 && code != EEXIST { problems.append("cannot connect \(name) to \(sink)") }
        }
        return problems
    }

    /// Full names of the audio (or `midi`) ports matching `pattern` with all of `flags`, in
    /// JACK's order.
    static func names(_ client: OpaquePointer, pattern: String?, flags: UInt32, midi: Bool = false) -> [String] {
        guard let list = jack_get_ports(client, pattern, midi ? td_jack_midi_type() : td_jack_audio_type(), UInt(flags)) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        var out: [String] = []
        var i = 0
        while let name = list[i] {
            out.append(String(cString: name))
            i += 1
        }
        return out
    }
}
