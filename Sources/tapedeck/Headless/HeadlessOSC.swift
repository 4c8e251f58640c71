import Foundation
import TapedeckCore
import TapedeckRemote
import TapedeckTransport
#if canImport(Glibc)
import Glibc
#endif

/// OSC surfaces for `play` and `record` (`--osc PORT`), served from the command's own loop
/// between status lines, as its control socket is: no second thread touches the transport.
///
/// Transport requests are turned into the control socket's commands and answered by
/// ``HeadlessRemote/handle(_:)``, so OSC follows exactly the rules `tapedeck ctl` does: `play`
/// follows transport commands, `record` never moves while a take runs and ends on stop. `play`
/// also takes strip gain, pan, mute, solo and send levels, handed to the transport as typed
/// changes and written to the engine one value each (``Transport/apply(_:)``), for this run
/// only (never saved, but written to automation lanes in touch, latch or write, as a MIDI
/// controller's moves are). Registered surfaces get the screen's feedback (``OSCFeedback``).
///
/// Malformed datagrams and addresses Tapedeck does not answer are dropped quietly, as on the
/// screen; a request that cannot be done is one line on stderr (a JSON `refused` event with
/// `--json`), the same line at most once a second so a fader held on a refused strip does
/// not flood the terminal.
final class HeadlessOSC {
    private let server: OSCServer
    private let feedback: OSCFeedback
    private let remote: HeadlessRemote
    private let json: Bool
    /// Where `/goto_end` goes: where the command stops by itself (a file played alone has no
    /// session end of its own).
    private let endFrame: Int64?
    private var lastSaid: (text: String, at: Double)?

    /// Serves `server` for the command whose control socket is `remote`; nil without a server.
    /// `endFrame`: where playing ends (default: the session's end).
    static func serving(_ server: OSCServer?, remote: HeadlessRemote, json: Bool, endFrame: Int64? = nil) -> HeadlessOSC? {
        server.map { HeadlessOSC(server: $0, remote: remote, json: json, endFrame: endFrame) }
    }

    private init(server: OSCServer, remote: HeadlessRemote, json: Bool, endFrame: Int64?) {
        self.server = server
        self.feedback = OSCFeedback(server: server)
        self.remote = remote
        self.json = json
        self.endFrame = endFrame
    }

    private var transport: Transport { remote.transport }

    /// Carries out what arrived (a bounded number, see ``OSCServer/receive(limit:)``), then
    /// sends registered surfaces what changed; `snapshot` is the loop's own (taking another
    /// here would swallow the notices the status line is due to print). Loop's thread.
    func service(_ snapshot: TransportSnapshot) {
        let now = HeadlessOSC.seconds()
        for request in server.receive() {
            guard case .success(let command) = request.command else { continue }
            switch command {
            case .setSurface(let settings): feedback.register(request.peer, settings: settings, now: now)
            case .refresh: feedback.register(request.peer, settings: nil, now: now)
            default:
                if let problem = handle(command) { say("\(request.peer): \(problem)", now: now) }
            }
        }
        guard feedback.surfaceCount > 0 else { return }
        // After a command the state may have moved on from the loop's snapshot: the position
        // and state come from the engine's status, cheaply, without draining anything.
        feedback.update(strips: strips, meters: meters(snapshot), transport: transportState(snapshot), now: now)
    }

    /// One request; the refusal (one line), or nil.
    private func handle(_ command: OSCCommand) -> String? {
        let rolling = transport.engine.status().transport != .stopped
        switch command {
        case .play: return refusal(remote.handle(.play))
        case .stop: return refusal(remote.handle(.stop))
        case .toggleRoll: return refusal(remote.handle(rolling ? .stop : .play))
        case .gotoStart: return refusal(remote.handle(.rewind))
        case .gotoEnd: return refusal(remote.handle(.locate("\(endFrame ?? transport.session.endFrame)f")))
        case .locate(let frame, _):
            // `play` rolls until it stops and then ends, so roll 0 does not stop it: a
            // surface's locate button (which sends 0) would otherwise end the run.
            return refusal(remote.handle(.locate("\(frame)f")))
        case .recordToggle: return refusal(remote.handle(.record))
        case .loopToggle: return refusal(remote.handle(.loop(!transport.loopEnabled)))
        case .nextMarker, .previousMarker:
            let at = transport.engine.status().positionFrame
            // A recorder refuses any move, marker or not: its own line says why.
            guard remote.role == .play else { return refusal(remote.handle(.locate("\(at)f"))) }
            let next = command == .nextMarker
            guard let marker = next ? transport.session.nextMarker(after: at) : transport.session.previousMarker(before: at) else {
                return "\(next ? "/next_marker" : "/prev_marker"): no marker \(next ? "after" : "before") the playhead"
            }
            return refusal(remote.handle(.locate("\(marker.frame)f")))
        case .addMarker:
            return "/add_marker: \(commandName) has the session open and takes no edits while it runs; add markers from the screen or with 'tapedeck marker' once it stops"
        case .setSurface, .refresh:
            return nil
        case .stripRecordEnable:
            return remote.role == .play
                ? "/strip/recenable: 'tapedeck play' does not record: use 'tapedeck record' or the screen"
                : "/strip/recenable: the tracks that record were chosen when the take started (a take is never torn in two); stop first"
        case .stripGain(let id, let db), .stripFader(let id, let db):
            return mixValue(command, id) { _ in .gain(strip: id - 1, decibels: db) }
        case .stripPan(let id, let pan):
            return mixValue(command, id) { _ in .pan(strip: id - 1, value: pan) }
        case .stripMute(let id, let on):
            return mixValue(command, id) { _ in .mute(strip: id - 1, on: on) }
        case .stripSolo(let id, let on):
            return mixValue(command, id) { _ in .solo(strip: id - 1, on: on) }
        case .sendGain(let id, let send, let db):
            return mix(command, id) { track in
                guard track.sends.indices.contains(send - 1) else {
                    return .failure(Refusal(text: "\(track.name) has \(track.sends.count) send\(track.sends.count == 1 ? "" : "s"), no send \(send)"))
                }
                return .success(.sendLevel(strip: id - 1, send: send - 1, decibels: db))
            }
        }
    }

