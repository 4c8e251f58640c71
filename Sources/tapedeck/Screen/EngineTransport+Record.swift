import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckUI

/// A take being recorded: where its file is and how it goes onto the timeline.
struct TakeInProgress {
    /// The track it is for (0-based) and that track's name.
    var trackIndex: Int
    var trackName: String
    /// The file, relative to the session folder (`audio/take-….wav`) and absolute.
    var relativeFile: String
    var audioPath: String
    /// Timeline frame of the take's first frame: the record point (the punch start, the
    /// loop start).
    var recordPoint: Int64
    /// The punch range, when punching: the engine's gate keeps exactly it, and the take is
    /// punched in with crossfades.
    var punch: FrameRange?
    /// The loop range, when loop recording: every pass becomes a take of one group.
    var loop: FrameRange?
    /// Frames at the file's start that precede the timeline (loop recording only; a gated
    /// take starts exactly at its record point).
    var latencyFrames: Int64 = 0
}

extension EngineTransport {
    /// Starts recording the first armed track at `from`, the session playing (an overdub,
    /// like `tapedeck record --play`): after the count-in, from the punch start inside the
    /// punch range, or every pass of the loop. Returns why not, or nil once it runs.
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
        let countIn = Int64((Double(countInBars) * session.tempoMap.framesPerBar).rounded())

