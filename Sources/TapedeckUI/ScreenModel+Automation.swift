import TapedeckCore
import TapedeckDSP

/// Automation on the screen: a track's lanes shown under it (one row each), one of them
/// selected with the up and down keys; on a selected lane Enter adds a point at the playhead
/// (on the snap grid), `x` deletes the point there, the move keys move it a grid step, the
/// fader keys step its value, and the mode steps off → play → touch → latch → write. Each is
/// one undo step. A new lane (gain, pan, mute, send:BUS, NODE.PARAM) is named in a dialog.
extension ScreenModel {
    /// The selected lane of the selected track, when a lane row is selected.
    var selectedLaneIndex: Int? {
        guard let k = selectedLane, session.tracks.indices.contains(selectedTrack), automationShown.contains(selectedTrack),
              session.tracks[selectedTrack].automation.indices.contains(k) else { return nil }
        return k
    }

    /// Applies an automation change (the one `tapedeck automation` makes too) as one undoable
    /// step and tells the engine; a refusal goes to the message line. Whether it applied.
    func automationEdit(_ change: AutomationChange) -> Bool {
        do { try owner.change { try $0.apply(change) } } catch {
            say("\(error)", error: true)
            return false
        }
        return true
    }

    /// Shows or hides the selected track's lanes.
    func toggleAutomationLanes() {
        guard let t = requireTrack() else { return }
        if automationShown.contains(t) {
            automationShown.remove(t)
            selectedLane = nil
            say("\(session.tracks[t].name): automation hidden")
            return
        }
        automationShown.insert(t)
        let n = session.tracks[t].automation.count
        say(n == 0 ? "\(session.tracks[t].name): no automation lane (\(keyName(.automationNew)) adds one)"
            : "\(session.tracks[t].name): \(n) automation lane\(n == 1 ? "" : "s") (\(keyName(.down)) selects one)")
    }

    /// Up: the lane above, the track's own row, or the track above (its last lane, when shown).
    func selectUp() {
        if let k = selectedLaneIndex {
            selectedLane = k > 0 ? k - 1 : nil
            return
        }
        let before = selectedTrack
        selectTrack(selectedTrack - 1)
        if selectedTrack != before, automationShown.contains(selectedTrack), !session.tracks[selectedTrack].automation.isEmpty {
            selectedLane = session.tracks[selectedTrack].automation.count - 1
        }
    }

    /// Down: the track's first lane (when shown), the next lane, or the next track.
    func selectDown() {
        let t = selectedTrack
        if session.tracks.indices.contains(t), automationShown.contains(t) {
            let count = session.tracks[t].automation.count
            let next = (selectedLaneIndex ?? -1) + 1
            if next < count {
                selectedLane = next
                return
            }
        }
        selectTrack(t + 1)
    }

    /// What a key does on a selected lane: true when it acted (the key then means nothing else).
    func performOnLane(_ action: Action) -> Bool {
        guard selectedLaneIndex != nil else { return false }
        switch action {
        case .selectRegion: addAutomationPoint()
        case .deleteRegion: deleteAutomationPoint()
        case .moveLeft, .moveRight: moveAutomationPoint(steps: action == .moveLeft ? -1 : 1)
        case .faderDown, .faderUp, .faderDownCoarse, .faderUpCoarse:
            stepAutomationPoint(steps: action == .faderDown || action == .faderDownCoarse ? -1 : 1,
                                coarse: action == .faderDownCoarse || action == .faderUpCoarse)
        default: return false
        }
        return true
    }

    /// The point of `lane` in the playhead's column (the nearest, when several), if any.
    func automationPointAtPlayhead(_ lane: AutomationLane) -> Int? {
        let reach = max(framesPerColumn / 2, 1)
        let at = lane.insertionIndex(playheadFrame - reach)
        var best: Int?
        var k = at
        while k < lane.points.count && lane.points[k].frame <= playheadFrame + reach {
            if best.map({ abs(lane.points[k].frame - playheadFrame) < abs(lane.points[$0].frame - playheadFrame) }) ?? true { best = k }
            k += 1
        }
        return best
    }

