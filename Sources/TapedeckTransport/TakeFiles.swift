import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine
import TapedeckTakes

/// What takes are called and what they say about themselves, for every front-end alike.
public enum TakeFiles {
    /// File names in the session's `audio/` that are not taken, one per track of a pass:
    /// `take-YYYYMMDD-HHMMSS.EXT` for one track, `take-YYYYMMDD-HHMMSS-tN.EXT` (track
    /// number N) for several, with `-2`, `-3`… added when a name exists already. Each name is
    /// claimed for this process by creating its crash marker (`NAME.recording`) exclusively,
    /// so two recorders starting in the same second can never choose the same file; the
    /// engine then writes the real marker over the claim and creates the take exclusively
    /// too. A claim whose take never started is removed by recovery (or by the caller).
    /// `mirror`: a folder the takes are copied into as well (``RecordRequest/mirrorFolder``):
    /// a name already there is skipped too, so no mirror copy meets a file of that name.
    public static func freshNames(in folder: SessionFolder, tracks: [Int], container: AudioContainer, mirror: String? = nil) -> [String] {
        freshNames(in: folder.audioFolder, of: folder, tracks: tracks, extension: container.rawValue, mirror: mirror)
    }

    /// As ``freshNames(in:tracks:container:)``, for MIDI takes: `.mid` files in the session's
    /// `midi/` folder (created when missing).
    public static func freshMIDINames(in folder: SessionFolder, tracks: [Int]) -> [String] {
        if !FileManager.default.fileExists(atPath: folder.midiFolder) { mkdir(folder.midiFolder, 0o755) }
        return freshNames(in: folder.midiFolder, of: folder, tracks: tracks, extension: "mid")
    }

    private static func freshNames(in directory: String, of folder: SessionFolder, tracks: [Int], extension ext: String,
                                   mirror: String? = nil) -> [String] {
        let stamp = LocalTimestamp.string("%Y%m%d-%H%M%S")
        return tracks.map { track in
            let base = tracks.count == 1 ? "take-\(stamp)" : "take-\(stamp)-t\(track + 1)"
            for n in 1...10_000 {
                let name = n == 1 ? "\(base).\(ext)" : "\(base)-\(n).\(ext)"
                let file = directory + "/" + name
                var st = stat()
                if lstat(file, &st) == 0 { continue }
                // Through the one write guard (a new name in the session's own audio/ or midi/);
                // a folder that leads elsewhere is the writer's to report, as any failure.
                if WriteGuard.refusal(file, kind: .newInSession(folder)) != nil { return name }
                if let mirror, [name, TakePieces.firstPieceName(name)].contains(where: { lstat(mirror + "/" + $0, &st) == 0 }) { continue }
                let fd = open(TakeMarker.sidecarPath(forAudio: file), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                if fd >= 0 {
                    close(fd)
                    return name
                }
                // Taken by another recorder (or a link planted there): try the next name. Any
                // other failure (no folder, no permission) is the writer's to report.
                if errno != EEXIST { return name }
            }
            return "\(base)-\(getpid()).\(ext)"
        }
    }

    /// What a take stores about itself (BWF/iXML or Vorbis comments, see `TakeMetadata`):
    /// session, track, timeline position, speed, device and the input chain it went through.
    public static func metadata(folder: SessionFolder?, session: Session?, trackIndex: Int?, device: String, deviceChannels: [Int],
                                timelineFrame: Int64, latency: TakeLatency, speed: Double, inputChain: String) -> TakeMetadata {
        let track = trackIndex.flatMap { i in session?.tracks.indices.contains(i) == true ? session?.tracks[i] : nil }
        var name = folder.map { ($0.path as NSString).lastPathComponent } ?? ""
        if name.hasSuffix(".tapedeck") { name.removeLast(".tapedeck".count) }
        return TakeMetadata(session: name, trackNumber: trackIndex.map { $0 + 1 }, trackName: track?.name ?? "",
                            timelineFrame: timelineFrame, latencyFrames: latency.totalFrames, speed: speed, device: device,
                            deviceChannels: deviceChannels, inputChain: inputChain, startedAt: LocalTimestamp.string("%Y-%m-%d %H:%M:%S"),
                            latencyParts: latency.playing ? latency.text : "")
    }

    /// `take.wav` → `take.dry.wav`.
    public static func dryPath(for path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return path + ".dry" }
        return String(path[..<dot]) + ".dry" + String(path[dot...])
    }

    /// `take.wav` → `take-2.wav`.
    public static func numbered(_ path: String, _ n: Int) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return path + "-\(n)" }
        return String(path[..<dot]) + "-\(n)" + String(path[dot...])
    }
}
