/// The seam for a backend with MIDI ports of its own (JACK): its audio callback hands the
/// cycle's incoming MIDI to the client at exact frames before the cycle renders, and takes
/// what the client sends on (MIDI thru) after it. Such MIDI needs no timestamps and no ring:
/// it arrives with the cycle it belongs to. Backends without MIDI ports ignore this;
/// sources on threads of their own (the ALSA sequencer) feed a ``MIDIInputPort`` instead.
public protocol AudioDeviceMIDIClient: AudioDeviceClient {
    /// One complete message (a channel message, or SysEx `F0 … F7`) at `frameOffset` of the
    /// cycle about to render. Called before ``AudioDeviceClient/renderCycle(input:output:frameCount:)``.
    ///
    /// Audio thread: no allocation, no locks.
    func receiveMIDI(_ bytes: UnsafeBufferPointer<UInt8>, frameOffset: Int)

    /// Calls `send` with every message to send on for the cycle just rendered (three bytes
    /// or fewer each) and its frame offset, in order. Called after
    /// ``AudioDeviceClient/renderCycle(input:output:frameCount:)``.
    ///
    /// Audio thread: no allocation, no locks.
    func sendMIDI(_ send: (UnsafeBufferPointer<UInt8>, Int) -> Void)
}
