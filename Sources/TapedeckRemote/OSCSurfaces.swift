import TapedeckCore
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

/// OSC surfaces, served for any host (the screen, headless `play` and `record`): the one
/// place an OSC message becomes an action. It reads what arrived, keeps the registered
/// surfaces (their banks and selections), turns each command into the host's own verbs
/// (``OSCHost``): transport requests into the control socket's commands, strip requests into
/// typed mixer changes checked against the session of that moment, and sends registered
/// surfaces what changed.
///
/// Malformed datagrams and addresses Tapedeck does not answer are dropped quietly (a surface
/// sends many it means for other programs), and so are a button's releases; a well-formed
/// request that cannot be done is said by the host (``OSCHost/refuse(_:)``). The host's
/// thread only.
public final class OSCSurfaces {
    let server: OSCServer
    /// The feedback sent to registered surfaces.
    public let feedback: OSCFeedback
    /// Seconds after which a continuous control's next move starts a new undo step.
    static let gestureSeconds = 1.0
    /// The fastest wind (`/ffwd`, `/rewind` pressed again and again: 2, 3, 4.5… times).
    static let maximumWindSpeed = 8.0
    /// When each surface's control (peer and address and strip) last moved.
    private var lastMove: [String: Double] = [:]
    private let clock: () -> Double
    /// The wind under way, the speed to go back to when it ends, and when the playhead was
    /// last stepped back (a wind forwards: when it last sped up).
    private(set) var wind: OSCWind = .none
    private var speedBeforeWind = 1.0
    private var windSteppedAt = 0.0

    /// Serves `server`; `clock` is monotonic seconds (a test may drive its own).
    public init(server: OSCServer, clock: (() -> Double)? = nil) {
        self.server = server
        self.feedback = OSCFeedback(server: server)
        self.clock = clock ?? OSCSurfaces.seconds
    }

    /// The socket to wait on.
    public var pollDescriptors: [pollfd] { server.pollDescriptors }

    /// How long the owner's loop may sleep before ``service(_:)`` is due again (a frame of
    /// feedback, a step of a wind backwards), or nil: until something arrives.
    public func secondsUntilDue() -> Double? {
        let now = clock()
        if case .backward = wind { return 1 / OSCFeedback.framesPerSecond }
        return feedback.secondsUntilDue(now: now)
    }

    /// Carries out what arrived (a bounded number, see ``OSCServer/receive(limit:)``) on
    /// `host`, then sends registered surfaces what changed.
    public func service(_ host: OSCHost) {
        let now = clock()
        for request in server.receive() {
            guard case .success(let command) = request.command else { continue }
            switch command {
            case .ignored: continue
            case .setSurface(let settings): feedback.register(request.peer, settings: settings, now: now)
            case .refresh: feedback.register(request.peer, settings: nil, now: now)
            case .stripList: feedback.list(to: request.peer, host.oscView)
            default:
                let key = gestureKey(command).map { "\(request.peer) \($0)" }
                let continuing = key.flatMap { lastMove[$0] }.map { now - $0 < OSCSurfaces.gestureSeconds } ?? false
                if let key {
                    if lastMove.count > 1024 { lastMove.removeAll() } // bounded, whatever a surface sends
                    lastMove[key] = now
                }
                if let problem = carryOut(command, on: host, from: request.peer, continuing: continuing, now: now) {
                    host.refuse("\(request.peer.description.terminalSafe): \(problem)")
                }
            }
        }
        stepWind(host, now: now)
        guard feedback.surfaceCount > 0 else { return }
        feedback.update(host.oscView, wind: wind, now: now)
    }

