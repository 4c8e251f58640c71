import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckRemote
import TapedeckTransport
#if canImport(Glibc)
import Glibc
#endif

/// OSC surfaces for `play` and `record` (`--osc PORT`), served from the command's own loop
/// between status lines, as its control socket is: no second thread touches the transport.
///
/// ``OSCSurfaces`` (the one OSC translation, shared with the screen) turns each message into a
/// ``SurfaceCommand`` for this host: transport requests are the control socket's commands, answered by
/// ``HeadlessRemote/handle(_:)`` through ``ControlAnswer``, so OSC follows exactly the rules
/// `tapedeck ctl` does (`play` follows transport commands, `record` never moves while a take
/// runs and ends on stop).
/// `play` also takes strip gain, pan, mute, solo and send levels, handed to the transport as
/// typed changes and written to the engine one value each (``Transport/apply(_:)``), for this
/// run only (never saved, but written to automation lanes in touch, latch or write, as a MIDI
/// controller's moves are).
///
/// A request that cannot be done is one line on stderr (a JSON `refused` event with
/// `--json`), the same line at most once a second so a fader held on a refused strip does
/// not flood the terminal.
final class HeadlessOSC: OSCHost {
    private let surfaces: OSCSurfaces
    private let remote: HeadlessRemote
    private let json: Bool
    /// Where `/goto_end` goes: where the command stops by itself (a file played alone has no
    /// session end of its own).
    private let endFrame: Int64?
    private var lastSaid: (text: String, at: Double)?
    /// The loop's snapshot of this pass (its meters and recording state).
    private var snapshot: TransportSnapshot?

    /// Serves `server` for the command whose control socket is `remote`; nil without a server.
    /// `endFrame`: where playing ends (default: the session's end).
    static func serving(_ server: OSCServer?, remote: HeadlessRemote, json: Bool, endFrame: Int64? = nil) -> HeadlessOSC? {
        server.map { HeadlessOSC(server: $0, remote: remote, json: json, endFrame: endFrame) }
    }

    private init(server: OSCServer, remote: HeadlessRemote, json: Bool, endFrame: Int64?) {
        self.surfaces = OSCSurfaces(server: server)
        self.remote = remote
        self.json = json
        self.endFrame = endFrame
    }

    private var transport: Transport { remote.transport }

    /// Carries out what arrived, then sends registered surfaces what changed; `snapshot` is
    /// the loop's own (taking another here would swallow the notices the status line is due
    /// to print). Loop's thread.
    func service(_ snapshot: TransportSnapshot) {
        self.snapshot = snapshot
        surfaces.service(self)
    }

    /// After a command the state may have moved on from the loop's snapshot: the position
    /// and state come from the engine's status, cheaply, without draining anything.
    var oscView: OSCView {
        let now = transport.engine.status()
        let session = transport.session
        let recording = now.transport != .stopped && (snapshot?.state.isRecordingPass ?? false)
        return OSCView(session: session,
                       transport: OSCTransport(rolling: now.transport != .stopped, recording: recording, loop: transport.loopEnabled,
                                               frame: now.positionFrame, sampleRate: session.sampleRate),
                       meters: OSCView.meters(snapshot?.trackLevels ?? [], trackCount: session.tracks.count),
                       endFrame: endFrame ?? session.endFrame, stopEnds: remote.role == .play,
                       masterMeter: OSCView.peak(snapshot?.masterLevels ?? []), sessionName: OSCView.sessionName(path: remote.sessionPath),
                       speed: transport.timePitch.speed, chains: transport.keptChains())
    }

    /// One surface's command, checked as every host checks it (``SurfaceCommand/refusal(in:)``).
    /// Transport verbs are the control socket's; `play` takes mixer and chain values for this
    /// run; `record` takes neither (its mix is the session's as it was when the take began, and
    /// a recorder takes only stop while it runs); neither takes session edits.
    func perform(_ command: SurfaceCommand, from source: SurfaceSource, continuing: Bool) -> String? {
        if let why = command.refusal(in: transport.session) { return why }
        let program = remote.role == .play ? "'tapedeck play'" : "'tapedeck record'"
        switch command {
        case .transport(let verb):
            if case .error(let text) = remote.handle(verb) { return text }
            return nil
        case .mixer(let change):
            guard remote.role == .play else {
                let during = remote.role == .listen ? "while it listens" : "while a take runs"
                return "'tapedeck record' takes no mixer changes \(during) (only stop); set the mix on the screen or with 'tapedeck track' before recording"
            }
            // One value, handed to the transport as it is (a typed change, not a new session).
            transport.apply([change])
            return nil
        case .arm:
            return remote.role == .play
                ? "'tapedeck play' does not record: use 'tapedeck record' or the screen"
                : "the tracks that record were chosen when the take started (a take is never torn in two); stop first"
        case .monitor:
            return "\(program) keeps the monitoring it started with; set it on the screen or with 'tapedeck track --monitor'"
        case .chain(let change):
            // A chain value for this `play` run (as the mixer's), refused by `record`.
            guard remote.role == .play else { return "'tapedeck record' takes no chain changes while it runs (only stop)" }
            transport.apply([change])
            return nil
        case .addMarker:
            return "/add_marker: \(program) has the session open and takes no edits while it runs; add markers from the screen or with 'tapedeck marker' once it stops"
        }
    }

    /// One refusal on stderr (or as a JSON event); the same line again within a second is not
    /// repeated.
    func refuse(_ text: String) {
        let now = OSCSurfaces.seconds()
        if let last = lastSaid, last.text == text, now - last.at < 1 { return }
        lastSaid = (text, now)
        if json {
            StatusLine.emitLine(["event": "refused", "text": text])
        } else {
            Terminal.err("\r\u{1B}[2K\(text.terminalSafe)\n")
        }
    }
}
