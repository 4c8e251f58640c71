/// One edit of the tempo map, as every front-end names it: the screen's tempo dialog,
/// `tapedeck tempo` and `tapedeck meter`, the same handed to the open screen. The session
/// applies it (``Session/apply(_:)-(TempoMapChange)``); what a change of the map does to MIDI
/// regions (they keep their bars, their notes in new files) is the owner's part, since it
/// writes files (`SessionDocument.apply(_:keepingMIDIBarsIn:)` in TapedeckIO).
public enum TempoMapChange: Equatable, Sendable {
    /// The tempo from `bar` on; `ramp`: glide into it from the change before.
    case tempo(bar: Int, bpm: Double, ramp: Bool)
    /// The meter from `bar` on.
    case meter(bar: Int, TimeSignature)
    /// The tempo change at `bar` removed.
    case removeTempo(bar: Int)
    /// The meter change at `bar` removed.
    case removeMeter(bar: Int)
    /// Whatever changes `bar` has, tempo and meter, removed (the screen's `-`).
    case removeBoth(bar: Int)

    /// The undo step's name, as `undo --list` and the screen say it.
    public var undoName: String {
        switch self {
        case .tempo, .removeTempo: "tempo"
        case .meter, .removeMeter: "meter"
        case .removeBoth: "tempo map"
        }
    }

    /// The bar it changes.
    public var bar: Int {
        switch self {
        case .tempo(let bar, _, _), .meter(let bar, _), .removeTempo(let bar), .removeMeter(let bar), .removeBoth(let bar): bar
        }
    }
}

extension Session {
    /// Applies `change` to the tempo map. Throws, changing nothing, when it is refused (a map
    /// that could not be played, nothing to remove). Regions keep their frames.
    public mutating func apply(_ change: TempoMapChange) throws(TempoEditError) {
        switch change {
        case .tempo(let bar, let bpm, let ramp): try setTempo(atBar: bar, bpm: bpm, ramp: ramp)
        case .meter(let bar, let signature): try setMeter(atBar: bar, signature)
        case .removeTempo(let bar): try removeTempo(atBar: bar)
        case .removeMeter(let bar): try removeMeter(atBar: bar)
        case .removeBoth(let bar):
            guard bar > 1 else { throw TempoEditError("bar 1's tempo and meter can be changed, not removed") }
            let tempo = tempoChanges.contains { $0.bar == bar }, meter = meterChanges.contains { $0.bar == bar }
            guard tempo || meter else { throw TempoEditError("no tempo or meter change at bar \(bar)") }
            var next = self
            if tempo { try next.removeTempo(atBar: bar) }
            if meter { try next.removeMeter(atBar: bar) }
            self = next
        }
    }
}
