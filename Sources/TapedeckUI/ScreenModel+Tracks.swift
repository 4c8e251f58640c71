import TapedeckCore

// MARK: - Tracks on the screen: new and deleted tracks, and the track changes keys, dialogs
// and surfaces make (TrackChange, the vocabulary `tapedeck track` speaks too).

extension ScreenModel {
    /// Applies a track change (the one `tapedeck track` and a surface make too) as one
    /// undoable step and tells the engine. Nil when made, else why not (nothing changed).
    func trackChange(_ change: TrackChange) -> String? {
        do { try owner.change { try $0.apply(change) } } catch { return "\(error)" }
        return nil
    }

    /// ``trackChange(_:)`` for a key: a refusal goes to the message line. Whether it applied.
    func trackEdit(_ change: TrackChange) -> Bool {
        guard let why = trackChange(change) else { return true }
        say(why, error: true)
        return false
    }

    /// A new audio track at the end, `Track N`, selected.
    func newTrack() {
        var n = session.tracks.count + 1
        while NameMatch.index(of: "Track \(n)", in: session.tracks.map(\.name)) != nil { n += 1 }
        guard trackEdit(.add(name: "Track \(n)", midi: false)) else { return }
        selectTrack(session.tracks.count - 1)
    }

    /// Removes strip `index` as one undoable step (the routing change `track --remove`
    /// makes), keeping the selection and the shown lanes on the strips that stay.
    func deleteTrack(_ index: Int) {
        guard session.tracks.indices.contains(index) else { return }
        let name = session.tracks[index].name
        guard routingEdit(.removeStrip(index)) else { return }
        expandedTracks = Set(expandedTracks.compactMap { $0 == index ? nil : ($0 > index ? $0 - 1 : $0) })
        automationShown = Set(automationShown.compactMap { $0 == index ? nil : ($0 > index ? $0 - 1 : $0) })
        selectTrack(selectedTrack)
        say("deleted \(name) (\(keyName(.undo)) brings it back)")
    }
}
