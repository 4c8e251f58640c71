/// Why a routing edit was refused; the description is one line for the user (the session's
/// own line for a broken routing, ``Session/routingProblem()``).
public struct RoutingEditError: EditRefusal, Equatable, Sendable {
    /// The whole message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// One change to the routing, as every front-end names it: a key or a dialog on the screen,
/// `tapedeck bus`, `tapedeck send`, `tapedeck track --output/--remove/--rename/--solo-safe`,
/// the same handed to the open screen. Each front-end resolves its own words (a strip's number
/// or name, a bus's spelling) into one of these, and the session applies it
/// (``Session/apply(_:)-(RoutingChange)``): one that would leave the routing broken is refused
/// whoever asked, before anything changes.
///
/// Strips are places in the session's track order.
public enum RoutingChange: Equatable, Sendable {
    /// A new bus at the end, `channelCount` 1 (mono) or 2 (stereo).
    case addBus(name: String, channelCount: Int)
    /// Strip `strip` removed; a bus's outputs go to the master and its sends go.
    case removeStrip(Int)
    /// Strip `strip` renamed; a bus takes the sends and outputs that name it along.
    case rename(strip: Int, to: String)
    /// Strip `strip`'s send to `send.bus`: added, or put in place of the one to that bus.
    case setSend(strip: Int, Send)
    /// Strip `strip`'s send to `bus` removed.
    case removeSend(strip: Int, bus: String)
    /// Where strip `strip` plays.
    case output(strip: Int, StripOutput)
    /// Bus `strip` heard whatever is soloed, or not.
    case soloSafe(strip: Int, on: Bool)

    /// The undo step's name in `session` before the change, as `undo --list` and the screen
    /// say it: `send Drums to Verb`, `remove bus Verb`.
    public func undoName(in session: Session) -> String {
        func name(_ i: Int) -> String { session.tracks.indices.contains(i) ? session.tracks[i].name : "strip \(i + 1)" }
        func kind(_ i: Int) -> String { session.tracks.indices.contains(i) && session.tracks[i].isBus ? "bus" : "track" }
        switch self {
        case .addBus(let n, _): return "add bus \(n.trimmingWhitespace())"
        case .removeStrip(let i): return "remove \(kind(i)) \(name(i))"
        case .rename(let i, _): return "rename \(kind(i)) \(name(i))"
        case .setSend(let i, let send):
            let exists = session.tracks.indices.contains(i) && session.tracks[i].sends.contains { $0.bus.lowercased() == send.bus.lowercased() }
            return "\(exists ? "change send" : "send") \(name(i)) to \(send.bus)"
        case .removeSend(let i, let bus): return "remove send \(name(i)) to \(bus)"
        case .output(let i, let output): return "output \(name(i)) to \(output)"
        case .soloSafe(let i, let on): return "\(on ? "solo-safe" : "not solo-safe") \(name(i))"
        }
    }
}

extension Session {
    /// Applies `change`. Returns what else it changed, one line each (a removed bus's outputs
    /// sent to the master). Throws, changing nothing, when the strip or send is not there or
    /// the routing would be broken (``routingProblem()``: a cycle, a name that is no bus).
    @discardableResult
    public mutating func apply(_ change: RoutingChange) throws(RoutingEditError) -> [String] {
        var next = self
        let said = try next.applyUnchecked(change)
        if let problem = next.routingProblem() { throw RoutingEditError(problem) }
        self = next
        return said
    }

    private mutating func applyUnchecked(_ change: RoutingChange) throws(RoutingEditError) -> [String] {
        func strip(_ i: Int) throws(RoutingEditError) {
            guard tracks.indices.contains(i) else {
                throw RoutingEditError("strip \(i + 1) does not exist (the session has \(tracks.count) strip\(tracks.count == 1 ? "" : "s"))")
            }
        }
        switch change {
        case .addBus(let name, let channels):
            guard tracks.count < SessionLimits.maximumTracks else {
                throw RoutingEditError("the session holds \(tracks.count) strips, at most \(SessionLimits.maximumTracks)")
            }
            if let problem = stripNameProblem(name, index: -1, bus: true) { throw RoutingEditError(problem) }
            tracks.append(Track.makeBus(name: name.trimmingWhitespace(), channelCount: channels))
        case .removeStrip(let i):
            try strip(i)
            return removeStrip(i)
        case .rename(let i, let name):
            try strip(i)
            if let problem = stripNameProblem(name, index: i, bus: tracks[i].isBus) { throw RoutingEditError(problem) }
            renameStrip(i, to: name.trimmingWhitespace())
        case .setSend(let i, let send):
            try strip(i)
            if let k = tracks[i].sends.firstIndex(where: { $0.bus.lowercased() == send.bus.lowercased() }) {
                tracks[i].sends[k] = send
            } else {
                tracks[i].sends.append(send)
            }
        case .removeSend(let i, let bus):
            try strip(i)
            guard let k = tracks[i].sends.firstIndex(where: { $0.bus.lowercased() == bus.lowercased() }) else {
                throw RoutingEditError("\(tracks[i].name.terminalSafe) has no send to \(bus.terminalSafe)")
            }
            tracks[i].sends.remove(at: k)
        case .output(let i, let output):
            try strip(i)
            tracks[i].output = output
        case .soloSafe(let i, let on):
            try strip(i)
            guard tracks[i].isBus else {
                throw RoutingEditError("\(tracks[i].name.terminalSafe) is a track: only a bus is solo-safe (stays heard whatever is soloed)")
            }
            tracks[i].soloSafe = on ? true : nil
        }
        return []
    }
}

extension SessionDocument {
    /// Applies `change` as one undoable step named by it (``RoutingChange/undoName(in:)``);
    /// returns what else it changed. Throws, changing nothing, when it is refused.
    @discardableResult
    public mutating func apply(_ change: RoutingChange) throws(RoutingEditError) -> [String] {
        var said: [String] = []
        try edit(change.undoName(in: session)) { (s: inout Session) throws(RoutingEditError) in said = try s.apply(change) }
        return said
    }
}
