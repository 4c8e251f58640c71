import Foundation
import TapedeckCore
import TapedeckIO

/// What an export and its stems say about themselves, as takes do (``TakeMetadata``: `bext`,
/// iXML, Vorbis comments), and the session's markers inside the range as cue points.
extension Mixdown.Request {
    /// The session's name: its folder's name without `.tapedeck`.
    var sessionName: String {
        var name = (folder.path as NSString).lastPathComponent
        if name.hasSuffix(".tapedeck") { name.removeLast(".tapedeck".count) }
        return name
    }

    /// The export's metadata (the mix's, or stem `track`'s): its place is the range's first
    /// frame on the timeline, which is also its `bext` time reference.
    func fileMetadata(track: Int? = nil) -> TakeMetadata {
        let name = track.flatMap { session.tracks.indices.contains($0) ? session.tracks[$0].name : nil } ?? ""
        return TakeMetadata(session: sessionName, trackNumber: track.map { $0 + 1 }, trackName: name,
                            timelineFrame: range.startFrame, speed: timePitch.speed, startedAt: LocalTimestamp.string("%Y-%m-%d %H:%M:%S"),
                            // With a time-of-day origin, the export says the time of day it starts at.
                            timeReference: session.timeOfDayOrigin.map { $0 + range.startFrame })
    }

    /// The tags of the mix (or of stem `track`: its name joins the title): `--tag`s, the
    /// title defaulting to the session's name.
    func fileTags(track: Int? = nil) -> FileTags {
        var t = tags
        if t.title == nil { t.title = sessionName }
        if let track, session.tracks.indices.contains(track) { t.title = (t.title ?? sessionName) + " – " + session.tracks[track].name }
        return t
    }

    /// The session's markers inside the range, at their frame in the file (from the range's
    /// start, at the export's speed), named as they are: the user's, and the lost-input ones
    /// (xruns, dropped spans) only with ``allMarkers`` (`--markers all`).
    public var fileCues: [CuePoint] {
        let speed = timePitch.speed > 0 ? timePitch.speed : 1
        return session.markers.filter { $0.frame >= range.startFrame && $0.frame < range.endFrame && (allMarkers || !$0.isLostInput) }.map { m in
            let offset = m.frame - range.startFrame
            return CuePoint(frame: speed == 1 ? offset : Int64((Double(offset) / speed).rounded()), name: m.name)
        }
    }
}
