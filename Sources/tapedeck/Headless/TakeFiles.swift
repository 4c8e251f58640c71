import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine

/// What `record` and the screen name a take file and write into it, so the two agree.
enum TakeFiles {
    /// A file name in the session's `audio/` that is not taken: `take-YYYYMMDD-HHMMSS[-N].EXT`,
    /// claimed for this process by creating its crash marker (`NAME.recording`) exclusively,
    /// so two recorders starting in the same second can never choose the same file. The
    /// engine then writes the real marker over the claim and creates the take itself
    /// exclusively too. A claim whose take never started is removed by recovery.
    static func freshName(in folder: SessionFolder, container: AudioContainer) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        f.locale = Locale(identifier: "en_US_POSIX")
        let stamp = f.string(from: Date())
        for n in 1...10_000 {
            let name = n == 1 ? "take-\(stamp).\(container.rawValue)" : "take-\(stamp)-\(n).\(container.rawValue)"
            let audio = folder.audioFolder + "/" + name
            var st = stat()
            if lstat(audio, &st) == 0 { continue }
            let fd = open(TakeMarker.sidecarPath(forAudio: audio), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 {
                close(fd)
                return name
            }
            // Taken by another recorder (or a link planted there): try the next name. Any other
            // failure (no audio/ folder, no permission) is the writer's to report, by name.
            if errno != EEXIST { return name }
        }
        return "take-\(stamp)-\(getpid()).\(container.rawValue)"
    }

    /// What a take stores about itself (BWF/iXML or Vorbis comments, see `TakeMetadata`):
    /// session, track, timeline position, speed, device and input chain.
    static func metadata(folder: SessionFolder?, session: Session?, trackIndex: Int?, device: String, deviceChannels: [Int],
                         timelineFrame: Int64, latencyFrames: Int64, speed: Double) -> TakeMetadata {
        let track = trackIndex.flatMap { i in session?.tracks.indices.contains(i) == true ? session?.tracks[i] : nil }
        var name = folder.map { ($0.path as NSString).lastPathComponent } ?? ""
        if name.hasSuffix(".tapedeck") { name.removeLast(".tapedeck".count) }
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        f.locale = Locale(identifier: "en_US_POSIX")
        return TakeMetadata(session: name, trackNumber: trackIndex.map { $0 + 1 }, trackName: track?.name ?? "",
                            timelineFrame: timelineFrame, latencyFrames: latencyFrames, speed: speed, device: device,
                            deviceChannels: deviceChannels, inputChain: track?.inputChain ?? "", startedAt: f.string(from: Date()))
    }
}
