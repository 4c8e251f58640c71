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

    /// Bound controllers that moved since the last call (the audio thread has already applied
    /// them; the front-end follows in its session): each binding once with its latest value,
    /// or (`everyMove`) every move in the order heard, for automation written by hand.
    public func drainControllerMoves(everyMove: Bool = false) -> [ControllerMove] {
        var moves: [ControllerMove] = []
        while let r = core.midi.moves.pop() {
            let move = ControllerMove(binding: Int(r.key), value: Int(r.value), timelineFrame: r.timelineFrame)
            if !everyMove, let at = moves.firstIndex(where: { $0.binding == move.binding }) {
                moves[at].value = move.value
                moves[at].timelineFrame = move.timelineFrame
            } else {
                moves.append(move)
            }
        }
        return moves
    }

    /// Timeline frames a fader, pan or send move glides over (automation written by hand
    /// draws the same glide).
    public static var faderGlideFrames: Int64 { Int64(GainGlide.lengthFrames) }

    /// Lets go of what a hand held on track `track`'s strip (automation written in touch or
    /// latch): its lane for `parameter` plays again. Control thread.
    public func releaseTouch(track: Int, parameter: AutomationParameter) {
        switch touchTarget(track: track, parameter: parameter) {
        case .strip(let controls, let touch)?: controls.release(touch)
        case .node(let parameters, let index)?: parameters.release(index)
        case .send(let controls)?: controls.release()
        case nil: break
        }
    }

    /// Lets go of everything any hand holds (the transport stopped: no pass is being written,
    /// whatever became of the lanes meanwhile). Control thread.
    public func releaseAllTouches() {
        guard let g = graphs.last else { return }
        for strip in g.strips {
            strip.controls.release([.gain, .pan, .mute])
            for node in strip.chain?.nodes ?? [] { node.parameters.releaseAll() }
        }
        for states in g.routes.sendStates { for state in states { state.controls.release() } }
    }

    /// Takes hold of track `track`'s lane for `parameter` from the control thread (a key or a
    /// remote command moved the control while its lane is written in touch or latch).
    public func touch(track: Int, parameter: AutomationParameter) {
        switch touchTarget(track: track, parameter: parameter) {
        case .strip(let controls, let touch)?: controls.touch(touch)
        case .node(let parameters, let index)?: parameters.touch(index)
        case .send(let controls)?: controls.touch()
        case nil: break
        }
    }

    /// What holds the touch of track `track`'s lane for `parameter` in the newest graph: the
    /// strip's own controls, a send's controls, or a node's parameters. Control thread.
    private enum TouchTarget {
        case strip(MixerControls, MixerControls.Touch)
        case node(NodeParameters, Int)
        case send(SendControls)
    }

    private func touchTarget(track: Int, parameter: AutomationParameter) -> TouchTarget? {
        guard let g = graphs.last, g.strips.indices.contains(track) else { return nil }
        let strip = g.strips[track]
        switch parameter {
        case .gain: return .strip(strip.controls, .gain)
        case .pan: return .strip(strip.controls, .pan)
        case .mute: return .strip(strip.controls, .mute)
        case .send(let bus):
            guard g.spec.tracks.indices.contains(track),
                  let k = g.spec.tracks[track].sendBuses.firstIndex(where: { $0.lowercased() == bus.lowercased() }) else { return nil }
            let states = g.routes.sendStates.indices.contains(track) ? g.routes.sendStates[track] : []
            return states.indices.contains(k) ? .send(states[k].controls) : nil
        case .node(let node, let id):
            guard let chain = strip.chain, let at = AutomationTargets.nodeIndex(node, in: strip.chainSpec), at < chain.nodes.count,
                  let p = AutomationTargets.parameterIndex(id, in: chain.nodes[at].parameters) else { return nil }
            return .node(chain.nodes[at].parameters, p)
        }
    }

    /// MIDI messages lost so far (a period holding more than it can, a full capture queue,
    /// a port whose ring filled).
    public var droppedMIDIMessages: Int64 {
        core.midi.droppedMessages.load(ordering: .relaxed) + midiInputs.reduce(0) { $0 + Int64($1.droppedCount.load(ordering: .relaxed)) }
    }
}
