import TapedeckCore

/// A whole chain put in place, as every front-end names it: the screen's chain dialog and
/// its panel keys (a node removed, the nodes reordered), and `tapedeck chain`. One value of
/// one node moved is a ``ChainValueChange`` instead, heard without a new graph.
public struct ChainChange: Equatable, Sendable {
    /// What the one who made it did, for the undo step's name (the chain it replaces is
    /// not read again to find out: chains are parsed once, at the edge).
    public enum Kind: Equatable, Sendable {
        /// The chain typed or given whole.
        case edit
        /// One node taken out.
        case removeNode
        /// The same nodes in another order.
        case reorder
    }

    /// Which chain.
    public var place: ChainValueChange.Place
    /// The chain it becomes; stored as its canonical text.
    public var chain: Chain
    /// What was done.
    public var kind: Kind

    /// `chain` at `place`.
    public init(place: ChainValueChange.Place, chain: Chain, kind: Kind = .edit) {
        self.place = place
        self.chain = chain
        self.kind = kind
    }

    /// The undo step's name in `session` before the change, as `undo --list` and the screen
    /// say it: `remove node on Drums`, `reorder chain on master`, `edit input chain on Vocal`.
    public func undoName(in session: Session) -> String {
        let owner: String
        switch place {
        case .master: owner = "master"
        case .playback(let s), .input(let s): owner = session.tracks.indices.contains(s) ? session.tracks[s].name : "strip \(s + 1)"
        }
        let input: String
        if case .input = place { input = "input " } else { input = "" }
        switch kind {
        case .edit: return "edit \(input)chain on \(owner)"
        case .removeNode: return "remove node on \(owner)"
        case .reorder: return "reorder \(input)chain on \(owner)"
        }
    }
}

/// Why a chain was refused where it was to go; one line for the user.
public struct ChainEditError: EditRefusal, Equatable, Sendable {
    /// The whole message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

extension Session {
    /// Puts `change.chain` (its canonical text) at its place. Throws, changing nothing, when
    /// the strip does not exist, a bus is given an input chain, or a frozen track's playback
    /// chain would change (it plays its render until unfrozen).
    public mutating func apply(_ change: ChainChange) throws(ChainEditError) {
        let text = change.chain.text
        switch change.place {
        case .master:
            masterChain = text
        case .playback(let s), .input(let s):
            guard tracks.indices.contains(s) else {
                throw ChainEditError("strip \(s + 1) does not exist (the session has \(tracks.count) strip\(tracks.count == 1 ? "" : "s"))")
            }
            if case .input = change.place {
                guard !tracks[s].isBus else {
                    throw ChainEditError("\(tracks[s].name.terminalSafe) is a bus: it has no input, so no input chain (its one chain runs on what it sums)")
                }
                tracks[s].inputChain = text
            } else {
                guard tracks[s].frozen == nil else {
                    throw ChainEditError("\(tracks[s].name.terminalSafe) is frozen: unfreeze it first (its regions and chain stay as they were rendered)")
                }
                tracks[s].playbackChain = text
            }
        }
    }
}

extension SessionDocument {
    /// Puts the chain in place as one undoable step named by what was done
    /// (``ChainChange/undoName(in:)``). Throws, changing nothing, when it is refused.
    public mutating func apply(_ change: ChainChange) throws(ChainEditError) {
        try edit(change.undoName(in: session)) { (s: inout Session) throws(ChainEditError) in try s.apply(change) }
    }
}
