import TapedeckCore
import TapedeckDSP
import TapedeckEngine

/// Automation written by hand: what the transport keeps between snapshots.
final class TransportAutomation {
    var writer = AutomationWriter(glideFrames: Engine.faderGlideFrames)
    /// Whether the last snapshot saw the transport roll, and where.
    var rolling = false
    var lastRollingFrame: Int64 = 0
    /// Where the last `play(from:)` rolled from (-1: not known: the pass begins where first seen).
    var playFrom: Int64 = -1
    /// What the lanes being written hold so far, as of the last snapshot.
    var inProgress: [AutomationWrite] = []
}

extension Transport {
    /// Follows automation being written, every snapshot: write lanes begin when the transport
    /// rolls, touches let go when idle, and every pass ends when it stops; what they wrote
    /// goes to the front-end (``MIDIChanges/automationWrites``) and the lanes play again.
    /// Control thread.
    func pollAutomation(_ status: EngineStatus) {
        let a = automation
        let now = Transport.monotonicNanoseconds()
        if status.transport != .stopped {
            if !a.rolling {
                a.rolling = true
                let from = a.playFrom >= 0 ? a.playFrom : status.positionFrame
                chains.update(to: session)
                for (t, track) in session.tracks.enumerated() {
                    for lane in track.automation where lane.mode == .write {
                        guard let value = track.controlValue(lane.parameter, chain: chains.slot(t).value) else { continue }
                        a.writer.begin(track: track.name, lane: lane, value: value, at: from, nanoseconds: now)
                    }
                }
            }
            a.lastRollingFrame = status.positionFrame
            hand(a.writer.releaseIdle(at: now, frame: status.positionFrame))
            a.inProgress = a.writer.inProgress(at: status.positionFrame)
        } else if a.rolling {
            a.inProgress = []
            a.rolling = false
            a.playFrom = -1
            // Where it stopped (the playhead stays there), unless it went back to a start.
            let stopped = status.positionFrame >= a.lastRollingFrame ? status.positionFrame : a.lastRollingFrame
            hand(a.writer.stop(at: stopped))
            // Whatever a hand still holds (a lane removed or its mode changed mid-pass) is let go.
            engine.releaseAllTouches()
        }
    }

    /// The lanes being written by hand as they stand at the last snapshot: each lane's points
    /// so far (the last value held to the playhead), for a front-end to draw the pass as it
    /// runs; empty while stopped. The edit itself comes when the pass ends
    /// (``MIDIChanges/automationWrites``). Control thread.
    public var automationInProgress: [AutomationWrite] { automation.inProgress }

    /// A bound controller moved while rolling: written to its lane when that is in touch,
    /// latch or write. Control thread.
    func writeAutomation(_ binding: MIDIBinding, value: Int, timelineFrame: Int64) {
        chains.update(to: session)
        guard timelineFrame >= 0, let target = session.automationTarget(binding, controllerValue: value, chains: chains) else { return }
        let track = session.tracks[target.track]
        guard let lane = track.laneIndex(target.parameter).map({ track.automation[$0] }), AutomationWriter.writes(lane.mode) else { return }
        hand(automation.writer.move(track: track.name, lane: lane, value: target.value, at: timelineFrame,
                                    nanoseconds: Transport.monotonicNanoseconds()))
    }

    /// The front-end changed a strip's fader, pan, mute, a send's level or a node's parameter
    /// (a key, a remote command) while rolling: written to its lane when that is in touch,
    /// latch or write, and the lane rests while the hand holds it. A value a controller
    /// already wrote is not written again. Control thread.
    func writeAutomation(from old: Session, to new: Session, at frame: Int64) {
        guard automation.rolling, frame >= 0 else { return }
        // Each text read once: the old session's chains, then the new one's (only what changed).
        chains.update(to: old)
        let oldChains = chains
        chains.update(to: new)
        for (t, track) in new.tracks.enumerated() where !track.automation.isEmpty {
            guard let b = old.tracks.firstIndex(where: { $0.name == track.name }) else { continue }
            let before = old.tracks[b]
            for lane in track.automation where AutomationWriter.writes(lane.mode) {
                guard let value = track.controlValue(lane.parameter, chain: chains.slot(t).value),
                      value != before.controlValue(lane.parameter, chain: oldChains.slot(b).value) else { continue }
                writeAutomation(track: t, lane: lane, value: value, at: frame)
            }
        }
    }

