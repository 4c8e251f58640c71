import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine

/// Where a take goes: a plain file, or a new file in a session's `audio/` and a region on a
/// track. Decides names and places the finished take.
struct TakeTarget {
    var folder: SessionFolder?
    var session: Session?
    var trackIndex: Int?
    var audioPath: String
    var markerFile: String
    var peakPath: String?
    var container: AudioContainer
    var sampleRate: Int
    var relativeFile: String

    init(command c: RecordCommand) throws {
        container = c.container ?? .wav
        if let s = c.sessionPath {
            let folder = SessionFolder(path: s)
            let recovered = try TakeRecovery.recover(session: folder)
            for r in recovered {
                Terminal.err("recovered unfinished take \(r.file)" + (r.problem.map { ": \($0)" } ?? "") + "\n")
            }
            var session = try folder.load()
            if let r = c.sampleRate, r != session.sampleRate {
                throw UsageError("record: the session runs at \(session.sampleRate) Hz; --sample-rate \(r) does not match")
            }
            let index: Int
            if let n = c.trackNumber {
                guard n <= session.tracks.count else {
                    throw UsageError("record: track \(n) does not exist (the session has \(session.tracks.count) track\(session.tracks.count == 1 ? "" : "s"))")
                }
                index = n - 1
            } else if let armed = session.tracks.firstIndex(where: \.armed) {
                index = armed
            } else {
                session.tracks.append(Track(name: "Track \(session.tracks.count + 1)", inputChannels: c.channels))
                index = session.tracks.count - 1
                try folder.save(session)
            }
            let stamp = TakeTarget.timestamp()
            var name = "take-\(stamp).\(container.rawValue)"
            var n = 2
            while FileManager.default.fileExists(atPath: folder.audioFolder + "/" + name) {
                name = "take-\(stamp)-\(n).\(container.rawValue)"
                n += 1
            }
            relativeFile = "audio/" + name
            self.folder = folder
            self.session = session
            trackIndex = index
            audioPath = folder.absolutePath(of: relativeFile)
            markerFile = relativeFile
            peakPath = folder.peakPath(forAudio: relativeFile)
            sampleRate = session.sampleRate
        } else {
            let out = c.outPath ?? "take.wav"
            audioPath = out
            relativeFile = out
            markerFile = out.hasPrefix("/") ? out : FileManager.default.currentDirectoryPath + "/" + out
            sampleRate = c.sampleRate ?? 48000
        }
    }

    /// Puts the closed take on its track and saves the session (a plain file needs nothing).
    /// Reloads the session first so edits made meanwhile are kept.
    func place(frames: Int64, latencyFrames: Int64) throws {
        guard let folder, let trackIndex else { return }
        let length = frames - latencyFrames
        guard length > 0 else { return }
        var current = try folder.load()
        guard current.tracks.indices.contains(trackIndex) else {
            throw RecordFailure(message: "track \(trackIndex + 1) was removed while recording; the take is kept in \(audioPath)")
        }
        current.tracks[trackIndex].regions.append(Region(file: relativeFile, timelineStartFrame: 0,
                                                         sourceOffsetFrame: latencyFrames, lengthFrames: length))
        try folder.save(current)
    }

    /// What the take stores about itself (BWF/iXML or Vorbis comments, see `TakeMetadata`):
    /// session, track, timeline position, speed, device and input chain. For the take
    /// writer, through `TakeRequest.metadata` once the engine carries it.
    func metadata(device: String, deviceChannels: [Int], timelineFrame: Int64 = 0, latencyFrames: Int64,
                  speed: Double = 1) -> TakeMetadata {
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

    static func timestamp() -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        f.locale = Locale(identifier: "en_US_POSIX")
        return f.string(from: Date())
    }
}
