import TapedeckCore

/// One band of the track area: a track (``Layout/rowsPerTrack`` rows) or, under a track whose
/// take lanes are shown, one take (one row). The track list and the timeline draw the same
/// bands side by side.
struct TrackBand: Equatable {
    /// What the band shows.
    enum Kind: Equatable {
        /// The track itself.
        case track
        /// Take `number` of take group `group`, which is region `region` of the track.
        case take(group: Int, number: Int, region: Int)
        /// Automation lane `lane` of the track.
        case automation(lane: Int)
    }

    /// The track's index.
    let track: Int
    /// What the band shows.
    let kind: Kind
    /// Its first row on the canvas.
    let y: Int
    /// Its rows.
    let height: Int
}

/// Lays the tracks (and shown take lanes) into the rows there are, scrolled so the selected
/// track is on screen.
enum TrackBands {
    /// The takes shown under `track`: every take of every group, by group then number.
    static func takes(of track: Track) -> [(group: Int, number: Int, region: Int)] {
        track.takeGroups.flatMap { g in track.takeIndices(group: g).map { (g, track.regions[$0].takeNumber ?? 0, $0) } }
    }

    /// The bands that fit in `rows` rows from `top`.
    static func layout(_ model: ScreenModel, top: Int, rows: Int) -> [TrackBand] {
        let tracks = model.session.tracks
        guard !tracks.isEmpty, rows >= Layout.rowsPerTrack else { return [] }
        let heights = tracks.indices.map { t in
            Layout.rowsPerTrack + (model.expandedTracks.contains(t) ? takes(of: tracks[t]).count : 0)
                + (model.automationShown.contains(t) ? tracks[t].automation.count : 0)
        }
        let selected = min(max(0, model.selectedTrack), tracks.count - 1)
        // The first track shown: the earliest from which the selected track's own rows fit.
        var first = 0
        while first < selected && heights[first...selected].reduce(0, +) - (heights[selected] - Layout.rowsPerTrack) > rows {
            first += 1
        }
        var bands: [TrackBand] = []
        var y = top
        let bottom = top + rows
        for t in first..<tracks.count {
            guard y + Layout.rowsPerTrack <= bottom else { break }
            bands.append(TrackBand(track: t, kind: .track, y: y, height: Layout.rowsPerTrack))
            y += Layout.rowsPerTrack
            if model.automationShown.contains(t) {
                for k in tracks[t].automation.indices where y < bottom {
                    bands.append(TrackBand(track: t, kind: .automation(lane: k), y: y, height: 1))
                    y += 1
                }
            }
            guard model.expandedTracks.contains(t) else { continue }
            for take in takes(of: tracks[t]) where y < bottom {
                bands.append(TrackBand(track: t, kind: .take(group: take.group, number: take.number, region: take.region), y: y, height: 1))
                y += 1
            }
        }
        return bands
    }
}
