import TapedeckCore

extension SessionDocument {
    /// Applies `change` to the tempo map as one undoable step named by it
    /// (``TempoMapChange/undoName``), with every MIDI region kept on its bars and beats: its
    /// notes go to a new file in `folder`'s `midi/` (the old one stays, for undo); audio
    /// regions keep their time. What the screen's tempo dialog, `tempo` and `meter` all do.
    ///
    /// Returns how many MIDI regions moved. Throws, changing nothing: ``TempoEditError`` when
    /// the map refuses the change, or when there are MIDI regions and no folder yet; an
    /// ``AudioFileError`` when a new file cannot be written.
    @discardableResult
    public mutating func apply(_ change: TempoMapChange, keepingMIDIBarsIn folder: SessionFolder?) throws -> Int {
        var next = session
        try next.apply(change)
        var moved = 0
        if next.tracks.contains(where: { $0.regions.contains(where: \.isMIDI) }) {
            guard let folder else { throw TempoEditError("save the session first: MIDI regions keep their bars in new files in its midi/ folder") }
            moved = try MIDIRegionFile.keepingBars(in: &next, from: session.tempoMap, folder: folder)
        }
        let result = next
        edit(change.undoName) { $0 = result }
        return moved
    }
}