    /// A point on the selected lane at the playhead, on the snap grid, at the value heard there.
    func addAutomationPoint() {
        guard let k = selectedLaneIndex else { return }
        let t = selectedTrack
        let track = session.tracks[t]
        let lane = track.automation[k]
        let frame = snapFrame(playheadFrame)
        let value = lane.value(at: frame) ?? track.controlValue(lane.parameter, chain: chain(t).value) ?? 0
        guard automationEdit(.add(strip: t, lane.parameter, [AutomationPoint(frame: frame, value: value)], replacing: false)) else { return }
        locate(frame)
        say("\(track.name) \(lane.parameter): \(lane.parameter.valueText(value)) at \(timeText(frame))")
    }

    /// Deletes the selected lane's point at the playhead.
    func deleteAutomationPoint() {
        guard let k = selectedLaneIndex else { return }
        let t = selectedTrack
        let lane = session.tracks[t].automation[k]
        guard let p = automationPointAtPlayhead(lane) else { say("no \(lane.parameter) point at the playhead", error: true); return }
        let point = lane.points[p]
        // The lane stays when its last point goes: it is still shown and selected.
        guard automationEdit(.clear(strip: t, lane.parameter, FrameRange(startFrame: point.frame, endFrame: point.frame + 1), droppingEmptyLane: false)) else { return }
        say("deleted the \(lane.parameter) point at \(timeText(point.frame))")
    }

    /// Moves the selected lane's point at the playhead a grid step; the playhead follows it.
    func moveAutomationPoint(steps: Int) {
        guard let k = selectedLaneIndex else { return }
        let t = selectedTrack
        let lane = session.tracks[t].automation[k]
        guard let p = automationPointAtPlayhead(lane) else { say("no \(lane.parameter) point at the playhead", error: true); return }
        let from = lane.points[p].frame
        let to = stepFrame(from: from, steps: steps)
        guard to != from else { return }
        guard automationEdit(.move(strip: t, lane.parameter, fromFrame: from, toFrame: to)) else { return }
        locate(to)
        say("\(lane.parameter) point at \(timeText(to))")
    }

    /// Steps the value of the selected lane's point at the playhead (a level by 0.5 or 3 dB,
    /// a pan by 5 or 25, a mute on or off, a node's parameter by 1 % or 10 % of its range).
    func stepAutomationPoint(steps: Int, coarse: Bool) {
        guard let k = selectedLaneIndex else { return }
        let t = selectedTrack
        let track = session.tracks[t]
        let lane = track.automation[k]
        guard let p = automationPointAtPlayhead(lane) else {
            say("no \(lane.parameter) point at the playhead (\(keyName(.selectRegion)) adds one)", error: true)
            return
        }
        let old = lane.points[p].value
        let new: Double
        switch lane.parameter {
        case .gain, .send: new = Fader.stepped(old, steps: steps, coarse: coarse)
        case .pan: new = Pan.stepped(old, steps: steps, coarse: coarse)
        case .mute: new = steps > 0 ? 1 : 0
        case .node(let node, let id):
            let range = parameterRange(t, node: node, id: id)
            let step = (range.map { $0.upperBound - $0.lowerBound } ?? max(abs(old), 1)) * (coarse ? 0.1 : 0.01)
            let moved = old + Double(steps) * step
            new = range.map { min(max(moved, $0.lowerBound), $0.upperBound) } ?? moved
        }
        var point = lane.points[p]
        point.value = new
        guard automationEdit(.add(strip: t, lane.parameter, [point], replacing: false)) else { return }
        say("\(track.name) \(lane.parameter): \(lane.parameter.valueText(new)) at \(timeText(point.frame))")
    }

    /// The selected lane's mode, one step on (off → play → touch → latch → write).
    func cycleAutomationMode() {
        guard let k = selectedLaneIndex else {
            say("select an automation lane first (\(keyName(.automationLanes)) shows them, \(keyName(.down)) selects)", error: true)
            return
        }
        let t = selectedTrack
        let lane = session.tracks[t].automation[k]
        let all = AutomationMode.allCases
        let next = all[((all.firstIndex(of: lane.mode) ?? 0) + 1) % all.count]
        guard automationEdit(.mode(strip: t, lane.parameter, next)) else { return }
        say("\(session.tracks[t].name) \(lane.parameter): \(next.rawValue)")
    }

    /// Asks for a new lane's parameter.
    func openNewAutomationLane() {
        guard let t = requireTrack() else { return }
        overlay = .text(TextInput(purpose: .automationLane(track: t),
                                  prompt: "New automation lane on \(session.tracks[t].name) (gain, pan, mute, send:BUS, NODE.PARAM):",
                                  text: "", problem: nil))
    }