    /// One command on `host`; the refusal, or nil.
    func carryOut(_ command: OSCCommand, on host: OSCHost, from sender: OSCPeer, continuing: Bool, now: Double) -> String? {
        let peer = sender.description
        let view = host.oscView
        let rolling = view.transport.rolling
        switch command {
        case .rewind, .fastForward: return startWind(forward: command == .fastForward, host, view, peer, now: now)
        case .play, .stop, .toggleRoll, .gotoStart, .gotoEnd, .locate, .nextMarker, .previousMarker:
            if let problem = endWind(host, peer) { return problem }
        default: break
        }
        switch command {
        case .play: return host.perform(.transport(.play), from: .osc(peer), continuing: false)
        case .stop: return host.perform(.transport(.stop), from: .osc(peer), continuing: false)
        case .toggleRoll: return host.perform(.transport(rolling ? .stop : .play), from: .osc(peer), continuing: false)
        case .gotoStart: return host.perform(.transport(.rewind), from: .osc(peer), continuing: false)
        case .gotoEnd: return host.perform(.transport(.locate("\(view.endFrame)f")), from: .osc(peer), continuing: false)
        case .locate(let frame, let roll):
            if let problem = host.perform(.transport(.locate("\(frame)f")), from: .osc(peer), continuing: false) { return problem }
            if roll && !rolling { return host.perform(.transport(.play), from: .osc(peer), continuing: false) }
            if !roll && rolling && !view.stopEnds { return host.perform(.transport(.stop), from: .osc(peer), continuing: false) }
            return nil
        case .recordToggle: return host.perform(.transport(.record), from: .osc(peer), continuing: false)
        case .loopToggle: return host.perform(.transport(.loopToggle), from: .osc(peer), continuing: false)
        case .saveState: return host.perform(.transport(.save), from: .osc(peer), continuing: false)
        case .addMarker(let name): return host.perform(.addMarker(name: name), from: .osc(peer), continuing: false)
        case .nextMarker, .previousMarker:
            let next = command == .nextMarker
            let at = view.transport.frame
            guard let marker = next ? view.session.nextMarker(after: at) : view.session.previousMarker(before: at) else {
                return "\(next ? "/next_marker" : "/prev_marker"): no marker \(next ? "after" : "before") the playhead"
            }
            return host.perform(.transport(.locate("\(marker.frame)f")), from: .osc(peer), continuing: false)
        case .setSurface, .refresh, .stripList, .ignored, .rewind, .fastForward:
            return nil // kept by service(_:) and above
        case .bankUp, .bankDown:
            let size = feedback.surface(of: sender).settings.bankSize
            guard size > 0 else { return nil } // no banks: every strip is shown (Ardour's bank size 0)
            feedback.change(sender, now: now) { $0.bank += command == .bankUp ? size : -size }
            return nil
        case .setBank(let bank):
            feedback.change(sender, now: now) { $0.bank = bank }
            return nil
        case .stripSelect(let id):
            guard let t = feedback.track(id, for: sender, in: view.session) else { return noStrip(id, "/strip/select", view) }
            // Ardour's plugin page keeps its plugin number, back at its first page.
            feedback.change(sender, now: now) { $0.selected = t; $0.pluginPage = 1 }
            return nil
        case .selectPlugin, .pluginPage, .pluginActive, .pluginParameter:
            return pluginCommand(command, host, sender, view, continuing: continuing, now: now)
        case .stripRecordEnable(let ref, let on):
            return strip(ref, "recenable", sender, view) { t in host.perform(.arm(strip: t, on: on), from: .osc(peer), continuing: false) }
        case .stripMonitorInput(let ref, let on):
            return strip(ref, "monitor_input", sender, view) { t in
                host.perform(.monitor(strip: t, mode: on ? .input : .auto), from: .osc(peer), continuing: false)
            }
        case .stripTrim(let ref, _):
            return strip(ref, "trimdB", sender, view) { _ in "Tapedeck's strips have no trim: use the fader, or a gain node in the input chain" }
        case .stripGain(let ref, let db), .stripFader(let ref, let db):
            let what = if case .stripGain = command { "gain" } else { "fader" }
            if ref == .master { return host.perform(.mixer(.masterGain(decibels: db)), from: .osc(peer), continuing: continuing) }
            return strip(ref, what, sender, view) { t in host.perform(.mixer(.gain(strip: t, decibels: db)), from: .osc(peer), continuing: continuing) }
        case .stripPan(let ref, let pan):
            return strip(ref, "pan_stereo_position", sender, view) { t in host.perform(.mixer(.pan(strip: t, value: pan)), from: .osc(peer), continuing: continuing) }
        case .stripMute(let ref, let on):
            return strip(ref, "mute", sender, view) { t in host.perform(.mixer(.mute(strip: t, on: on)), from: .osc(peer), continuing: false) }
        case .stripSolo(let ref, let on):
            return strip(ref, "solo", sender, view) { t in host.perform(.mixer(.solo(strip: t, on: on)), from: .osc(peer), continuing: false) }
        case .sendGain(let ref, let send, let db):
            return strip(ref, "send/gain", sender, view) { t in
                host.perform(.mixer(.sendLevel(strip: t, send: send - 1, decibels: db)), from: .osc(peer), continuing: continuing)
            }
        }
    }