    /// A mixer change on strip `id` (1-based) for `play`; `record` refuses it: its mix is the
    /// session's as it was when the take began, and a recorder takes only stop while it runs.
    private func mix(_ command: OSCCommand, _ id: Int, _ change: (Track) -> Result<MixerChange, Refusal>) -> String? {
        let address = HeadlessOSC.address(command)
        guard remote.role == .play else {
            let during = remote.role == .listen ? "while it listens" : "while a take runs"
            return "\(address): 'tapedeck record' takes no mixer changes \(during) (only stop); set the mix on the screen or with 'tapedeck track' before recording"
        }
        let session = transport.session
        guard session.tracks.indices.contains(id - 1) else {
            return "\(address): no strip \(id): the session has \(session.tracks.count) (ids are 1-based in track order)"
        }
        switch change(session.tracks[id - 1]) {
        case .failure(let refusal): return "\(address): \(refusal.text)"
        // One value, handed to the transport as it is (a typed change, not a new session).
        case .success(let typed): transport.apply([typed])
        }
        return nil
    }

    /// Why a mixer change names nothing.
    struct Refusal: Error { let text: String }

    private func mixValue(_ command: OSCCommand, _ id: Int, _ change: (Track) -> MixerChange) -> String? {
        mix(command, id) { (track: Track) -> Result<MixerChange, Refusal> in .success(change(track)) }
    }

    /// The reply's refusal, or nil when it was done (then said, as the screen says who asked).
    private func refusal(_ reply: RemoteReply) -> String? {
        switch reply {
        case .error(let text): return text
        case .ok, .json: return nil
        }
    }

    private var commandName: String { remote.role == .play ? "'tapedeck play'" : "'tapedeck record'" }

    /// The address a strip command came on, for its refusal.
    private static func address(_ command: OSCCommand) -> String {
        switch command {
        case .stripGain: "/strip/gain"
        case .stripFader: "/strip/fader"
        case .stripPan: "/strip/pan_stereo_position"
        case .stripMute: "/strip/mute"
        case .stripSolo: "/strip/solo"
        case .sendGain: "/strip/send/gain"
        default: "OSC"
        }
    }

    /// One refusal on stderr (or as a JSON event); the same line again within a second is not
    /// repeated.
    private func say(_ text: String, now: Double) {
        if let last = lastSaid, last.text == text, now - last.at < 1 { return }
        lastSaid = (text, now)
        if json {
            StatusLine.emitLine(["event": "refused", "text": text])
        } else {
            Terminal.err("\r\u{1B}[2K\(text.terminalSafe)\n")
        }
    }

    /// The strips as a surface sees them, in track order.
    private var strips: [OSCStrip] {
        transport.session.tracks.map {
            OSCStrip(name: $0.name, gainDecibels: $0.gainDecibels, pan: $0.pan, mute: $0.mute, solo: $0.solo,
                     recordEnabled: $0.isBus ? nil : $0.armed, sendDecibels: $0.sends.map(\.levelDecibels))
        }
    }

    /// Each strip's peak over its channels (dBFS), as the screen sends them.
    private func meters(_ snap: TransportSnapshot) -> [Double] {
        transport.session.tracks.indices.map { t in
            t < snap.trackLevels.count ? snap.trackLevels[t].map(\.peakDecibels).max() ?? -.infinity : -.infinity
        }
    }

    private func transportState(_ snap: TransportSnapshot) -> OSCTransport {
        let now = transport.engine.status()
        return OSCTransport(rolling: now.transport != .stopped, recording: now.transport != .stopped && snap.state.isRecordingPass,
                            loop: transport.loopEnabled, frame: now.positionFrame, sampleRate: transport.session.sampleRate)
    }

    /// Monotonic seconds (the feedback's rate bound must not follow the wall clock).
    private static func seconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
