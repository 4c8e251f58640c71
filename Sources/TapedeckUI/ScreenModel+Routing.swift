import TapedeckCore

// MARK: - Routing on the screen: buses, sends, outputs, solo-safe. Every edit is one undoable
// step, and one that would leave the routing broken (a cycle, a name that is no bus) is
// refused with the session's own line for it before anything changes.

extension ScreenModel {
    /// Whether strip `index` is a bus.
    func isBus(_ index: Int) -> Bool { session.tracks.indices.contains(index) && session.tracks[index].isBus }

    /// The send of strip `strip` the send keys act on: the one chosen with the send-next key,
    /// else the first; nil when the strip has none.
    func currentSend(of strip: Int) -> Int? {
        guard session.tracks.indices.contains(strip) else { return nil }
        let count = session.tracks[strip].sends.count
        return count == 0 ? nil : min(max(0, selectedSend), count - 1)
    }

    /// Applies a routing change (the one `tapedeck bus`, `send` and `track` make too) as one
    /// undoable step when the result routes; otherwise says the session's line for the
    /// problem and changes nothing. Returns whether it applied.
    @discardableResult
    func routingEdit(_ change: RoutingChange) -> Bool {
        do {
            try owner.change { try $0.apply(change) }
        } catch {
            say("\(error)", error: true)
            return false
        }
        return true
    }

    /// The selected strip when it is not a bus, else nil after saying that a bus has no
    /// `what` (its input, its regions): a bus only sums what is routed to it.
    func requireNonBus(_ what: String) -> Int? {
        guard let t = requireTrack() else { return nil }
        guard !session.tracks[t].isBus else {
            say("\(session.tracks[t].name) is a bus: a bus has no \(what)", error: true)
            return nil
        }
        return t
    }

    // MARK: Buses

    /// Asks for a new bus's name (its width next).
    func openNewBus() {
        var n = 1
        while NameMatch.index(of: "Bus \(n)", in: session.tracks.map(\.name)) != nil { n += 1 }
        overlay = .text(TextInput(purpose: .newBus, prompt: "Name of the new bus:", text: "Bus \(n)", offered: true))
    }

    /// Asks whether the bus called `name` is stereo or mono.
    func openBusWidth(name: String) {
        overlay = .choice(Choice(purpose: .busWidth(name: name), title: "New bus \(name)", items: ["stereo", "mono"], selected: 0,
                                 note: "s stereo · m mono"))
    }

    /// Adds the bus, selected.
    func addBus(name: String, channelCount: Int) {
        guard trackNameProblem(name, index: -1) == nil else { return }
        guard routingEdit(.addBus(name: name, channelCount: channelCount)) else { return }
        selectTrack(session.tracks.count - 1)
        say("new \(channelCount == 1 ? "mono" : "stereo") bus \(name) (\(keyName(.send)) sends a track to it, \(keyName(.output)) routes an output to it)")
    }

    /// Removes bus `index`: what went to it goes to the master, sends to it are removed.
    func deleteBus(_ index: Int) {
        guard isBus(index) else { return }
        let name = session.tracks[index].name
        // Counted rather than listed: a bus many strips fed would not fit one line.
        let key = name.lowercased()
        let outputs = session.tracks.filter { if case .bus(let n) = $0.output { n.lowercased() == key } else { false } }.count
        let sends = session.tracks.filter { $0.sends.contains { $0.bus.lowercased() == key } }.count
        guard routingEdit(.removeStrip(index)) else { return }
        expandedTracks = Set(expandedTracks.compactMap { $0 == index ? nil : ($0 > index ? $0 - 1 : $0) })
        selectTrack(selectedTrack)
        var what: [String] = []
        if outputs > 0 { what.append("\(outputs) output\(outputs == 1 ? "" : "s") to the master") }
        if sends > 0 { what.append("\(sends) send\(sends == 1 ? "" : "s") gone") }
        say("removed bus \(name)\(what.isEmpty ? "" : ": " + what.joined(separator: ", ")) (\(keyName(.undo)) brings it back)")
    }

    /// The solo-safe switch of the selected bus.
    func toggleSoloSafe() {
        guard let t = requireTrack() else { return }
        guard session.tracks[t].isBus else {
            say("\(session.tracks[t].name) is a track: only a bus is solo-safe (stays heard whatever is soloed)", error: true)
            return
        }
        let safe = !session.tracks[t].isSoloSafe
        guard routingEdit(.soloSafe(strip: t, on: safe)) else { return }
        say("\(session.tracks[t].name) \(safe ? "is solo-safe: heard whatever is soloed" : "follows solo again")")
    }