    /// Runs `body` on the track `ref` names for `sender` (its bank, its selection); its
    /// refusal (after the address), or why not.
    private func strip(_ ref: OSCStripRef, _ name: String, _ sender: OSCPeer, _ view: OSCView, _ body: (Int) -> String?) -> String? {
        switch ref {
        case .master:
            return "/master/\(name): Tapedeck's master has a fader only (no \(name.replacingOccurrences(of: "_", with: " ")))"
        case .selected:
            guard let t = feedback.surface(of: sender).selected, view.session.tracks.indices.contains(t) else {
                return "/select/\(name): no strip selected (select one with /strip/select SSID 1)"
            }
            return body(t).map { "/select/\(name): \($0)" }
        case .id(let id):
            guard let t = feedback.track(id, for: sender, in: view.session) else { return noStrip(id, "/strip/\(name)", view) }
            return body(t).map { "/strip/\(name): \($0)" }
        }
    }

    private func noStrip(_ id: Int, _ address: String, _ view: OSCView) -> String {
        "\(address): no strip \(id): the session has \(view.session.tracks.count) (ids are 1-based in track order, in the surface's bank)"
    }

    // MARK: - Fast wind

    /// `/ffwd`: rolling at 2 times, then 1.5 times faster at each press (up to
    /// ``maximumWindSpeed``), heard as varispeed; `/rewind`: the playhead stepped backwards at
    /// the same speeds (Tapedeck does not play backwards), the transport stopped meanwhile
    /// unless stopping would end the host. Play, stop, a locate or a marker jump end it.
    private func startWind(forward: Bool, _ host: OSCHost, _ view: OSCView, _ peer: String, now: Double) -> String? {
        if view.transport.recording {
            return "\(forward ? "/ffwd" : "/rewind"): a take is being recorded (a take is never torn in two); stop first"
        }
        var speed = 2.0
        switch (wind, forward) {
        case (.forward(let s), true), (.backward(let s), false): speed = min(s * 1.5, OSCSurfaces.maximumWindSpeed)
        case (.none, _): speedBeforeWind = view.speed
        case (.backward, true): break
        case (.forward, false):
            if let problem = host.perform(.transport(.speed(speedBeforeWind)), from: .osc(peer), continuing: false) { return problem }
        }
        if forward {
            if let problem = host.perform(.transport(.speed(speed)), from: .osc(peer), continuing: false) { return problem }
            if !view.transport.rolling, let problem = host.perform(.transport(.play), from: .osc(peer), continuing: false) { return problem }
            wind = .forward(speed: speed)
            windSteppedAt = now
        } else {
            if view.transport.rolling && !view.stopEnds, let problem = host.perform(.transport(.stop), from: .osc(peer), continuing: false) { return problem }
            if case .backward = wind {} else { windSteppedAt = now }
            wind = .backward(speed: speed)
        }
        return nil
    }

    /// Ends a wind: the speed from before it is back.
    private func endWind(_ host: OSCHost, _ peer: String) -> String? {
        defer { wind = .none }
        if case .forward = wind { return host.perform(.transport(.speed(speedBeforeWind)), from: .osc(peer), continuing: false) }
        return nil
    }

    /// A wind backwards moves the playhead back by the time since the last step at its speed
    /// (plus the time played meanwhile, when the transport rolls on); at the start it ends.
    private func stepWind(_ host: OSCHost, now: Double) {
        // A wind forwards that stopped by itself (the end of the session, of `play --to`)
        // is over: the speed from before it is back, and the surface's /ffwd goes out.
        if case .forward = wind, now - windSteppedAt > 0.5, !host.oscView.transport.rolling {
            _ = endWind(host, "/ffwd")
            return
        }
        guard case .backward(let speed) = wind else { return }
        let view = host.oscView
        let elapsed = now - windSteppedAt
        guard elapsed >= 1 / OSCFeedback.framesPerSecond else { return }
        windSteppedAt = now
        let back = Int64(elapsed * (speed + (view.transport.rolling ? view.speed : 0)) * Double(view.transport.sampleRate))
        let target = max(0, view.transport.frame - back)
        if host.perform(.transport(.locate("\(target)f")), from: .osc("/rewind"), continuing: false) != nil || target == 0 { wind = .none }
    }

    /// Monotonic seconds (the rate bounds and gestures must not follow the wall clock).
    public static func seconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// The control a continuous command moves, or nil for one that is a step of its own.
    private func gestureKey(_ command: OSCCommand) -> String? {
        switch command {
        case .stripGain(let s, _), .stripFader(let s, _): return "gain \(s)"
        case .stripPan(let s, _): return "pan \(s)"
        case .sendGain(let s, let n, _): return "send \(s) \(n)"
        // A plugin page's control: by its slot (a page or node change moves on to the next).
        case .pluginParameter(let plugin, let parameter, _): return "plugin \(plugin ?? 0) \(parameter)"
        default: return nil
        }
    }
}
