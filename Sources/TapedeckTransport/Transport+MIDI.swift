import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckDevices

/// Where MIDI comes from and goes to, as a front-end asks for it (`--midi-in`, `--midi-out`,
/// `--midi-surface`).
public struct MIDISetup: Sendable, Equatable {
    /// One MIDI input.
    public enum Input: Sendable, Equatable {
        /// The ALSA sequencer, connected from every hardware port (the default; quietly off
        /// where there is no sequencer).
        case alsaHardware
        /// The ALSA sequencer, connected from this port (`20:0`, a client's name).
        case alsa(String)
        /// A JACK MIDI input port, connected from this JACK port (empty: connected by hand).
        case jack(String)
    }

    /// The inputs (none: no MIDI; the front-ends ask for ``Input/alsaHardware`` unless told otherwise).
    public var inputs: [Input] = []
    /// JACK ports MIDI thru goes to.
    public var jackOutputs: [String] = []
    /// Which surface buttons are transport buttons (MMC always is).
    public var surface: ControlSurface = .off
    /// The JACK client's name.
    public var jackClientName = "tapedeck-midi"
    /// A Mackie surface's extenders (XT), in strip order (`--midi-xt`): each on ports of its own.
    public var extenders: [SurfaceExtender] = []

    /// Where one Mackie Control extender (XT) is heard and answered.
    public enum SurfaceExtender: Sendable, Equatable {
        /// An ALSA sequencer port (`20:0`, a client's name): heard from it, feedback sent to
        /// it, through a sequencer client of the extender's own (`Tapedeck XT 1`).
        case alsa(String)
        /// A JACK MIDI port pair of the JACK MIDI client (`mackie_xt1_in`, `mackie_xt1_out`):
        /// its input connected from `source`, its output to `destination` (empty: by hand).
        case jack(source: String, destination: String)
    }

    /// The JACK ports the extenders on JACK connect (`source`, `destination`), in order.
    public var jackExtenders: [(source: String?, destination: String?)] {
        extenders.compactMap {
            guard case .jack(let s, let d) = $0 else { return nil }
            return (s.isEmpty ? nil : s, d.isEmpty ? nil : d)
        }
    }

    /// No MIDI.
    public init() {}

    /// The JACK ports the inputs name (`jack:PORT`), to connect to a JACK MIDI input.
    public var jackSources: [String] {
        inputs.compactMap { if case .jack(let p) = $0, !p.isEmpty { return p } else { return nil } }
    }

    /// Whether a JACK MIDI port is asked for at all (`--midi-in jack…`, `--midi-out`).
    public var usesJACK: Bool {
        !jackOutputs.isEmpty || inputs.contains { if case .jack = $0 { return true } else { return false } }
    }

    /// Whether an extender is on JACK MIDI (`--midi-xt jack…`).
    public var usesJACKExtenders: Bool { !jackExtenders.isEmpty }
}

/// What MIDI changed that the front-end should follow in its session: a controller learnt,
/// bound controllers moved, the loop switched by a surface's cycle button.
public struct MIDIChanges: Sendable, Equatable {
    /// The binding made by MIDI learn, to add to the session.
    public var learned: MIDIBinding?
    /// Bound controllers that moved: the binding (as the session holds it) and the value.
    public var moves: [(binding: MIDIBinding, value: Int)] = []
    /// Automation written by hand (a controller, a key, a remote command) that finished:
    /// each replaces its lane's points over its stretch.
    public var automationWrites: [AutomationWrite] = []

    /// Nothing changed.
    public init() {}

    /// Whether there is nothing to follow.
    public var isEmpty: Bool { learned == nil && moves.isEmpty && automationWrites.isEmpty }

    public static func == (a: MIDIChanges, b: MIDIChanges) -> Bool {
        a.learned == b.learned && a.automationWrites == b.automationWrites
            && a.moves.count == b.moves.count && zip(a.moves, b.moves).allSatisfy { $0.binding == $1.binding && $0.value == $1.value }
    }
}

/// The transport's MIDI state: its sources and what waits for the front-end.
final class TransportMIDI {
    var alsa: [ALSASequencerInput] = []
    /// Feedback to a Mackie surface on the ALSA sequencer (Transport+Mackie).
    var surfaceOutputs: [ALSASequencerOutput] = []
    var jack: JACKMIDIPorts?
    /// A Mackie surface's extenders (XT), in strip order (Transport+Mackie).
    var extenders: [MackieExtenderLink] = []
    /// The binding waiting for a controller (MIDI learn).
    var learning: MIDIBinding?
    var changes = MIDIChanges()
    /// Transport requests from MIDI (machine control, a surface's buttons) waiting for the
    /// front-end, oldest first; at most ``machineLimit`` (a host that never asks keeps the last).
    var machine: [MachineRequest] = []
    static let machineLimit = 256
    var saidDropped: Int64 = 0
    /// Why the default input (every ALSA hardware port) is off, when it is.
    var unavailable: String?
}

