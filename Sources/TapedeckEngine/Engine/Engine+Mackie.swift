import TapedeckCore

/// A Mackie Control surface on the device's own MIDI ports (the JACK backend's `midi_in` and
/// `midi_out`): the audio thread sets its messages aside, the control side takes them and
/// queues feedback, which the audio thread writes after the thru.
extension Engine {
    /// What a Mackie surface on the device's own MIDI did since the last call. The one
    /// control-side thread that serves the surface.
    public func drainSurfaceMessages() -> [MackieMessage] {
        var out: [MackieMessage] = []
        while let m = core.midi.surfaceMessages.pop() { out.append(m) }
        return out
    }

    /// Queues feedback for a Mackie surface on the device's own MIDI out; false when it
    /// cannot go (too long, the queue full). The one control-side thread that serves the surface.
    @discardableResult
    public func sendToSurface(_ message: [UInt8]) -> Bool { core.midi.surfaceOutput.send(message) }
}
