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