extension Transport {
    /// Opens the MIDI inputs and output `options.midi` asks for and attaches them to the
    /// engine. An input asked for by name that cannot be opened throws; the default (every
    /// ALSA hardware port) is said once and left off where there is no sequencer.
    func openMIDI() throws {
        let setup = options.midi
        for input in setup.inputs {
            switch input {
            case .alsaHardware:
                do {
                    let source = try ALSASequencerInput(source: nil, surface: setup.surface)
                    try source.start()
                    midi.alsa.append(source)
                } catch {
                    // Quiet: most machines that record audio only have no sequencer at all.
                    midi.unavailable = "\(error)"
                }
            case .alsa(let address):
                let source: ALSASequencerInput
                do { source = try ALSASequencerInput(source: address, surface: setup.surface) } catch {
                    throw TransportError(.device, "--midi-in \(address): \(error)")
                }
                do { try source.start() } catch { throw TransportError(.device, "\(error)") }
                midi.alsa.append(source)
            case .jack:
                break
            }
        }
        // On the JACK backend the device's own MIDI ports serve (connected as it opened); on
        // another device JACK MIDI comes through a client of its own.
        // Extenders on JACK get their port pairs from that client too, even on the JACK
        // backend (its midi_in and midi_out then stay unconnected: the device's serve).
        let onDevice = !deviceMIDIPorts.isEmpty
        let jackExtenders = setup.surface == .mcu ? setup.jackExtenders : []
        if (setup.usesJACK && !onDevice) || !jackExtenders.isEmpty {
            do {
                midi.jack = try JACKMIDIPorts(clientName: setup.jackClientName, sources: onDevice ? [] : setup.jackSources,
                                              destinations: onDevice ? [] : setup.jackOutputs, surface: setup.surface,
                                              extenders: jackExtenders)
            } catch {
                throw TransportError(.device, "JACK MIDI: \(error)")
            }
        }
        try openSurfaceOutputs()
        attachMIDI()
    }

    /// Attaches the open MIDI ports to the (new) engine.
    func attachMIDI() {
        engine.setControlSurface(options.midi.surface)
        for source in midi.alsa { engine.attach(midiInput: source.port) }
        if let jack = midi.jack {
            engine.attach(midiInput: jack.input)
            engine.attach(midiOutput: jack.output)
        }
    }

    /// Closes the MIDI sources.
    func closeMIDI() {
        for source in midi.alsa { source.close() }
        midi.alsa = []
        for output in midi.surfaceOutputs { output.close() }
        midi.surfaceOutputs = []
        for x in midi.extenders { x.close() }
        midi.extenders = []
        midi.jack?.close()
        midi.jack = nil
    }

    /// The MIDI ports in use (`ALSA Tapedeck:MIDI in ← 20:0 Keystation`).
    public var midiPorts: [String] {
        midi.alsa.map { "\($0.port.name)\($0.connected.isEmpty ? "" : " ← " + $0.connected.joined(separator: ", "))" }
            // (On the JACK backend that client is only there for the extenders' pairs.)
            + (midi.jack.map { deviceMIDIPorts.isEmpty ? ["JACK \($0.clientName):midi_in, \($0.clientName):midi_out"] : [] } ?? [])
            + midi.extenders.map(\.name)
            + (deviceMIDIPorts.isEmpty ? [] : ["JACK " + deviceMIDIPorts.joined(separator: ", ")])
    }

    /// The device's own MIDI ports (the JACK backend's `tapedeck:midi_in`, `tapedeck:midi_out`).
    var deviceMIDIPorts: [String] { (engine.device as? JACKDevice)?.midiPortNames ?? [] }

    /// One line for a front-end: the MIDI ports in use, or why there are none (no ALSA
    /// sequencer on this machine, and no --midi-in).
    public var midiInputLine: String {
        if !midiPorts.isEmpty { return "MIDI: " + midiPorts.joined(separator: "; ") }
        return "no MIDI input" + (midi.unavailable.map { ": \($0)" } ?? "") + " (--midi-in PORT or jack:PORT names one)"
    }

    /// MIDI learn: the next controller any input moves gets bound to what `target` names
    /// (its controller and channel are filled in); ``collectMIDIChanges()`` hands the binding
    /// over. Nil cancels.
    public func learnController(for target: MIDIBinding?) {
        midi.learning = target
        if target == nil { engine.cancelLearning() } else { engine.learnNextController() }
    }

    /// Whether a controller is being waited for (MIDI learn).
    public var isLearningController: Bool { midi.learning != nil }

    /// What MIDI changed since the last call, for the front-end's session. Control thread.
    public func collectMIDIChanges() -> MIDIChanges {
        defer { midi.changes = MIDIChanges() }
        return midi.changes
    }