    // MARK: Sends

    /// Offers the buses the selected strip may send to.
    func openAddSend() {
        guard let t = requireTrack() else { return }
        let strip = session.tracks[t]
        let buses = session.buses.filter { $0.index != t }.map(\.track.name)
        guard !buses.isEmpty else {
            say("no bus to send to: \(keyName(.newBus)) makes one", error: true)
            return
        }
        guard strip.sends.count < SessionLimits.maximumSends else {
            say("\(strip.name) has \(strip.sends.count) sends, at most \(SessionLimits.maximumSends)", error: true)
            return
        }
        overlay = .choice(Choice(purpose: .sendTo(strip: t), title: "Send \(strip.name) to", items: buses, selected: 0,
                                 note: "a new send is post-fader at 0 dB"))
    }

    /// Adds a post-fader send at unity from strip `strip` to the bus called `bus`, and makes
    /// it the current send.
    func addSend(strip: Int, bus: String) {
        guard session.tracks.indices.contains(strip) else { return }
        let name = session.tracks[strip].name
        if session.tracks[strip].sends.contains(where: { $0.bus.lowercased() == bus.lowercased() }) {
            say("\(name) already sends to \(bus): \(keyName(.sendNext)) chooses it", error: true)
            return
        }
        guard routingEdit(.setSend(strip: strip, Send(bus: bus))) else { return }
        selectedSend = session.tracks[strip].sends.count - 1
        say("\(name) sends to \(bus) at 0.0 dB post-fader (\(keyName(.sendDown)) \(keyName(.sendUp)) level, \(keyName(.sendPre)) pre/post)")
    }

    /// The selected strip and its current send, or nil after saying there is none.
    private func requireSend() -> (strip: Int, send: Int)? {
        guard let t = requireTrack() else { return nil }
        guard let k = currentSend(of: t) else {
            say("\(session.tracks[t].name) has no sends: \(keyName(.send)) adds one", error: true)
            return nil
        }
        return (t, k)
    }

    /// `Drums → Reverb -6.0 dB pre-fader` for messages.
    func describeSend(strip: Int, send k: Int) -> String {
        let s = session.tracks[strip].sends[k]
        return "\(session.tracks[strip].name) → \(s.bus) \(Fader.text(s.levelDecibels)) dB \(s.preFader ? "pre" : "post")-fader"
    }

    /// Makes the strip's next send the current one.
    func nextSend() {
        guard let t = requireTrack() else { return }
        let count = session.tracks[t].sends.count
        guard count > 0 else { say("\(session.tracks[t].name) has no sends: \(keyName(.send)) adds one", error: true); return }
        selectedSend = ((currentSend(of: t) ?? 0) + 1) % count
        say("send \(selectedSend + 1)/\(count): \(describeSend(strip: t, send: selectedSend))")
    }

    /// Removes the current send.
    func removeSend() {
        guard let (t, k) = requireSend() else { return }
        let bus = session.tracks[t].sends[k].bus
        guard routingEdit(.removeSend(strip: t, bus: bus)) else { return }
        selectedSend = max(0, k - 1)
        say("\(session.tracks[t].name) no longer sends to \(bus) (\(keyName(.undo)) brings it back)")
    }

    /// Moves the current send's level by fine or coarse steps (on the fader's grid).
    func stepSend(steps: Int, coarse: Bool) {
        guard let (t, k) = requireSend() else { return }
        // Over its lane in touch or latch, rolling: from the level heard (the lane's).
        let send = session.tracks[t].sends[k]
        let next = Fader.stepped(handBase(t, .send(send.bus), own: send.levelDecibels), steps: steps, coarse: coarse)
        keyCommand(.mixer(.sendLevel(strip: t, send: k, decibels: next)))
    }

    /// Asks for the current send's level.
    func openSendLevel() {
        guard let (t, k) = requireSend() else { return }
        let s = session.tracks[t].sends[k]
        overlay = .text(TextInput(purpose: .sendLevel(strip: t, send: k),
                                  prompt: "Level of \(session.tracks[t].name)'s send to \(s.bus) in dB (-inf: off):",
                                  text: Fader.text(s.levelDecibels), offered: true))
    }

