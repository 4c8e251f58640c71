import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// OSC surfaces, served for any host (the screen, headless `play` and `record`): the one
/// place an OSC message becomes an action. It reads what arrived, keeps the registered
/// surfaces, turns each command into the host's own verbs (``OSCHost``): transport requests
/// into the control socket's commands, strip requests into typed mixer changes checked
/// against the session of that moment, and sends registered surfaces what changed.
///
/// Malformed datagrams and addresses Tapedeck does not answer are dropped quietly (a surface
/// sends many it means for other programs); a well-formed request that cannot be done is said
/// by the host (``OSCHost/refuse(_:)``). The host's thread only.
public final class OSCSurfaces {
    let server: OSCServer
    /// The feedback sent to registered surfaces.
    public let feedback: OSCFeedback
    /// Seconds after which a continuous control's next move starts a new undo step.
    static let gestureSeconds = 1.0
    /// When each surface's control (peer and address and strip) last moved.
    private var lastMove: [String: Double] = [:]
    private let clock: () -> Double

    /// Serves `server`; `clock` is monotonic seconds (a test may drive its own).
    public init(server: OSCServer, clock: (() -> Double)? = nil) {
        self.server = server
        self.feedback = OSCFeedback(server: server)
        self.clock = clock ?? OSCSurfaces.seconds
    }

    /// The socket to wait on.
    public var pollDescriptors: [pollfd] { server.pollDescriptors }

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
            default:
                let key = gestureKey(command).map { "\(request.peer) \($0)" }
                let continuing = key.flatMap { lastMove[$0] }.map { now - $0 < OSCSurfaces.gestureSeconds } ?? false
                if let key {
                    if lastMove.count > 1024 { lastMove.removeAll() } // bounded, whatever a surface sends
                    lastMove[key] = now
                }
                let peer = request.peer.description
                if let problem = carryOut(command, on: host, from: peer, continuing: continuing) {
                    host.refuse("\(peer.terminalSafe): \(problem)")
                }
            }
        }
        guard feedback.surfaceCount > 0 else { return }
        feedback.update(host.oscView, now: now)
    }

    /// How long the owner's loop may sleep before ``service(_:)`` is due again (the next
    /// frame of feedback), or nil: until something arrives.
    public func secondsUntilDue() -> Double? { feedback.secondsUntilDue(now: clock()) }

    /// One command on `host`; the refusal, or nil.
    func carryOut(_ command: OSCCommand, on host: OSCHost, from peer: String, continuing: Bool) -> String? {
        let view = host.oscView
        let rolling = view.transport.rolling
        switch command {
        case .play: return host.perform(.play, from: peer)
        case .stop: return host.perform(.stop, from: peer)
        case .toggleRoll: return host.perform(rolling ? .stop : .play, from: peer)
        case .gotoStart: return host.perform(.rewind, from: peer)
        case .gotoEnd: return host.perform(.locate("\(view.endFrame)f"), from: peer)
        case .locate(let frame, let roll):
            if let problem = host.perform(.locate("\(frame)f"), from: peer) { return problem }
            if roll && !rolling { return host.perform(.play, from: peer) }
            if !roll && rolling && !view.stopEnds { return host.perform(.stop, from: peer) }
            return nil
        case .recordToggle: return host.perform(.record, from: peer)
        case .loopToggle: return host.perform(.loop(!view.transport.loop), from: peer)
        case .addMarker(let name): return host.addMarker(named: name, from: peer)
        case .nextMarker, .previousMarker:
            let next = command == .nextMarker
            let at = view.transport.frame
            guard let marker = next ? view.session.nextMarker(after: at) : view.session.previousMarker(before: at) else {
                return "\(next ? "/next_marker" : "/prev_marker"): no marker \(next ? "after" : "before") the playhead"
            }
            return host.perform(.locate("\(marker.frame)f"), from: peer)
        case .setSurface, .refresh, .ignored:
            return nil // kept (or dropped) by service(_:)
        case .stripRecordEnable(let id, let on):
            return strip(id, "/strip/recenable", view) { t in
                view.session.tracks[t].isBus ? "\(view.session.tracks[t].name) is a bus: a bus has no input to arm" : host.arm(strip: t, on: on, from: peer)
            }
        case .stripGain(let id, let db), .stripFader(let id, let db):
            let address = if case .stripGain = command { "/strip/gain" } else { "/strip/fader" }
            return strip(id, address, view) { t in host.apply(.gain(strip: t, decibels: db), from: peer, continuing: continuing) }
        case .stripPan(let id, let pan):
            return strip(id, "/strip/pan_stereo_position", view) { t in host.apply(.pan(strip: t, value: pan), from: peer, continuing: continuing) }
        case .stripMute(let id, let on):
            return strip(id, "/strip/mute", view) { t in host.apply(.mute(strip: t, on: on), from: peer, continuing: false) }
        case .stripSolo(let id, let on):
            return strip(id, "/strip/solo", view) { t in host.apply(.solo(strip: t, on: on), from: peer, continuing: false) }
        case .sendGain(let id, let send, let db):
            return strip(id, "/strip/send/gain", view) { t in
                let track = view.session.tracks[t]
                guard track.sends.indices.contains(send - 1) else {
                    return "\(track.name) has \(track.sends.count) send\(track.sends.count == 1 ? "" : "s"), no send \(send)"
                }
                return host.apply(.sendLevel(strip: t, send: send - 1, decibels: db), from: peer, continuing: continuing)
            }
        }
    }

    /// Runs `body` on strip `id` (1-based) when the session has it; its refusal (after the
    /// address), or why not.
    private func strip(_ id: Int, _ address: String, _ view: OSCView, _ body: (Int) -> String?) -> String? {
        guard view.session.tracks.indices.contains(id - 1) else {
            return "\(address): no strip \(id): the session has \(view.session.tracks.count) (ids are 1-based in track order)"
        }
        return body(id - 1).map { "\(address): \($0)" }
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
        default: return nil
        }
    }
}
