import Foundation
import TapedeckCore
import TapedeckIO

/// What `record` and the screen name a take file and write into it, so the two agree.
enum TakeFiles {
    /// A file name in the session's `audio/` that is not taken: `take-YYYYMMDD-HHMMSS[-N].EXT`.
    static func freshName(in folder: SessionFolder, container: AudioContainer) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        f.locale = Locale(identifier: "en_US_POSIX")
        let stamp = f.string(from: Date())
        var name = "take-\(stamp).\(container.rawValue)"
        var n = 2
        while FileManager.default.fileExists(atPath: folder.audioFolder + "/" + name) {
            name = "take-\(stamp)-\(n).\(container.rawValue)"
            n += 1
        }
        return name
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