    /// Transport requests from MIDI since the last call (MMC, a surface's transport buttons),
    /// in order. The front-end carries them out as its control socket's commands (the
    /// `RemoteCommand` each reads into), so they obey the same rules: the transport does not
    /// act on them itself. Control thread.
    public func collectMachineRequests() -> [MachineRequest] {
        defer { midi.machine = [] }
        return midi.machine
    }

    /// Keeps transport requests from MIDI for the front-end, takes what the audio thread
    /// learnt and moved. Called from every snapshot.
    func pollMIDI() {
        midi.machine += engine.drainMachineCommands()
        if midi.machine.count > TransportMIDI.machineLimit { midi.machine.removeFirst(midi.machine.count - TransportMIDI.machineLimit) }
        if let target = midi.learning, let learnt = engine.learnedController() {
            var binding = target
            binding.controller = learnt.controller
            binding.channel = learnt.channel + 1
            midi.changes.learned = binding
            midi.learning = nil
            notices.append("MIDI learn: \(binding)")
        }
        for move in engine.drainControllerMoves(everyMove: true) where spec.midiBindings.indices.contains(move.binding) {
            let binding = spec.midiBindings[move.binding].binding
            midi.changes.moves.removeAll { $0.binding == binding }
            midi.changes.moves.append((binding, move.value))
            // The engine plays the move already: the transport's session holds it from now
            // on (so nothing writes the older value back), and the front-end's follows
            // through ``collectMIDIChanges()`` without handing it back.
            session.apply(binding, value: move.value, chains: &chains)
            writeAutomation(binding, value: move.value, timelineFrame: move.timelineFrame)
        }
        let dropped = engine.droppedMIDIMessages
        if dropped > midi.saidDropped {
            notices.append("\(dropped - midi.saidDropped) MIDI message\(dropped - midi.saidDropped == 1 ? "" : "s") lost (more than a period holds, or nothing draining the input)")
            midi.saidDropped = dropped
        }
    }
}

/// What a bound controller's move sets, typed: the one translation of a ``MIDIBinding`` and
/// its value, used by the transport (which follows the move in its session) and by a
/// front-end (which carries it out as the command any surface sends for that control).
public enum BoundChange: Equatable, Sendable {
    /// A fader, pan, mute, send level or the master fader.
    case mixer(MixerChange)
    /// A parameter of a node of a track's playback or input chain.
    case chain(ChainValueChange)
}

extension Session {
    /// What `binding` moved to `value` (0…127) sets in this session, or nil when it names
    /// nothing here (a track renamed, a node removed, the chain of a frozen track, which does
    /// not run: the engine binds nothing there either). A node parameter is looked up in its
    /// chain as `chains` (brought up to this session) reads it, among the built-in nodes (the
    /// engine applies a move to those only).
    public func change(for binding: MIDIBinding, value: Int, chains: SessionChains) -> BoundChange? {
        let level = Fader.stored(MIDIBinding.faderDecibels(controllerValue: value))
        if binding.kind == .master { return .mixer(.masterGain(decibels: level)) }
        guard let name = binding.track, let t = tracks.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        switch binding.kind {
        case .fader: return .mixer(.gain(strip: t, decibels: level))
        case .pan: return .mixer(.pan(strip: t, value: MIDIBinding.pan(controllerValue: value)))
        case .mute: return .mixer(.mute(strip: t, on: MIDIBinding.mute(controllerValue: value)))
        case .master: return nil
        case .send:
            guard let bus = binding.bus, let k = tracks[t].sends.firstIndex(where: { $0.bus.lowercased() == bus.lowercased() }) else { return nil }
            return .mixer(.sendLevel(strip: t, send: k, decibels: level))
        case .parameter:
            let input = binding.inputChain == true
            guard tracks[t].frozen == nil, let node = binding.node, let id = binding.parameter, let chain = chains.slot(t, input ? .input : .playback).value,
                  chain.entries.indices.contains(node - 1),
                  let d = NodeRegistry.standard.descriptor(named: chain.entries[node - 1].node)?.parameters.first(where: { $0.id == id })
            else { return nil }
            return .chain(ChainValueChange(place: input ? .input(strip: t) : .playback(strip: t), node: node - 1,
                                           value: .parameter(id, .number(d.value(controllerValue: value)))))
        }
    }

    /// Follows a bound controller's move: the fader, pan, mute, send, master fader or node
    /// parameter it is bound to takes the value the engine already applied. Returns false
    /// when the binding names nothing in this session. The changed chain is handed back to
    /// `chains`, so its text is not read again.
    @discardableResult
    public mutating func apply(_ binding: MIDIBinding, value: Int, chains: inout SessionChains) -> Bool {
        chains.update(to: self)
        switch change(for: binding, value: value, chains: chains) {
        case .mixer(let change)?: apply(change)
        case .chain(let change)?: apply(change, chains: &chains)
        case nil: return false
        }
        return true
    }
}
