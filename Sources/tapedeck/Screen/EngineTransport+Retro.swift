import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckUI

/// Retroactive capture on the screen: while the transport is stopped and a track is armed,
/// an engine listens to that track's inputs (no take, no playback), keeping the last
/// ``EngineTransport/retroSeconds`` in memory; the retro key turns them into a take placed
/// where it was played, as `record --retro` does on SIGUSR1.
extension EngineTransport {
    /// The listening run.
    struct Listener {
        let engine: Engine
        let trackIndex: Int
        let trackName: String
        let channels: [Int]
    }

    /// Seconds of input kept while listening.
    static let retroSeconds = 10.0

    /// Starts listening when there is something to listen for and nothing else runs; ends a
    /// listener whose device failed. Called from every snapshot, so it follows arming,
    /// stopping and device changes without the screen asking.
    func listenWhenIdle() {
        if let listener, listener.engine.isDone { stopListening() }
        guard run == nil, listener == nil, !listenRefused, let folder, folder.exists,
              let trackIndex = session.tracks.firstIndex(where: \.armed) else { return }
        let track = session.tracks[trackIndex]
        let channels = track.inputChannels.isEmpty ? [1] : track.inputChannels
        do {
            // Capture only: nothing is played while listening.
            let dev = try device.open(sampleRate: session.sampleRate, captureChannels: channels.max() ?? 1, playbackChannels: 0)
            var options = DeviceOptions.engineOptions()
            options.retro = (EngineTransport.retroSeconds, channels)
            // Without playback frame k of the input was played at the playhead + k.
            options.transportStartFrame = position
            options.latencyOffsetFrames = latencyOffset(device: dev.configuration.name)
            let engine: Engine
            do { engine = try Engine(device: dev, take: nil, playback: nil, options: options) } catch { dev.stop(); throw error }
            do { try engine.start() } catch { dev.stop(); throw error }
            listener = Listener(engine: engine, trackIndex: trackIndex, trackName: track.name, channels: channels)
        } catch {
            // Not an error the user asked for: the retro key says it when pressed.
            listenRefused = true
            listenProblem = "\(error)"
        }
    }

    /// Ends the listening run (before play or record, or when arming changes).
    func stopListening() {
        guard let current = listener else { return }
        listener = nil
        current.engine.stop()
        _ = try? current.engine.finish()
    }

    func keepRetro() -> String? {
        guard let folder, folder.exists else { return "save the session first (ctrl-s): takes are written into its audio/ folder" }
        guard run == nil else { return "retroactive capture listens while stopped: stop first" }
        listenWhenIdle()
        guard let listener, let buffer = listener.engine.retroBuffer else {
            return "not listening" + (listenProblem.map { ": \($0)" } ?? " (arm a track)")
        }
        let name = EngineTransport.takeName(in: folder)
        let relative = "audio/" + name
        let path = folder.absolutePath(of: relative)
        let config = listener.engine.configuration
        let format = AudioFileFormat(container: .wav, encoding: .int24, sampleRate: config.sampleRate,
                                     channelCount: listener.channels.count)
        let origin = listener.engine.retroTimelineOrigin
        do {
            let metadata = takeMetadata(trackIndex: listener.trackIndex, device: config.name, channels: listener.channels,
                                        timelineFrame: origin, latencyFrames: listener.engine.takeLatencyFrames)
            let (first, count) = try buffer.keep(to: path, format: format, metadata: metadata)
            let start = origin + first
            // A part played before the timeline's start keeps only what lies after it.
            let skip = max(0, -start)
            guard Int64(count) > skip else {
                unlink(path)
                return "nothing heard yet to keep"
            }
            let region = Region(file: relative, timelineStartFrame: start + skip, sourceOffsetFrame: skip,
                                lengthFrames: Int64(count) - skip)
            finishedTakes.append(FinishedTake(trackIndex: listener.trackIndex, trackName: listener.trackName, region: region,
                                              markerPath: nil, verb: "kept"))
            return nil
        } catch {
            unlink(path)
            return "cannot keep the last seconds: \(error)"
        }
    }
}
