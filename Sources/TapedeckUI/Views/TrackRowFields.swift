import TapedeckCore

/// The columns of the track list's first rows, worked out once per frame for every track, so
/// the fields line up from track to track and never reach past the list into the timeline
/// (at 80 columns the list is 40 wide, and pan sat at columns 40–42, under the separator).
///
/// Every field is drawn whole or not at all: the fader and pan at the width their longest
/// value needs, the number at the width the track count needs. When the room runs short it is
/// taken back in a fixed order: the name is shortened first (down to ``minimumNameWidth``,
/// ending in "…"), then the take heard moves from beside the name to the meter row, then the
/// input is left out, then the R M S flags. Number, name, fader and pan always stay. The
/// chain summary, last on the row, gets the room left past a usual name (by whole nodes),
/// before a long name grows into it.
struct TrackListColumns: Equatable {
    /// The shortest a name is shortened to before fields are dropped.
    static let minimumNameWidth = 6
    /// The name slot's width when there is room and no name needs more (as the list always had).
    static let usualNameWidth = 12
    /// The widest a name slot grows to for a long name, when there is room.
    static let maximumNameWidth = 24
    /// The flags: arm, mute, solo and monitoring, a space between each.
    static let flagsWidth = 7
    /// The input field's usual width (`in 1-2`, `bus 2ch`, `frozen`).
    static let usualInputWidth = 7
    /// Pan: `C` … `L100`.
    static let panWidth = 4

    /// Columns of the list.
    let width: Int
    /// The track number's width (right-aligned).
    let numberWidth: Int
    /// The name slot (the name, and the take heard beside it when it fits).
    let nameWidth: Int
    /// Whether the R M S flags and the monitoring letter are shown.
    let showsFlags: Bool
    /// The input field's width; 0 when the input is left out.
    let inputWidth: Int
    /// The fader value's width, without its `dB`.
    let faderWidth: Int

    /// Where each field starts.
    var nameX: Int { numberWidth + 1 }
    var flagsX: Int { nameX + nameWidth + 1 }
    var inputX: Int { flagsX + (showsFlags ? TrackListColumns.flagsWidth + 1 : 0) }
    var faderX: Int { inputX + (inputWidth > 0 ? inputWidth + 1 : 0) }
    var panX: Int { faderX + faderWidth + 2 + 1 }
    /// The chain summary's column (it gets what is left of the row).
    var chainX: Int { panX + TrackListColumns.panWidth + 1 }

    /// The columns of a `width`-column list for `trackCount` tracks whose longest name (with
    /// its take label), input text, fader text and chain summary are as given.
    static func layout(width: Int, trackCount: Int, longestName: Int, longestInput: Int, longestFader: Int,
                       longestChain: Int = 0) -> TrackListColumns {
        let numberWidth = max(2, String(max(trackCount, 1)).count)
        let faderWidth = max(5, longestFader)
        var inputWidth = max(usualInputWidth, longestInput)
        var showsFlags = true
        func room() -> Int {
            width - (numberWidth + 1) - 1 - (showsFlags ? flagsWidth + 1 : 0) - (inputWidth > 0 ? inputWidth + 1 : 0)
                - (faderWidth + 2 + 1) - panWidth
        }
        // The name yields first; then the input, then the flags.
        if room() < minimumNameWidth { inputWidth = 0 }
        if room() < minimumNameWidth { showsFlags = false }
        // Room past the usual name goes to the chain summary first, then to a long name.
        let spare = max(0, room() - usualNameWidth - (longestChain > 0 ? longestChain + 1 : 0))
        let wanted = min(maximumNameWidth, max(usualNameWidth, min(longestName, usualNameWidth + spare)))
        return TrackListColumns(width: width, numberWidth: numberWidth, nameWidth: max(1, min(room(), wanted)),
                                showsFlags: showsFlags, inputWidth: inputWidth, faderWidth: faderWidth)
    }

    /// The text a track's name slot shows: the name and the take heard (`Vocal t2/3`), the
    /// name shortened to make room for the take down to ``minimumNameWidth``; else the name
    /// alone, shortened to the slot. Also whether the take is in it (if not, the meter row
    /// shows it).
    func nameText(_ name: String, take: String?) -> (text: String, takeShown: Bool) {
        if let take {
            let room = nameWidth - take.count - 1
            if room >= min(name.count, TrackListColumns.minimumNameWidth) {
                return (Fit.shortened(name, room) + " " + take, true)
            }
        }
        return (Fit.shortened(name, nameWidth), false)
    }
}

extension Fit {
    /// `text` whole when it fits `width`, else its start and "…" in `width` characters: a
    /// name shortened, never cut without saying so.
    static func shortened(_ text: String, _ width: Int) -> String {
        guard width > 0 else { return "" }
        if text.count <= width { return text }
        return String(text.prefix(width - 1)) + "…"
    }

    /// A chain summary (`hpf>comp>eq`) in at most `width` characters, by whole nodes: the nodes
    /// that fit and `+N` for the rest (`hpf+2`); empty when not even that fits.
    static func chain(_ summary: String, _ width: Int) -> String {
        if summary.count <= width { return summary }
        let nodes = summary.split(separator: ">").map(String.init)
        var kept = nodes.count - 1
        while kept > 0 {
            let text = nodes.prefix(kept).joined(separator: ">") + "+\(nodes.count - kept)"
            if text.count <= width { return text }
            kept -= 1
        }
        return ""
    }
}
