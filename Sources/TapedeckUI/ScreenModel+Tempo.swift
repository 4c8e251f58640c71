import TapedeckCore
import TapedeckIO

// MARK: - The tempo map: a tempo or meter change at the playhead's bar

extension ScreenModel {
    /// Asks what the tempo map does from the bar the playhead is in.
    func openTempoEdit() {
        let map = session.tempoMap
        let bar = max(1, map.position(ofFrame: playheadFrame).bar)
        let at = map.frame(bar: bar, beat: 1)
        let now = "\(TempoMap.bpmText(map.tempo(atFrame: at))) BPM \(map.signature(atBar: bar))"
        overlay = .text(TextInput(purpose: .tempo(bar: bar),
                                  prompt: "Bar \(bar) (\(now)): tempo (140, 140 ramp), meter (7/8) or - (remove):",
                                  text: ""))
    }

    /// Applies `text` at bar `bar` (`140`, `140 ramp`, `7/8`, `-`) as one undoable edit: MIDI
    /// regions keep their bars (their notes in new files), audio regions their time. Nil
    /// when done, else why not (nothing changed).
    func applyTempo(_ text: String, bar: Int) -> String? {
        let words = text.lowercased().split(separator: " ").map(String.init)
        guard let first = words.first else { return "write a tempo (140, 140 ramp), a meter (7/8) or -" }
        // The words resolve to the change `tapedeck tempo` and `meter` make (TempoMapChange).
        let change: TempoMapChange
        if first == "-" {
            change = .removeBoth(bar: bar)
        } else if first.contains("/") {
            guard words.count == 1, let signature = TempoMap.signature(parsing: first) else {
                return "'\(text)' is no meter: write N/D, e.g. 7/8 (N 1...64, D 1, 2, 4, 8, 16 or 32)"
            }
            change = .meter(bar: bar, signature)
        } else {
            guard let bpm = Double(first.replacingOccurrences(of: "bpm", with: "")), words.count == 1 || (words.count == 2 && words[1] == "ramp") else {
                return "write a tempo such as 140 or 140 ramp"
            }
            change = .tempo(bar: bar, bpm: bpm, ramp: words.count == 2)
        }
        do { try owner.change { try $0.apply(change, keepingMIDIBarsIn: folder) } } catch { return "\(error)" }
        let after = session.tempoMap
        let at = after.frame(bar: bar, beat: 1)
        say("bar \(bar): \(TempoMap.bpmText(after.tempo(atFrame: at))) BPM \(after.signature(atBar: bar)) (\(keyName(.undo)) undoes it)")
        return nil
    }
}