    /// Adds the lane typed in the dialog (its first point at the playhead, at the control's
    /// value, so it changes nothing until edited); the problem when there is one.
    func addAutomationLane(_ text: String, track t: Int) -> String? {
        guard session.tracks.indices.contains(t) else { return "the track is gone" }
        let parameter: AutomationParameter
        do { parameter = try AutomationParameter.parse(text) } catch { return error.description }
        let track = session.tracks[t]
        if let k = track.laneIndex(parameter) { return "\(track.name) has a \(track.automation[k].parameter) lane already" }
        if case .send(let bus) = parameter, !track.sends.contains(where: { $0.bus.lowercased() == bus.lowercased() }) {
            return "\(track.name) has no send to '\(bus.terminalSafe)'"
        }
        guard let value = track.controlValue(parameter, chain: chain(t).value) else { return "\(track.name)'s chain has no \(parameter)" }
        let frame = playheadFrame
        // A lane the track does not have: the change makes it, last.
        guard automationEdit(.add(strip: t, parameter, [AutomationPoint(frame: frame, value: value)], replacing: false)) else { return message?.text }
        automationShown.insert(t)
        selectedLane = session.tracks[t].automation.count - 1
        say("\(track.name) \(parameter): a lane, one point at \(timeText(frame))")
        return nil
    }

    /// What a fader, pan or send-level key steps from: the control's own value, but — rolling, its lane in
    /// touch or latch playing, and no key holding it (in touch: none in the last half second;
    /// in latch: none since the transport started) — the lane's value at the playhead, which
    /// is what is heard: a hand takes a moving fader where it is.
    func handBase(_ t: Int, _ parameter: AutomationParameter, own: Double) -> Double {
        if snapshot.state == .stopped { handHeldAt.removeAll() }
        let track = session.tracks[t]
        guard snapshot.state != .stopped, let k = track.laneIndex(parameter),
              track.automation[k].mode == .touch || track.automation[k].mode == .latch,
              let heard = track.automation[k].value(at: playheadFrame) else { return own }
        let key = "\(t) \(parameter)", now = MonotonicClock.seconds()
        let held = handHeldAt[key].map { track.automation[k].mode == .latch || now - $0 < 0.5 } ?? false
        handHeldAt[key] = now
        return held ? own : heard
    }

    /// What the strip's fader or pan is heard at now: its lane's value at the playhead when
    /// that lane plays and no hand holds it (in touch: no key in the last half second; in
    /// latch: none since the transport started), else the control's own value — and whether
    /// the lane gives it (the track list shows it so, as a moving fader shows it in a DAW).
    func heardValue(_ t: Int, _ parameter: AutomationParameter, own: Double) -> (value: Double, automated: Bool) {
        let track = session.tracks[t]
        // A pass writing the lane: what it writes is what is heard (a controller's move too,
        // which no key press marks as held).
        if let k = track.laneIndex(parameter), let shown = shownLane(t, k), let written = shown.value(at: playheadFrame) {
            return (written, true)
        }
        guard let k = track.laneIndex(parameter), track.automation[k].mode != .off, track.automation[k].mode != .write,
              let heard = track.automation[k].value(at: playheadFrame) else { return (own, false) }
        let mode = track.automation[k].mode
        if snapshot.state != .stopped, mode == .touch || mode == .latch, let at = handHeldAt["\(t) \(parameter)"],
           mode == .latch || MonotonicClock.seconds() - at < 0.5 {
            return (own, false)
        }
        return (heard, true)
    }

    /// The frame nearest `frame` on the snap grid (itself with snap off).
    private func snapFrame(_ frame: Int64) -> Int64 {
        let back = stepFrame(from: frame + 1, steps: -1), on = stepFrame(from: back, steps: 1)
        return frame - back <= on - frame ? back : on
    }

    /// A node parameter's range on track `t` (from its definition), if the chain and node know
    /// it. The chain as ``chains`` read it: this runs while drawing.
    func parameterRange(_ t: Int, node: String, id: String) -> ClosedRange<Double>? {
        guard session.tracks.indices.contains(t),
              let d = session.tracks[t].nodeParameter(node, id, in: chain(t).value)?.definition, d.minimum <= d.maximum else { return nil }
        return d.minimum...d.maximum
    }

    /// A timeline frame as the message line shows times.
    func timeText(_ frame: Int64) -> String { TimeText.clock(frames: frame, sampleRate: session.sampleRate) }
}
