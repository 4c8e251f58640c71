import Synchronization
import TapedeckCore
import TapedeckDSP

/// MIDI on the control side: ports in and out, transport commands, MIDI learn, and the
/// latency a played message has. Control thread, as everything on ``Engine``.
extension Engine {
    /// Frames from a played MIDI message to the engine placing it: one period, the output
    /// latency and the master chain's look-ahead. A MIDI take is shifted back by this much.
    public var midiLatencyFrames: Int64 { core.midiBaseLatencyFrames + Int64(outputLatencyFrames) }

    /// Starts draining `port` into every period (at most eight ports). The engine keeps the
    /// port alive until it closes. Returns false when all slots are taken.
    @discardableResult
    public func attach(midiInput port: MIDIInputPort) -> Bool {
        guard !midiInputs.contains(where: { $0 === port }) else { return true }
        let hub = core.midi
        for slot in 0..<MIDIHub.inputCapacity where hub.inputs[slot].load(ordering: .acquiring) == nil {
            midiInputs.append(port)
            hub.inputs[slot].store(Unmanaged.passUnretained(port).toOpaque(), ordering: .releasing)
            return true
        }
        return false
    }

    /// Sends what the inputs play on to `port` (MIDI thru); nil stops. The engine keeps the
    /// port alive until it closes (a port replaced stays alive too: the audio thread may be
    /// writing to it this period).
    public func attach(midiOutput port: MIDIOutputPort?) {
        if let port, !midiOutputs.contains(where: { $0 === port }) { midiOutputs.append(port) }
        core.midi.output.store(port.map { Unmanaged.passUnretained($0).toOpaque() }, ordering: .releasing)
    }

    /// The control-surface buttons counted as transport buttons in the device's own MIDI.
    public func setControlSurface(_ surface: ControlSurface) {
        core.midi.surface.store(surface.code, ordering: .relaxed)
    }

    /// Transport commands received since the last call (MMC, surface buttons), in order,
    /// from every port and the device's own MIDI.
    public func drainMachineCommands() -> [MachineRequest] {
        var out: [MachineRequest] = []
        while let c = core.midi.machine.pop() { out.append(MachineRequest(command: c, port: configuration.name)) }
        for port in midiInputs { while let c = port.machine.pop() { out.append(MachineRequest(command: c, port: port.name)) } }
        return out
    }

    /// MIDI learn: the next controller message any input sends is learnt (and not applied).
    public func learnNextController() {
        while core.midi.learned.pop() != nil {}
        core.midi.learning.store(true, ordering: .releasing)
    }

    /// Stops waiting for a controller to learn.
    public func cancelLearning() { core.midi.learning.store(false, ordering: .releasing) }

    /// The controller learnt, once one arrived.
    public func learnedController() -> LearnedController? {
        guard let r = core.midi.learned.pop() else { return nil }
        return LearnedController(channel: Int(r.key), controller: Int(r.controller), value: Int(r.value))
    }

    /// Bound controllers that moved since the last call, each with its latest value (the
    /// audio thread has already applied them; the front-end follows in its session).
    public func drainControllerMoves() -> [ControllerMove] {
        var latest: [Int: Int] = [:]
        var order: [Int] = []
        while let r = core.midi.moves.pop() {
            if latest[Int(r.key)] == nil { order.append(Int(r.key)) }
            latest[Int(r.key)] = Int(r.value)
        }
        return order.map { ControllerMove(binding: $0, value: latest[$0]!) }
    }

    /// MIDI messages lost so far (a period holding more than it can, a full capture queue,
    /// a port whose ring filled).
    public var droppedMIDIMessages: Int64 {
        core.midi.droppedMessages.load(ordering: .relaxed) + midiInputs.reduce(0) { $0 + Int64($1.droppedCount.load(ordering: .relaxed)) }
    }
}