    /// Sets send `k` of strip `t` to the typed level; nil when done, else why not.
    func applySendLevel(_ text: String, strip t: Int, send k: Int) -> String? {
        guard session.tracks.indices.contains(t), session.tracks[t].sends.indices.contains(k) else { return "the send is gone" }
        guard let value = Fader.parse(text) else { return "'\(text.terminalSafe)' is not a level: -6, +1.5, 0 or -inf" }
        if let problem = Fader.problem(value) { return problem }
        let level = Fader.stored(value)
        editMixer("send level \(session.tracks[t].name) to \(session.tracks[t].sends[k].bus)", [.sendLevel(strip: t, send: k, decibels: level)])
        say("send \(describeSend(strip: t, send: k))")
        return nil
    }

    /// Switches the current send between before and after the fader.
    func toggleSendPre() {
        guard let (t, k) = requireSend() else { return }
        var send = session.tracks[t].sends[k]
        let pre = !send.preFader
        send.preFader = pre
        guard routingEdit(.setSend(strip: t, send)) else { return }
        say("send \(describeSend(strip: t, send: k))\(pre ? " (the fader leaves it alone)" : "")")
    }

    // MARK: Outputs

    /// Offers the selected strip's outputs: the master, every other bus, the device's outputs
    /// in pairs and one by one, and other outputs typed.
    func openOutput() {
        guard let t = requireTrack() else { return }
        var items = ["master"] + session.buses.filter { $0.index != t }.map { "bus:" + $0.track.name }
        let outputs = max(1, snapshot.outputChannelCount)
        items += stride(from: 1, to: outputs, by: 2).map { "out:\($0)-\($0 + 1)" }
        items += (1...outputs).map { "out:\($0)" }
        let current = session.tracks[t].output.description.lowercased()
        // Outputs the device lacks stay listed while a strip is routed there.
        if !items.contains(where: { $0.lowercased() == current }) { items.append(session.tracks[t].output.description) }
        items.append(ScreenModel.otherOutputs)
        let selected = items.firstIndex { $0.lowercased() == current } ?? 0
        overlay = .choice(Choice(purpose: .output(strip: t), title: "Output of \(session.tracks[t].name)", items: items,
                                 selected: selected, note: "the device plays \(outputs) output\(outputs == 1 ? "" : "s")"))
    }

    /// The output list's last entry: device outputs typed.
    static let otherOutputs = "other device outputs…"

    /// Routes strip `t` to `output` (refused, unchanged, when that would not route).
    func setOutput(strip t: Int, _ output: StripOutput) {
        guard session.tracks.indices.contains(t) else { return }
        let name = session.tracks[t].name
        guard routingEdit(.output(strip: t, output)) else { return }
        var note = ""
        if case .device(let channels) = output, let last = channels.last, last > snapshot.outputChannelCount {
            let count = snapshot.outputChannelCount
            note = snapshot.isOffline ? " (not heard: the offline device has \(count) outputs)"
                : " (the device has \(count): \(keyName(.devices)), Enter reopens it with \(last))"
        }
        say("\(name) outputs to \(output)\(note)")
    }

    /// Reads typed device outputs (`out:5-6`, `5-6`, `5`) for strip `t`; nil when routed,
    /// else why not.
    func applyTypedOutput(_ text: String, strip t: Int) -> String? {
        let trimmed = text.trimmingWhitespace()
        let spec = trimmed.lowercased().hasPrefix("out:") ? trimmed : "out:" + trimmed
        let output: StripOutput
        do { output = try StripOutput.parse(spec) } catch { return error.description }
        setOutput(strip: t, output)
        return nil
    }

    /// What a choice's Enter (or its letter) does.
    func choose(_ choice: Choice, item: Int) {
        guard choice.items.indices.contains(item) else { overlay = nil; return }
        overlay = nil
        let picked = choice.items[item]
        switch choice.purpose {
        case .sendTo(let strip): addSend(strip: strip, bus: picked)
        case .busWidth(let name): addBus(name: name, channelCount: picked == "mono" ? 1 : 2)
        case .output(let strip):
            if picked == ScreenModel.otherOutputs {
                guard session.tracks.indices.contains(strip) else { return }
                overlay = .text(TextInput(purpose: .output(strip: strip), prompt: "Device outputs of \(session.tracks[strip].name): one (5) or a pair (5-6):",
                                          text: ""))
                return
            }
            do { setOutput(strip: strip, try StripOutput.parse(picked)) } catch { say(error.description, error: true) }
        }
    }
}
