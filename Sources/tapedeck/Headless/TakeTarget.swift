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
            if let text = c.trackText {
                index = try TrackSelector.index(of: text, in: session, command: "record")
            } else if let armed = session.tracks.firstIndex(where: \.armed) {
                index = armed
            } else {
                session.tracks.append(Track(name: "Track \(session.tracks.count + 1)", inputChannels: c.channels))
                index = session.tracks.count - 1
                try folder.save(session)
            }
            relativeFile = "audio/" + TakeFiles.freshName(in: folder, container: container)
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

    /// What the take stores about itself (BWF/iXML or Vorbis comments, see `TakeMetadata`):
    /// session, track, timeline position, speed, device and input chain. For the take
    /// writer, through `TakeRequest.metadata` once the engine carries it.
    func metadata(device: String, deviceChannels: [Int], timelineFrame: Int64 = 0, latencyFrames: Int64,
                  speed: Double = 1) -> TakeMetadata {
        TakeFiles.metadata(folder: folder, session: session, trackIndex: trackIndex, device: device, deviceChannels: deviceChannels,
                           timelineFrame: timelineFrame, latencyFrames: latencyFrames, speed: speed)
    }
}
