import TapedeckCore
import TapedeckEngine
import TapedeckDevices

// MARK: - Mackie Control: what the surface did, and the feedback it gets back.
//
// The surface's faders, V-pots and buttons arrive on the same MIDI input ports as everything
// else (ALSA sequencer, JACK MIDI); the ports set them aside for the control side instead of
// the audio thread (``MIDIInputPort/drainSurface()``). Its transport buttons are transport
// commands as before (``MachineControlDecoder``). Feedback goes back to each ALSA port
// `--midi-in` names (a client of its own, ``ALSASequencerOutput``) and out of the JACK MIDI
// client's `midi_out` (to the `--midi-out` ports), or, on the JACK backend, the device's own
// `midi_out`.
//
// Extenders (XT) each have ports of their own, as in Ardour (one surface, one port pair): a
// JACK MIDI pair of the JACK MIDI client (`mackie_xt1_in`, `mackie_xt1_out`), or a sequencer
// client of their own on the ALSA sequencer (heard from the XT's port, feedback sent to it).

/// One Mackie Control extender's ports: where its messages arrive, where its feedback goes.
final class MackieExtenderLink {
    /// For messages (`JACK tapedeck-midi:mackie_xt1_in`).
    let name: String
    let input: MIDIInputPort
    private let sendMessage: ([UInt8]) -> Void
    private let closePorts: () -> Void

    init(name: String, input: MIDIInputPort, send: @escaping ([UInt8]) -> Void, close: @escaping () -> Void = {}) {
        self.name = name
        self.input = input
        sendMessage = send
        closePorts = close
    }

    func send(_ message: [UInt8]) { sendMessage(message) }
    func close() { closePorts() }
}

extension Transport {
    /// Opens the feedback outputs a Mackie surface needs: one to each ALSA port the inputs
    /// name. Called by ``openMIDI()``; a port that cannot take feedback throws, in one line.
    func openSurfaceOutputs() throws {
        guard options.midi.surface == .mcu else { return }
        for input in options.midi.inputs {
            guard case .alsa(let address) = input else { continue }
            do { midi.surfaceOutputs.append(try ALSASequencerOutput(destination: address)) } catch {
                throw TransportError(.device, "--midi-surface mcu: \(error)")
            }
        }
        try openExtenders()
    }

    /// The extenders' ports, in strip order: the JACK pairs ``openMIDI()`` registered, and a
    /// sequencer client of its own for each on the ALSA sequencer. One that cannot open throws.
    private func openExtenders() throws {
        var jackPairs = midi.jack?.extenders ?? []
        for (n, extender) in options.midi.extenders.enumerated() {
            switch extender {
            case .jack:
                guard !jackPairs.isEmpty else { continue }
                let x = jackPairs.removeFirst()
                midi.extenders.append(MackieExtenderLink(name: "JACK \(midi.jack?.clientName ?? ""):\(x.inName), \(x.outName)",
                                                         input: x.input, send: { _ = x.surfaceOutput.send($0) }))
            case .alsa(let address):
                let client = "Tapedeck XT \(n + 1)"
                do {
                    let source = try ALSASequencerInput(source: address, surface: .mcu, clientName: client)
                    let output: ALSASequencerOutput
                    do { output = try ALSASequencerOutput(destination: address, clientName: client) } catch {
                        source.close()
                        throw error
                    }
                    try source.start()
                    midi.extenders.append(MackieExtenderLink(
                        name: "ALSA \(client) ← \(address)", input: source.port, send: { _ = output.send($0) },
                        close: { source.close(); output.close() }))
                } catch {
                    throw TransportError(.device, "--midi-xt \(address): \(error)")
                }
            }
        }
    }

    /// How many extenders (XT) the Mackie surface has, each on ports of its own.
    public var surfaceExtenderCount: Int { midi.extenders.count }

    /// What extender `index` (0 the first XT) did since the last call. UI thread.
    public func collectExtenderMessages(_ index: Int) -> [MackieMessage] {
        midi.extenders.indices.contains(index) ? midi.extenders[index].input.drainSurface() : []
    }

    /// Sends feedback to extender `index`. UI thread.
    public func sendToExtender(_ index: Int, _ messages: [[UInt8]]) {
        guard midi.extenders.indices.contains(index) else { return }
        for m in messages { midi.extenders[index].send(m) }
    }

    /// Whether a Mackie Control surface is asked for and some port can hear it.
    public var hasMackieSurface: Bool {
        options.midi.surface == .mcu && (!midi.alsa.isEmpty || midi.jack != nil || !deviceMIDIPorts.isEmpty)
    }

    /// What the Mackie surface did since the last call (faders, touches, V-pots, buttons
    /// other than the transport's), from every input, in order per port. UI thread.
    public func collectSurfaceMessages() -> [MackieMessage] {
        midi.alsa.flatMap { $0.port.drainSurface() } + (midi.jack?.input.drainSurface() ?? []) + engine.drainSurfaceMessages()
    }

    /// Sends feedback messages to the surface (every feedback output). UI thread.
    public func sendToSurface(_ messages: [[UInt8]]) {
        for m in messages {
            for output in midi.surfaceOutputs { output.send(m) }
            midi.jack?.surfaceOutput.send(m)
            if !deviceMIDIPorts.isEmpty { engine.sendToSurface(m) }
        }
    }
}
