import TapedeckCore
import TapedeckTransport

/// What a host of the control socket is, which decides what `tapedeck ctl` may ask of it.
public enum ControlRole: String, Sendable {
    /// The screen: every transport verb, and command-line edits handed over.
    case screen
    /// Headless `tapedeck play`: follows transport verbs, never records; stopping ends it.
    case play
    /// Headless `tapedeck record` taking a pass: it never moves while the take runs, and ends
    /// on stop (or record).
    case record
    /// Headless `tapedeck record --retro` listening: only stop and status apply.
    case listen

    /// The `front_end` word of a status (a listening `record` is still `record`).
    public var frontEnd: String {
        switch self {
        case .screen: "screen"
        case .play: "play"
        case .record, .listen: "record"
        }
    }

    /// How the command reads when named in a refusal.
    var commandName: String { self == .play ? "tapedeck play" : "tapedeck record" }
}

/// A host's transport and session at one moment, as the control socket's answers read them.
public struct ControlState {
    /// The transport now.
    public var snapshot: TransportSnapshot
    /// The session as the host holds it now (its tempo map reads `locate` times).
    public var session: Session
    /// The session's folder, or nil for a take outside any session.
    public var sessionPath: String?
    /// The playback speed ratio.
    public var speed: Double
    /// Whether playback loops.
    public var loopEnabled: Bool
    /// What `loop on` would loop over (headless `play --loop`: its own range), or nil.
    public var loopRange: FrameRange?
    /// The screen's keys that set a loop range (start, end), named when there is none.
    public var loopKeys: (start: String, end: String)?

    public init(snapshot: TransportSnapshot, session: Session, sessionPath: String?, speed: Double, loopEnabled: Bool,
                loopRange: FrameRange?, loopKeys: (start: String, end: String)? = nil) {
        self.snapshot = snapshot
        self.session = session
        self.sessionPath = sessionPath
        self.speed = speed
        self.loopEnabled = loopEnabled
        self.loopRange = loopRange
        self.loopKeys = loopKeys
    }
}

/// A host of the control socket (the screen, headless `play` or `record`): the transport
/// verbs it offers, carried out as its own controls do them. ``ControlAnswer/answer(_:host:from:)``
/// decides which verb a ``RemoteCommand`` becomes, refuses what this host's role does not
/// take, and words every reply; a host only acts. The host's own thread only.
public protocol ControlHost: AnyObject {
    /// What the host is.
    var controlRole: ControlRole { get }
    /// The transport and session now (the screen reads its link first).
    func controlState() -> ControlState
    /// Starts playing from the playhead (asked only of the screen, and only when stopped);
    /// why not in the host's own words, if it said one.
    func controlPlay() -> String?
    /// Stops the transport (headless: ends the command, the takes kept).
    func controlStop()
    /// Starts recording the armed tracks, or stops the pass running (asked only of the
    /// screen); why a pass did not start in the host's own words, if it said one.
    func controlRecord() -> String?
    /// Ends the pass running and rolls on (asked only of the screen, only while it records).
    func controlEndPass()
    /// Moves the playhead (never asked while a take runs).
    func controlLocate(_ frame: Int64)
    /// Loops over ``ControlState/loopRange`` or stops looping (asked only when there is one).
    func controlLoop(_ on: Bool)
    /// Sets the playback speed ratio (already checked).
    func controlSpeed(_ ratio: Double)
    /// Saves the session (asked only of the screen); nil when saved, else why not.
    func controlSave() -> String?
    /// Runs a typed command handed over (asked only of the screen) and answers it.
    func controlCommand(_ command: TypedCommand, from peer: String) -> RemoteReply
}

extension ControlHost {
    /// Headless hosts are never asked: they follow play rather than start it.
    public func controlPlay() -> String? { "not rolling" }
    /// Headless hosts are never asked: their record is their stop.
    public func controlRecord() -> String? { "recording did not start" }
    /// Headless hosts are never asked: they have nothing of their own to save.
    public func controlSave() -> String? { "nothing to save" }
    /// Headless hosts are never asked: they take no edits while they run.
    public func controlCommand(_ command: TypedCommand, from peer: String) -> RemoteReply {
        .error("takes no edits")
    }
}
