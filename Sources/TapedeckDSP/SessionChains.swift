import TapedeckCore

/// Every chain of a session read once into ``Chain`` values: the master's, and each track's
/// playback and input chain. The session (in `TapedeckCore`, which knows no node types) keeps
/// a chain's text, the form for files and display; an owner of a session (the screen, the
/// transport, a graph build) keeps one of these beside it and reads its chains from here, so
/// a chain is parsed when its text changes (a load, an edit), never when it is drawn, sent or
/// played. A chain the parser refuses is kept as its error, for the owner to say.
///
/// Slots are matched by text, not by position: moving or adding a track reads nothing again.
public struct SessionChains: Sendable {
    /// One chain: the text it was read from, and what reading it gave.
    public struct Slot: Sendable {
        /// The text as the session holds it.
        public let text: String
        /// The chain, or why the parser refused the text.
        public let chain: Result<Chain, ChainError>

        /// The chain, or nil when the text does not parse.
        public var value: Chain? { try? chain.get() }
    }

    /// Which chain of a track.
    public enum Kind: Sendable {
        /// The chain a track's playback (and a bus's mix) runs through.
        case playback
        /// The chain a track's input runs through before it is recorded.
        case input
    }

    private var master: Slot
    private var playback: [Slot]
    private var input: [Slot]
    /// Chains an edge already parsed (a typed chain, an edit), for the next update to take as
    /// they are instead of reading their text again.
    private var handedIn: [String: Slot] = [:]
    /// The registry the chains were read against; a chain is read against no other.
    public let registry: NodeRegistry

    /// No chains yet: every slot is read on first use.
    public init(registry: NodeRegistry = .standard) {
        self.registry = registry
        master = Slot(text: "", chain: .success(Chain()))
        playback = []
        input = []
    }

    /// Reads every chain of `session` once.
    public init(_ session: Session, registry: NodeRegistry = .standard) {
        self.init(registry: registry)
        update(to: session)
    }

    /// Brings every slot up to `session`: a text seen before (in any slot) is not read again.
    public mutating func update(to session: Session) {
        guard !matches(session) else { return }
        var known = handedIn
        handedIn = [:]
        for slot in [master] + playback + input { known[slot.text] = slot }
        func read(_ text: String) -> Slot {
            if let slot = known[text] { return slot }
            let slot = Self.read(text, registry)
            known[text] = slot
            return slot
        }
        master = read(session.masterChain)
        playback = session.tracks.map { read($0.playbackChain) }
        input = session.tracks.map { read($0.inputChain) }
    }

    /// Whether every slot already holds `session`'s text (string comparisons, no parsing).
    public func matches(_ session: Session) -> Bool {
        guard master.text == session.masterChain, playback.count == session.tracks.count, input.count == session.tracks.count else {
            return false
        }
        for (t, track) in session.tracks.enumerated() where playback[t].text != track.playbackChain || input[t].text != track.inputChain {
            return false
        }
        return true
    }

    /// Takes `chain`, parsed at an edge (a typed chain, a stepped parameter), as the value of
    /// its canonical text, which the session is about to hold: the next ``update(to:)`` uses it
    /// instead of reading that text again.
    public mutating func handIn(_ chain: Chain) {
        handedIn[chain.text] = Slot(text: chain.text, chain: .success(chain))
    }

    /// The master's chain as read. Call ``update(to:)`` first.
    public var masterSlot: Slot { master }

    /// Track `track`'s chain of `kind` as read; the empty chain for a track that is not there.
    /// Call ``update(to:)`` first.
    public func slot(_ track: Int, _ kind: Kind = .playback) -> Slot {
        let slots = kind == .playback ? playback : input
        return slots.indices.contains(track) ? slots[track] : Slot(text: "", chain: .success(Chain()))
    }

    /// Every slot: each track's input chain and playback chain, in track order, then the
    /// master's (what a session's plugin states and referenced files are gathered from).
    /// Call ``update(to:)`` first.
    public var allSlots: [Slot] {
        zip(input, playback).flatMap { [$0, $1] } + [master]
    }

    /// The one place a stored chain's text is parsed.
    private static func read(_ text: String, _ registry: NodeRegistry) -> Slot {
        do { return Slot(text: text, chain: .success(try Chain(parsing: text, registry: registry))) } catch {
            return Slot(text: text, chain: .failure(error))
        }
    }
}
