import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckUI

/// A take being recorded: where its file is and where it will sit on the timeline.
struct TakeInProgress {
    /// The track it is for (0-based) and that track's name.
    var trackIndex: Int
    var trackName: String
    /// The file, relative to the session folder (`audio/take-….wav`) and absolute.
    var relativeFile: String
    var audioPath: String
    /// Timeline frame of the region's first frame.
    var timelineStartFrame: Int64
    /// Frames at the file's start that are not on the timeline: the overdub's round trip,
    /// plus the pre-roll before a punch-in.
    var sourceOffsetFrame: Int64
}

extension EngineTransport {
    /// Starts recording the first armed track at `from`, the other audible tracks playing
    /// (an overdub, like `tapedeck record --play`). Returns why not, or nil once it runs.
    func startRecording(from: Int64) -> String? {
        guard let folder, folder.exists else {
            return "save the session first (ctrl-s): takes are written into its audio/ folder"
        }
        guard let trackIndex = session.tracks.firstIndex(where: \.armed) else { return "no armed track" }
        guard timePitch.isIdentity else {
            // A take must line up with what was heard; at another speed or pitch it cannot.
            return "recording plays at 1.00x without pitch shift: set speed and pitch back first"
        }
        let track = session.tracks[trackIndex]
        let channels = track.inputChannels.isEmpty ? [1] : track.inputChannels
        var punchEnd: Int64?
        var regionStart = from
        if punchEnabled, let p = punch, p.frameCount > 0 {
            guard from < p.endFrame else { return "the playhead is past the punch range: move it before its end" }
            punchEnd = p.endFrame
            regionStart = max(from, p.startFrame)
        }
        // The armed track is not played back: it is what is being replaced or added.
        let heard = EngineTransport.withoutArmed(session)

        let name = EngineTransport.takeName(in: folder)
        let take = TakeInProgress(trackIndex: trackIndex, trackName: track.name, relativeFile: "audio/" + name,
                                  audioPath: folder.absolutePath(of: "audio/" + name),
                                  timelineStartFrame: regionStart, sourceOffsetFrame: 0)
        do {
            // Recorded through the track's input chain, as `tapedeck record` into a session is.
            let inputChain: Chain
            do { inputChain = try Chain(parsing: track.inputChain) } catch {
                throw ChainContextError(place: "track \(trackIndex + 1) (\(track.name)) input chain", error: error)
            }
            let plan = try PlaybackPlan(session: heard, folder: folder, from: from)
            let dev = try device.open(sampleRate: session.sampleRate, captureChannels: channels.max() ?? 1)
            let config = dev.configuration
            // As `record --play`: the take starts a round trip early, so that many frames at
            // its head are skipped when it goes on the timeline; a punch skips the pre-roll too.
            let latency = config.roundTripLatencyFrames
            var placed = take
            placed.sourceOffsetFrame = latency + (regionStart - from)
            let marker = TakeMarker(file: take.relativeFile, session: folder.path, trackIndex: trackIndex,
                                    timelineStartFrame: regionStart, latencyFrames: placed.sourceOffsetFrame,
                                    sampleRate: config.sampleRate, deviceChannels: channels,
                                    startedAtSeconds: Date().timeIntervalSince1970)
            var request = TakeRequest(path: take.audioPath, container: .wav, encoding: .int24, deviceChannels: channels,
                                      peakPath: folder.peakPath(forAudio: take.relativeFile),
                                      maxFrames: punchEnd.map { latency + $0 - from }, marker: marker)
            request.inputChain = inputChain
            let engine: Engine
            do { engine = try Engine(device: dev, take: request, playback: plan) } catch { dev.stop(); throw error }
            do { try engine.start() } catch {
                dev.stop()
                TakeMarker.remove(forAudio: take.audioPath)
                unlink(take.audioPath)
                throw error
            }
            run = Run(engine: engine, activity: .recording(placed), planTracks: audibleTracks(heard))
            return nil
        } catch {
            return "cannot record: \(error)"
        }
    }

    /// Hands a closed take to the screen as a region; a take too short to reach the
    /// timeline (stopped within the round trip) is deleted with its marker.
    func finish(_ take: TakeInProgress, frames: Int64) {
        let length = frames - take.sourceOffsetFrame
        guard length > 0 else {
            TakeMarker.remove(forAudio: take.audioPath)
            unlink(take.audioPath)
            if let folder { unlink(folder.peakPath(forAudio: take.relativeFile)) }
            pendingError = "the take was too short to keep (stopped within the device's latency)"
            return
        }
        let region = Region(file: take.relativeFile, timelineStartFrame: take.timelineStartFrame,
                            sourceOffsetFrame: take.sourceOffsetFrame, lengthFrames: length)
        finishedTakes.append(FinishedTake(trackIndex: take.trackIndex, trackName: take.trackName, region: region,
                                          markerPath: TakeMarker.sidecarPath(forAudio: take.audioPath)))
    }

    /// A file name in `audio/` that is not taken: `take-YYYYMMDD-HHMMSS[-N].wav`.
    static func takeName(in folder: SessionFolder) -> String {
        let stamp = TakeTarget.timestamp()
        var name = "take-\(stamp).wav"
        var n = 2
        while FileManager.default.fileExists(atPath: folder.audioFolder + "/" + name) {
            name = "take-\(stamp)-\(n).wav"
            n += 1
        }
        return name
    }
}
