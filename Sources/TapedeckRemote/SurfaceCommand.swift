import TapedeckCore
import TapedeckDSP

/// What a front-end asks of the session's owner, whichever it is: an OSC layout
/// (``OSCSurfaces``), a Mackie Control (the screen's `ScreenMackie`), or the screen's own keys.
/// Each translates what it is given into this one typed vocabulary and hands it to the host's
/// one ``SurfaceHost/perform(_:from:continuing:)``; none holds edit code of its own, so an
/// edit means the same, is checked the same and becomes the same undo step whichever asked
/// (issue 45 item 3 and issue 42 item 1). Transport verbs are ``RemoteCommand``s, which also
/// carry a command-line edit handed over (``TypedCommand``).
public enum SurfaceCommand: Equatable, Sendable {
    /// A control-socket verb (the transport's, save), as `tapedeck ctl` would ask for it.
    case transport(RemoteCommand)
    /// One mixer change (strips 0-based): a fader, pan, mute, solo, send level, the master.
    case mixer(MixerChange)
    /// Arms (or disarms) track `strip` (0-based; a bus has no input to arm).
    case arm(strip: Int, on: Bool)
    /// Track `strip`'s input monitoring (0-based, a track, not a bus).
    case monitor(strip: Int, mode: MonitoringMode)
    /// One parameter (or the bypass) of one node of a chain: a track's playback or input
    /// chain (a bus has no input), or the master's.
    case chain(ChainValueChange)
    /// A marker at the playhead (nil or empty name: the host's next default name).
    case addMarker(name: String?)
}

extension SurfaceCommand {
    /// Why `session` cannot take this command, in one line (a strip that is not there, a bus
    /// armed or monitored, a send it does not have); nil when it can. Every host asks this
    /// first, so a surface's request is checked the same whichever surface sent it and
    /// whichever host carries it out.
    public func refusal(in session: Session) -> String? {
        let tracks = session.tracks
        switch self {
        case .transport, .addMarker, .mixer(.masterGain):
            return nil
        case .arm(let t, _), .monitor(let t, _):
            guard tracks.indices.contains(t) else { return "no strip \(t + 1) (the session has \(tracks.count))" }
            guard tracks[t].isBus else { return nil }
            if case .arm = self { return "\(tracks[t].name) is a bus: a bus has no input to arm" }
            return "\(tracks[t].name) is a bus: a bus has no input to hear"
        case .mixer(let change):
            guard let t = change.strip, tracks.indices.contains(t) else { return "no such strip" }
            switch change {
            case .sendLevel(_, let send, _), .sendPan(_, let send, _):
                let track = tracks[t]
                guard track.sends.indices.contains(send) else {
                    return "\(track.name) has \(track.sends.count) send\(track.sends.count == 1 ? "" : "s"), no send \(send + 1)"
                }
                return nil
            default:
                return nil
            }
        case .chain(let change):
            switch change.place {
            case .master: return nil
            case .playback(let t): return tracks.indices.contains(t) ? nil : "no strip \(t + 1) (the session has \(tracks.count))"
            case .input(let t):
                guard tracks.indices.contains(t) else { return "no strip \(t + 1) (the session has \(tracks.count))" }
                return tracks[t].isBus ? "\(tracks[t].name) is a bus: a bus has no input chain" : nil
            }
        }
    }
}

/// Who asked for a ``SurfaceCommand``: how the host names the edit's undo step and what it
/// says on its message line.
public struct SurfaceSource: Equatable, Sendable {
    /// The undo step's first word (`OSC fader Drums`, `surface fader Drums`).
    public var label: String
    /// Who is named after what was done (`— asked by 127.0.0.1:9000`); nil names nobody (a
    /// Mackie surface is the user's own hand on a fader, as a key is).
    public var peer: String?

    /// Whether the engine has the value already (a learnt controller's move, applied by the
    /// transport as it came): the host hands nothing to the engine, since a value handed back
    /// a tick late would step the sound back to an older one.
    public var alreadyHeard: Bool

    public init(label: String, peer: String?, alreadyHeard: Bool = false) {
        self.label = label
        self.peer = peer
        self.alreadyHeard = alreadyHeard
    }

    /// An OSC surface at `peer`.
    public static func osc(_ peer: String) -> SurfaceSource { SurfaceSource(label: "OSC", peer: peer) }
    /// The Mackie Control surface.
    public static let mackie = SurfaceSource(label: "surface", peer: nil)
    /// A controller bound by MIDI learn. Its move was applied on the MIDI thread the moment it
    /// came (``alreadyHeard``); the host records it in the session and says it.
    public static let controller = SurfaceSource(label: "MIDI", peer: nil, alreadyHeard: true)
    /// The screen's own keys: the user's hand, its undo steps named as the edit alone (`fader
    /// Drums`), nobody named, nothing said for a transport verb the transport bar shows.
    public static let keys = SurfaceSource(label: "", peer: nil)

    /// The undo step of `edit` (`fader Drums`) asked by this source (`OSC fader Drums`).
    public func undoName(_ edit: String) -> String { label.isEmpty ? edit : "\(label) \(edit)" }
}

/// A host of control surfaces: it carries out ``SurfaceCommand``s with the verbs it has for
/// its other front-ends. UI thread (or whichever one thread owns the host).
public protocol SurfaceHost: AnyObject {
    /// Carries out `command` for `source`; `continuing`: the same control moved a moment ago by
    /// the same surface, so a continuous change (fader, pan, send, chain value) joins that undo
    /// step. Returns the refusal (one line, not yet said), or nil when done; the host says what
    /// it did its own way (the screen's message line).
    func perform(_ command: SurfaceCommand, from source: SurfaceSource, continuing: Bool) -> String?
    /// Says a refusal (one line, already naming the surface).
    func refuse(_ text: String)
}
