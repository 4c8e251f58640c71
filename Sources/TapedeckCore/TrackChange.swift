/// One change to a track's make-up, as every front-end names it: the screen's keys and
/// dialogs (new track, arm, monitoring, input, freeze), a surface's arm and monitoring, and
/// `tapedeck track` (add, --arm, --monitor, --input, --freeze). Each front-end resolves its
/// words into one of these, and the session applies it (``Session/apply(_:)-(TrackChange)``).
/// Mixer values are ``MixerChange``s and routing ``RoutingChange``s.
///
/// Strips are places in the session's track order.
public enum TrackChange: Equatable, Sendable {
    /// A new track at the end; `midi`: a MIDI track playing the General MIDI instrument.
    case add(name: String, midi: Bool)
    /// Track `strip` armed for recording, or not.
    case arm(strip: Int, on: Bool)
    /// What track `strip` lets through from its input.
    case monitoring(strip: Int, MonitoringMode)
    /// The device inputs track `strip` records from.
    case input(strip: Int, channels: [Int])
    /// Track `strip` plays `render` in place of its regions and chain.
    case freeze(strip: Int, render: FrozenAudio)
    /// Track `strip` plays its regions and chain again.
    case unfreeze(strip: Int)

    /// The undo step's name in `session` before the change, as `undo --list` and the screen
    /// say it: `arm Drums`, `add track Track 4`.
    public func undoName(in session: Session) -> String {
        func name(_ i: Int) -> String { session.tracks.indices.contains(i) ? session.tracks[i].name : "track \(i + 1)" }
        switch self {
        case .add(let n, let midi): return "add \(midi ? "MIDI " : "")track \(n.trimmingWhitespace())"
        case .arm(let i, let on): return "\(on ? "arm" : "disarm") \(name(i))"
        case .monitoring(let i, _): return "monitoring \(name(i))"
        case .input(let i, _): return "input \(name(i))"
        case .freeze(let i, _): return "freeze \(name(i))"
        case .unfreeze(let i): return "unfreeze \(name(i))"
        }
    }
}

/// Why a track change was refused; one line for the user.
public struct TrackEditError: EditRefusal, Equatable, Sendable {
    /// The whole message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

extension Session {
    /// Why `name` cannot be strip `index`'s (-1: a new strip; `bus`: it is or will be a
    /// bus), or nil: empty, too long, or already another strip's (names are unique ignoring
    /// case, tracks and buses alike, since sends and outputs name buses and every command
    /// names strips). A bus may not be called `master` or `main`: an output to `master` means
    /// the master, never the bus. The one check the screen and the command line make.
    public func stripNameProblem(_ name: String, index: Int, bus: Bool) -> String? {
        let trimmed = name.trimmingWhitespace()
        if trimmed.isEmpty { return "a \(bus ? "bus" : "track") needs a name" }
        if trimmed.count > SessionLimits.maximumNameLength {
            return "a name is at most \(SessionLimits.maximumNameLength) characters (this one has \(trimmed.count))"
        }
        if bus && ["master", "main"].contains(trimmed.lowercased()) {
            return "'\(trimmed.terminalSafe)' names the master; call the bus something else"
        }
        if let other = NameMatch.index(of: trimmed, in: tracks.map(\.name)), other != index {
            let t = tracks[other]
            return "\(t.isBus ? "bus" : "track") \(other + 1) is already called \(t.name.terminalSafe) (names are matched ignoring case)"
        }
        return nil
    }

    /// Applies `change`. Throws, changing nothing, when the strip is not a track, the name
    /// is taken, or the session holds as many strips as it may.
    public mutating func apply(_ change: TrackChange) throws(TrackEditError) {
        func track(_ i: Int, _ what: String) throws(TrackEditError) {
            guard tracks.indices.contains(i) else {
                throw TrackEditError("track \(i + 1) does not exist (the session has \(tracks.count) strip\(tracks.count == 1 ? "" : "s"))")
            }
            guard !tracks[i].isBus else { throw TrackEditError("\(tracks[i].name.terminalSafe) is a bus: a bus has no \(what)") }
        }
        switch change {
        case .add(let name, let midi):
            guard tracks.count < SessionLimits.maximumTracks else {
                throw TrackEditError("the session holds \(tracks.count) strips, at most \(SessionLimits.maximumTracks)")
            }
            if let problem = stripNameProblem(name, index: -1, bus: false) { throw TrackEditError(problem) }
            let trimmed = name.trimmingWhitespace()
            tracks.append(midi ? Track(name: trimmed, playbackChain: "gm", isMIDI: true) : Track(name: trimmed))
        case .arm(let i, let on):
            try track(i, "input to arm")
            tracks[i].armed = on
        case .monitoring(let i, let mode):
            try track(i, "input to monitor")
            tracks[i].monitoring = mode
        case .input(let i, let channels):
            try track(i, "input")
            tracks[i].inputChannels = channels
        case .freeze(let i, let render):
            try track(i, "regions to freeze")
            tracks[i].frozen = render
        case .unfreeze(let i):
            try track(i, "regions to freeze")
            tracks[i].frozen = nil
        }
    }
}

extension SessionDocument {
    /// Applies `change` as one undoable step named by it (``TrackChange/undoName(in:)``).
    /// Throws, changing nothing, when it is refused.
    public mutating func apply(_ change: TrackChange) throws(TrackEditError) {
        try edit(change.undoName(in: session)) { (s: inout Session) throws(TrackEditError) in try s.apply(change) }
    }
}
