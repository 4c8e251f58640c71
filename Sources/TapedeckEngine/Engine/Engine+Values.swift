import TapedeckCore
import TapedeckDSP

/// Values the control thread moves in the playing graph without a new one: faders, pans,
/// mutes, solos, send levels, the master fader (atomics the audio thread reads each period),
/// and a node's parameter or bypass (atomics its node reads each block, smoothed).
extension Engine {
    /// A track's fader, pan, mute and solo, heard at the next period (atomics, no graph).
    public func setMixer(track: Int, gainDecibels: Double, pan: Double, mute: Bool, solo: Bool) {
        guard let g = graphs.last, g.strips.indices.contains(track) else { return }
        g.strips[track].controls.set(gainDecibels: gainDecibels, pan: pan, mute: mute, solo: solo)
    }

    /// Send `index` (in the session's order) of strip `track`: its level and pan, heard at the
    /// next period (atomics, no graph).
    public func setSend(track: Int, index: Int, levelDecibels: Double, pan: Double) {
        guard let g = graphs.last, g.routes.sendStates.indices.contains(track),
              g.routes.sendStates[track].indices.contains(index) else { return }
        g.routes.sendStates[track][index].controls.set(levelDecibels: levelDecibels, pan: pan)
    }

    /// One mixer value, and nothing around it (a strip or send that does not play is
    /// ignored). Heard at the next period (an atomic store, no graph). Control thread.
    public func set(_ change: MixerChange) {
        guard let g = graphs.last else { return }
        switch change {
        case .masterGain(let dB): setMasterGain(decibels: dB)
        case .gain(let t, let dB): if g.strips.indices.contains(t) { g.strips[t].controls.setGain(decibels: dB) }
        case .pan(let t, let value): if g.strips.indices.contains(t) { g.strips[t].controls.setPan(value) }
        case .mute(let t, let on): if g.strips.indices.contains(t) { g.strips[t].controls.setMute(on) }
        case .solo(let t, let on): if g.strips.indices.contains(t) { g.strips[t].controls.setSolo(on) }
        case .sendLevel(let t, let k, let dB):
            if g.routes.sendStates.indices.contains(t), g.routes.sendStates[t].indices.contains(k) {
                g.routes.sendStates[t][k].controls.setLevel(decibels: dB)
            }
        case .sendPan(let t, let k, let value):
            if g.routes.sendStates.indices.contains(t), g.routes.sendStates[t].indices.contains(k) {
                g.routes.sendStates[t][k].controls.setPan(value)
            }
        }
    }

    /// The master fader.
    public func setMasterGain(decibels: Double) {
        let linear = decibels.isFinite ? Float(Decibels.toLinear(decibels)) : (decibels < 0 ? 0 : 1)
        shared.masterGainBits.store((linear.isFinite ? linear : 1).bitPattern, ordering: .relaxed)
    }

    /// One node's parameter or bypass in the playing graph, nothing else (a place, node or
    /// parameter that does not play is ignored), heard at the next block through the node's
    /// own smoothing. The value is noted as the one the node plays, so the next graph does
    /// not write it again. Control thread.
    public func set(_ change: ChainValueChange) {
        guard let g = graphs.last else { return }
        func apply(_ instance: ChainInstance?) {
            guard let instance, instance.nodes.indices.contains(change.node) else { return }
            switch change.value {
            case .bypass(let on): instance.setBypassed(change.node, on)
            case .parameter(let id, let value):
                let parameters = instance.nodes[change.node].parameters
                if let index = parameters.index(of: id) { parameters.set(index, value) }
            }
        }
        switch change.place {
        case .master:
            apply(g.masterChain)
            _ = g.masterChainSpec.apply(change.value, entry: change.node)
        case .playback(let s):
            guard g.strips.indices.contains(s) else { return }
            apply(g.strips[s].chain)
            _ = g.strips[s].chainSpec.apply(change.value, entry: change.node)
        case .input(let s):
            guard let k = (0..<g.inputCount).first(where: { g.trackOfInput[$0] == s }) else { return }
            apply(g.inputs[k].chain)
            _ = g.inputs[k].chainSpec.apply(change.value, entry: change.node)
        }
    }
}
