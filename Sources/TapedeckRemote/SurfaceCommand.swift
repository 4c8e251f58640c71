import TapedeckCore
import TapedeckDSP

/// What a control surface asks of the session's owner, whichever surface it is: an OSC layout
/// (``OSCSurfaces``) or a Mackie Control (the screen's `ScreenMackie`). Both translate their
/// messages into this one typed vocabulary and hand it to the host's one
/// ``SurfaceHost/perform(_:from:continuing:)``; neither holds edit code of its own, so an
/// edit means the same, is checked the same and becomes the same undo step whichever surface
/// asked (issue 45 item 3, a step towards issue 42's one command set).
public enum SurfaceCommand: Equatable, Sendable {
    /// A transport verb, as `tapedeck ctl` would ask for it.
    case transport(RemoteCommand)
    /// One mixer change (strips 0-based): a fader, pan, mute, solo, send level, the master.
    case mixer(MixerChange)
    /// Arms (or disarms) track `strip` (0-based; a bus has no input to arm).
    case arm(strip: Int, on: Bool)
    /// Track `strip`'s input monitoring (0-based, a track, not a bus).
    case monitor(strip: Int, mode: MonitoringMode)
    /// One parameter (or the bypass) of one node of a chain.
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
            guard case .playback(let t) = change.place, tracks.indices.contains(t) else { return "not a playback chain" }
            return nil
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

    public init(label: String, peer: String?) {
        self.label = label
        self.peer = peer
    }

    /// An OSC surface at `peer`.
    public static func osc(_ peer: String) -> SurfaceSource { SurfaceSource(label: "OSC", peer: peer) }
    /// The Mackie Control surface.
    public static let mackie = SurfaceSource(label: "surface", peer: nil)
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