        let name = EngineTransport.takeName(in: folder)
        var take = TakeInProgress(trackIndex: trackIndex, trackName: track.name, relativeFile: "audio/" + name,
                                  audioPath: folder.absolutePath(of: "audio/" + name), recordPoint: from)
        // The gate keeps only the timeline from the record point on (to the punch end), so the
        // take starts exactly there whatever the count-in or pre-roll before it.
        var gate: FrameRange?
        let transportStart: Int64
        if punchEnabled, let p = punch, p.frameCount > 0 {
            guard from < p.endFrame else { return "the playhead is past the punch range: move it before its end" }
            take.recordPoint = max(from, p.startFrame)
            take.punch = FrameRange(startFrame: take.recordPoint, endFrame: p.endFrame)
            gate = take.punch
            transportStart = from - countIn
        } else if loopEnabled, let l = loop, l.frameCount > 0 {
            // Every pass starts at the loop start; the engine's loop has no room for a count-in.
            take.loop = l
            take.recordPoint = l.startFrame
            transportStart = l.startFrame
        } else {
            gate = FrameRange(startFrame: from, endFrame: Int64.max)
            transportStart = from - countIn
        }
        var click: ClickSettings?
        switch clickMode {
        case .off:
            if countIn > 0 && take.loop == nil {
                var c = ClickSettings()
                c.untilFrame = take.recordPoint
                click = c
            }
        case .recording, .always:
            click = ClickSettings()
        }
        do {
            // Recorded through the track's input chain, as `tapedeck record` into a session is.
            let inputChain: Chain
            do { inputChain = try Chain(parsing: track.inputChain) } catch {
                throw ChainContextError(place: "track \(trackIndex + 1) (\(track.name)) input chain", error: error)
            }
            // Auto monitoring hears the input in place of the track's own playback.
            let silenced: Set<Int> = track.monitoring == .auto ? [trackIndex] : []
            let plan = try PlaybackPlan(session: session, folder: folder, from: transportStart, to: take.loop?.endFrame,
                                        loop: take.loop != nil, silencing: silenced)
            let dev = try device.open(sampleRate: session.sampleRate, captureChannels: channels.max() ?? 1)
            let config = dev.configuration
            var options = DeviceOptions.engineOptions()
            options.latencyOffsetFrames = latencyOffset(device: config.name)
            options.click = click
            options.monitorInput = track.monitoring != .off
            options.transportStartFrame = transportStart
            let roundTrip = config.roundTripLatencyFrames + options.latencyOffsetFrames
            let markerLatency = take.loop == nil ? 0 : roundTrip
            // Everything recovery needs to place a killed take where `finish` would have.
            let placement: TakeMarker.Placement = take.loop.map { .loopPasses(loop: $0) }
                ?? take.punch.map { .punch(range: $0, crossfadeFrames: session.punchCrossfadeFrames) } ?? .plain
            var marker = TakeMarker(file: take.relativeFile, session: folder.path, trackIndex: trackIndex, trackName: track.name,
                                    timelineStartFrame: take.recordPoint, latencyFrames: markerLatency,
                                    sampleRate: config.sampleRate, deviceChannels: channels,
                                    startedAtSeconds: Date().timeIntervalSince1970, placement: placement)
            var request = TakeRequest(path: take.audioPath, container: .wav, encoding: .int24, deviceChannels: channels,
                                      peakPath: folder.peakPath(forAudio: take.relativeFile), maxFrames: nil, marker: marker)
            request.inputChain = inputChain
            request.gate = gate
            request.metadata = takeMetadata(trackIndex: trackIndex, device: config.name, channels: channels,
                                            timelineFrame: take.recordPoint, latencyFrames: markerLatency)
            let engine: Engine
            do { engine = try Engine(device: dev, take: request, playback: plan, options: options) } catch { dev.stop(); throw error }
            take.latencyFrames = take.loop == nil ? 0 : engine.takeLatencyFrames
            if marker.latencyFrames != take.latencyFrames {
                // The engine's figure adds the master chain's look-ahead; the marker must agree.
                marker.latencyFrames = take.latencyFrames
                do { try marker.write(forAudio: take.audioPath) } catch { dev.stop(); throw error }
            }
            do { try engine.start() } catch {
                dev.stop()
                TakeMarker.remove(forAudio: take.audioPath)
                unlink(take.audioPath)
                throw error
            }
            if options.monitorInput {
                let frames = config.captureLatencyFrames + config.playbackLatencyFrames + Int64(engine.inputChainLatencyFrames)
                let ms = Double(frames) * 1000 / Double(config.sampleRate)
                pendingNotice = "monitoring \(track.monitoring.rawValue): \(frames) frames (\(String(format: "%.1f", ms)) ms) from input to output"
            }
            run = Run(engine: engine, activity: .recording(take),
                      planTracks: audibleTracks(session).filter { !silenced.contains($0) }, silenced: silenced)
            return nil
        } catch {
            return "cannot record: \(error)"
        }
    }

    /// The calibrated extra round trip of `device` (`tapedeck calibrate`); 0 when none.
    func latencyOffset(device: String) -> Int64 {
        do { return try LatencyOffsets.load().offset(forDevice: device) } catch {
            pendingError = "latency offsets: \(error) (recording without them)"
            return 0
        }
    }

    /// What a take says about itself, as `record` writes it.
    func takeMetadata(trackIndex: Int, device: String, channels: [Int], timelineFrame: Int64, latencyFrames: Int64) -> TakeMetadata {
        TakeFiles.metadata(folder: folder, session: session, trackIndex: trackIndex, device: device, deviceChannels: channels,
                           timelineFrame: timelineFrame, latencyFrames: latencyFrames, speed: 1)
    }

    /// Hands a closed take to the screen: one region at its record point (punched in with
    /// crossfades when punching), or one take per loop pass. A take with nothing on the
    /// timeline (stopped during the count-in or within the round trip) is deleted.
    func finish(_ take: TakeInProgress, frames: Int64) {
        var regions: [Region] = []
        if let loop = take.loop {
            // One file holds every pass back to back, after the round trip.
            regions = Region.loopPasses(file: take.relativeFile, loop: loop, firstSourceFrame: take.latencyFrames, fileFrames: frames)
        } else if frames > 0 {
            regions.append(Region(file: take.relativeFile, timelineStartFrame: take.recordPoint, lengthFrames: frames))
        }
        guard let first = regions.first else {
            TakeMarker.remove(forAudio: take.audioPath)
            unlink(take.audioPath)
            if let folder { unlink(folder.peakPath(forAudio: take.relativeFile)) }
            pendingError = "nothing was recorded (stopped before the record point was reached)"
            return
        }
        let placement: TakePlacement
        if take.loop != nil {
            placement = .loopPasses(Array(regions.dropFirst()))
        } else if take.punch != nil {
            placement = .punch(crossfadeFrames: session.punchCrossfadeFrames)
        } else {
            placement = .plain
        }
        finishedTakes.append(FinishedTake(trackIndex: take.trackIndex, trackName: take.trackName, region: first,
                                          markerPath: TakeMarker.sidecarPath(forAudio: take.audioPath), placement: placement))
    }

    /// A file name in `audio/` that is not taken: `take-YYYYMMDD-HHMMSS[-N].wav`.
    static func takeName(in folder: SessionFolder) -> String { TakeFiles.freshName(in: folder, container: .wav) }
}