    /// A typed mixer change (``apply(_:)``), already in ``session``: written to its lane as
    /// ``writeAutomation(from:to:at:)`` writes a changed value. Control thread.
    func writeAutomation(_ change: MixerChange, at frame: Int64) {
        guard automation.rolling, frame >= 0, let t = change.strip, let parameter = change.automationParameter(in: session),
              let i = session.tracks[t].laneIndex(parameter) else { return }
        let lane = session.tracks[t].automation[i]
        guard AutomationWriter.writes(lane.mode), let value = session.tracks[t].controlValue(parameter, chain: keptChains().slot(t).value) else { return }
        writeAutomation(track: t, lane: lane, value: value, at: frame)
    }

    /// A typed chain change (``apply(_:)``), already in ``session``: a parameter of a node of
    /// a track's playback chain with a lane in touch, latch or write is written to it.
    /// Control thread.
    func writeAutomation(_ change: ChainValueChange, at frame: Int64) {
        guard automation.rolling, frame >= 0, case .playback(let t) = change.place, case .parameter(let id, _) = change.value,
              session.tracks.indices.contains(t) else { return }
        chains.update(to: session)
        guard let chain = chains.slot(t).value else { return }
        let track = session.tracks[t]
        for lane in track.automation where AutomationWriter.writes(lane.mode) {
            guard case .node(let node, let p) = lane.parameter, p.lowercased() == id.lowercased(),
                  AutomationTargets.nodeIndex(node, in: chain) == change.node, let value = track.controlValue(lane.parameter, chain: chain) else { continue }
            writeAutomation(track: t, lane: lane, value: value, at: frame)
        }
    }

    /// `value` of `lane` on track `t`, moved by a hand at `frame`: the lane rests while held
    /// (touch, latch) and the move is written. A value a controller already wrote is not
    /// written again. Control thread.
    private func writeAutomation(track t: Int, lane: AutomationLane, value: Double, at frame: Int64) {
        let name = session.tracks[t].name
        guard automation.writer.lastValue(track: name, parameter: lane.parameter) != value else { return }
        if lane.mode != .write { engine.touch(track: t, parameter: lane.parameter) }
        hand(automation.writer.move(track: name, lane: lane, value: value, at: frame, nanoseconds: Transport.monotonicNanoseconds()))
    }

    /// Finished writes: their lanes play again, and the front-end gets them.
    private func hand(_ writes: [AutomationWrite]) {
        for w in writes {
            if let t = session.tracks.firstIndex(where: { $0.name == w.track }) { engine.releaseTouch(track: t, parameter: w.parameter) }
        }
        midi.changes.automationWrites += writes
    }

    static func monotonicNanoseconds() -> Int64 { Int64(monotonicSeconds() * 1e9) }
}

extension Session {
    /// What a bound controller at `controllerValue` writes: the track, its lane's parameter, and
    /// the value in the lane's unit. Nil for the master, an input chain, or a binding that
    /// names nothing here. A node's parameter is looked up in `chains` (brought up to this
    /// session).
    func automationTarget(_ binding: MIDIBinding, controllerValue value: Int,
                          chains: SessionChains) -> (track: Int, parameter: AutomationParameter, value: Double)? {
        guard binding.kind != .master, binding.inputChain != true, let name = binding.track,
              let t = tracks.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        switch binding.kind {
        case .fader: return (t, .gain, Fader.stored(MIDIBinding.faderDecibels(controllerValue: value)))
        case .pan: return (t, .pan, MIDIBinding.pan(controllerValue: value))
        case .mute: return (t, .mute, MIDIBinding.mute(controllerValue: value) ? 1 : 0)
        case .master: return nil
        case .send:
            guard let bus = binding.bus, tracks[t].sends.contains(where: { $0.bus.lowercased() == bus.lowercased() }) else { return nil }
            // The lane names the bus as the session's send does.
            let lane = tracks[t].automation.first { lane in
                if case .send(let b) = lane.parameter { return b.lowercased() == bus.lowercased() }
                return false
            }
            return (t, lane?.parameter ?? .send(bus), Fader.stored(MIDIBinding.faderDecibels(controllerValue: value)))
        case .parameter:
            guard let node = binding.node, let id = binding.parameter, let (chain, _, d) = tracks[t].nodeParameter(String(node), id, in: chains.slot(t).value)
            else { return nil }
            // The lane may name the node by its name or its place.
            let lane = tracks[t].automation.first { lane in
                if case .node(let n, let p) = lane.parameter {
                    return AutomationTargets.nodeIndex(n, in: chain) == node - 1 && p.lowercased() == id.lowercased()
                }
                return false
            }
            return (t, lane?.parameter ?? .node(String(node), id), d.value(controllerValue: value))
        }
    }
}
