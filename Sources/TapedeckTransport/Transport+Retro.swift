import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTakes

extension Transport {
    /// Retroactive capture: turns the last seconds every armed track heard into takes,
    /// placed where they were played (what was heard while standing goes after the playhead,
    /// as if it had rolled). Only the stretch since the transport last jumped (a start, a
    /// stop, a locate, a loop's wrap) is kept, so every kept frame has one true place. The
    /// takes wait in ``collectFinishedTakes()``. Throws when there is nothing to keep.
    ///
    /// `paths` names the files for takes outside a session (one per listening track).
    @discardableResult
    public func keepRetro(paths: [Int: String] = [:]) throws -> [FinishedTake] {
        guard options.retroSeconds != nil else {
            throw TransportError(.usage, "retroactive capture is off")
        }
        guard engine.configuration.captureChannels > 0 else {
            throw TransportError(.device, "retroactive capture needs an audio device with inputs (the screen listens while a track is armed)")
        }
        let armed = listening.sorted()
        guard !armed.isEmpty else { throw TransportError(.usage, "not listening (arm a track)") }
        if paths.isEmpty {
            guard let folder, folder.exists else {
                throw TransportError(.usage, "save the session first: takes are written into its audio/ folder")
            }
        }
        let config = engine.configuration
        let names = folder.map { TakeFiles.freshNames(in: $0, tracks: armed, container: options.takeContainer) } ?? []
        var kept: [FinishedTake] = []
        // A name reserved (its empty marker) for a track that keeps nothing is given back.
        var keptNames = Set<Int>()
        defer {
            for k in names.indices where !keptNames.contains(k) {
                if let folder { TakeMarker.remove(forAudio: folder.absolutePath(of: "audio/" + names[k])) }
            }
        }
        for (k, t) in armed.enumerated() {
            guard let buffer = engine.retroBuffer(track: t), let firstDevice = buffer.firstDeviceFrame else { continue }
            let written = buffer.framesWritten
            guard written > 0 else { continue }
            let channels = spec.tracks[t].input?.deviceChannels ?? [1]
            // What plays is heard back this much later on this track's inputs (the one
            // latency model, as for every take); with nothing playing, at once.
            let placement = engine.takeLatency(captureChannels: channels, playing: options.playsSession)
            let latency = placement.totalFrames
            // The segment the newest frame was played in, and how far back it goes.
            let lastPlayed = firstDevice + written - 1 - latency
            guard let segment = engine.transportSegment(at: lastPlayed) else { continue }
            let earliest = max(0, segment.deviceFrame + latency - firstDevice)
            let relative = paths[t] == nil ? "audio/" + names[k] : nil
            let path = paths[t] ?? folder!.absolutePath(of: relative!)
            let format = AudioFileFormat(container: options.takeContainer, encoding: options.takeEncoding,
                                         sampleRate: config.sampleRate, channelCount: buffer.channelCount)
            let speed = segment.speed == 0 ? 1 : segment.speed
            let metadata = TakeFiles.metadata(folder: relative == nil ? nil : folder, session: session, trackIndex: t,
                                              device: config.name, deviceChannels: channels,
                                              timelineFrame: segment.timelineFrame, latency: placement, speed: speed,
                                              inputChain: spec.tracks[t].input?.chain.text ?? "")
            let (first, count) = try buffer.keep(to: path, format: format, metadata: metadata, notBefore: earliest)
            let played = firstDevice + first - latency
            let start = segment.timelineFrame + Int64((Double(played - segment.deviceFrame) * speed).rounded(.down))
            // A part played before the timeline's start keeps only what lies after it.
            let skip = max(0, -start)
            guard Int64(count) > skip else {
                unlink(path)
                continue
            }
            var region = Region(file: relative ?? path, timelineStartFrame: start + skip, sourceOffsetFrame: skip,
                                lengthFrames: Int64(count) - skip)
            region.scale(recordedSpeed: segment.speed == 0 ? 1 : segment.speed)
            // In a session the take is marked, as a recorded one is, until a saved session holds
            // it: killed before that, the next open places it where this would have. (Its name
            // was reserved with an empty marker, which is filled in here.)
            var markerPath: String?
            if let relative, let folder {
                let marker = TakeMarker(file: relative, session: folder.path, trackIndex: t, trackName: session.tracks[t].name,
                                        timelineStartFrame: start + skip, latencyFrames: skip, sampleRate: config.sampleRate,
                                        deviceChannels: channels, startedAtSeconds: Date().timeIntervalSince1970,
                                        recordedSpeed: segment.speed == 0 ? 1 : segment.speed)
                markerPath = TakeMarker.sidecarPath(forAudio: path)
                if (try? marker.write(forAudio: path)) == nil { markerPath.map { _ = unlink($0) }; markerPath = nil }
            }
            if relative != nil { keptNames.insert(k) }
            var take = FinishedTake(trackIndex: t, trackName: session.tracks[t].name, region: region, markerPath: markerPath, verb: "kept")
            // Device time that passed unheard inside it (xruns) is silence at its place, said
            // as a recorded take says it: a cue (WAV) or chapter (FLAC) and a lost-input marker.
            let gaps = buffer.gaps(from: first, to: first + Int64(count))
            take.markers = markGaps(gaps, inFileAt: path, frameCount: Int64(count), sampleRate: config.sampleRate,
                                    timeline: { start + Int64((Double($0) * speed).rounded(.down)) }, from: skip,
                                    inSession: relative != nil)
            kept.append(take)
        }
        guard !kept.isEmpty else { throw TransportError(.usage, "nothing heard yet to keep") }
        finishedTakes += kept
        return kept
    }

    /// Cues (WAV) or chapters (FLAC) in a kept take at each of its `gaps` of silence (frame in
    /// the file, count), named as a recorded take's xruns; the timeline markers for those at
    /// or after file frame `from` (`timeline` places a file frame), when it is a session's.
    private func markGaps(_ gaps: [(frame: Int64, count: Int64)], inFileAt path: String, frameCount: Int64, sampleRate: Int,
                          timeline: (Int64) -> Int64, from: Int64, inSession: Bool) -> [Marker] {
        guard !gaps.isEmpty else { return [] }
        let cues = gaps.map { CuePoint(frame: $0.frame, name: TakeStamps.xrunName(lostFrames: $0.count)) }
        // A file that refuses the patch keeps its audio whole; the timeline's markers still say it.
        if options.takeContainer == .wav {
            _ = try? TakeFilePatch.appendCues(path: path, cues: cues, frameCount: frameCount)
        } else {
            try? FLACChapters.add(cues, sampleRate: sampleRate, toFileAt: path)
        }
        guard inSession else { return [] }
        return gaps.filter { $0.frame >= from }.map { Marker(name: TakeStamps.xrunName(lostFrames: $0.count), frame: timeline($0.frame), kind: .lostInput) }
    }
}
