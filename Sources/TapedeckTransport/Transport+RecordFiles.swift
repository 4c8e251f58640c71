import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckTakes

extension Transport {
    /// The pass's files, each with its crash marker and what it says about itself (bext/iXML:
    /// the device, its inputs, the timeline frame, the latency it was placed with), and the
    /// engine's requests to write them. On a failure the names claimed are given back.
    func takeFiles(_ plan: RecordPlan) throws -> RecordFiles {
        let config = engine.configuration
        let request = plan.request
        var files = RecordFiles()
        files.names = folder.map { TakeFiles.freshNames(in: $0, tracks: plan.audioTracks, container: options.takeContainer, mirror: request.mirrorFolder) } ?? []
        files.midiNames = folder.map { TakeFiles.freshMIDINames(in: $0, tracks: plan.midiTracks) } ?? []
        let placement = plan.placement(punchCrossfadeFrames: session.punchCrossfadeFrames)
        let markerStart = plan.markerStart
        for (k, t) in plan.midiTracks.enumerated() {
            guard let folder else { break }
            let relative = "midi/" + files.midiNames[k]
            let marker = TakeMarker(file: relative, session: folder.path, trackIndex: t, trackName: session.tracks[t].name,
                                    timelineStartFrame: markerStart, latencyFrames: 0, sampleRate: config.sampleRate,
                                    deviceChannels: [], startedAtSeconds: Date().timeIntervalSince1970, placement: placement)
            let take = RecordingPass.Take(track: t, trackName: session.tracks[t].name, relativeFile: relative,
                                          path: folder.absolutePath(of: relative), marker: marker)
            files.midiTakes.append(take)
            files.midiRequests.append(MIDITakeRequest(track: t, path: take.path, marker: marker, tempoMap: session.tempoMap,
                                                      trackName: session.tracks[t].name, speed: timePitch.speed))
        }
        do {
            for (k, t) in plan.audioTracks.enumerated() {
                let (take, r) = try audioTake(plan, track: t, name: files.names.indices.contains(k) ? files.names[k] : "",
                                              latency: plan.latencies[k], placement: placement)
                files.requests.append(r)
                files.takes.append(take)
            }
        } catch {
            files.dropClaims(in: folder)
            throw error
        }
        return files
    }

    /// Track `t`'s audio take in `plan`: its file (`name` in the session's `audio/`, or the
    /// request's own file), its marker, and the engine's request to write it.
    private func audioTake(_ plan: RecordPlan, track t: Int, name: String, latency: TakeLatency,
                           placement: TakeMarker.Placement) throws -> (RecordingPass.Take, TakeRequest) {
        let config = engine.configuration
        let request = plan.request
        let input = spec.tracks[t].input
        let channels = input?.deviceChannels ?? [1]
        var take: RecordingPass.Take
        let trackName = session.tracks[t].name
        func marker(file: String, inSession: Bool) -> TakeMarker {
            var m = TakeMarker(file: file, session: inSession ? folder?.path : nil, trackIndex: inSession ? t : nil,
                               trackName: inSession ? trackName : nil, timelineStartFrame: plan.markerStart, latencyFrames: 0,
                               sampleRate: config.sampleRate, deviceChannels: channels,
                               startedAtSeconds: Date().timeIntervalSince1970, placement: placement,
                               recordedSpeed: timePitch.speed)
            if request.keepsDryCopy { m.dryFile = TakeFiles.dryPath(for: file) }
            return m
        }
        let takeChannels = max(1, min(channels.count, 2))
        let pieceFrames = request.split?.framesPerPiece(sampleRate: config.sampleRate, channels: takeChannels,
                                                        encoding: options.takeEncoding)
        // A split take's names are its first piece's (`X-001.wav`); the writer names the next.
        func named(_ name: String) -> String { pieceFrames == nil ? name : TakePieces.firstPieceName(name) }
        if let given = request.outputPath, plan.tracks.count == 1 {
            let out = named(given)
            let absolute = out.hasPrefix("/") ? out : FileManager.default.currentDirectoryPath + "/" + out
            take = RecordingPass.Take(track: t, trackName: trackName, relativeFile: nil, path: out,
                                      marker: marker(file: absolute, inSession: false))
        } else if let folder {
            let relative = "audio/" + named(name)
            take = RecordingPass.Take(track: t, trackName: trackName, relativeFile: relative,
                                      path: folder.absolutePath(of: relative), peakPath: folder.peakPath(forAudio: relative),
                                      marker: marker(file: relative, inSession: true))
        } else {
            throw TransportError(.usage, "give one file for a take outside a session")
        }
        if request.keepsDryCopy { take.dryPath = TakeFiles.dryPath(for: take.path) }
        take.captureChannels = channels
        take.latency = latency
        var r = TakeRequest(track: t, channelCount: takeChannels, path: take.path,
                            container: options.takeContainer, encoding: options.takeEncoding, peakPath: take.peakPath,
                            marker: take.marker)
        r.latencyFrames = take.latency.totalFrames
        r.metadata = TakeFiles.metadata(folder: take.relativeFile == nil ? nil : folder, session: session,
                                        trackIndex: take.relativeFile == nil ? nil : t, device: config.name,
                                        deviceChannels: channels, timelineFrame: plan.recordPoint, latency: take.latency,
                                        speed: timePitch.speed, inputChain: input?.chain.text ?? "")
        // Known only once the first frame is in: a placeholder as long as any, replaced on close.
        if options.stampsTakesWithClock { r.metadata?.timeReference = TakeFilePatch.placeholderTimeReference }
        r.dryPath = take.dryPath
        r.recordsDry = request.recordsDry
        r.splitFrames = pieceFrames
        take.pieceFrames = pieceFrames
        if let mirror = request.mirrorFolder {
            take.mirrorPath = try mirrorPath(for: take.path, in: mirror)
            r.mirrorPath = take.mirrorPath
        }
        return (take, r)
    }

    /// The click, the route, then roll: the engine starts writing `files` behind the gate
    /// and the transport rolls from the count-in (or, already rolling straight on, keeps
    /// rolling). On a failure the names claimed are given back and the loop is as it was.
    func roll(_ plan: RecordPlan, _ files: RecordFiles) throws -> TakeSet {
        let config = engine.configuration
        let countIn = plan.countIn, recordPoint = plan.recordPoint, leadsInto = plan.leadsInto
        let until = countIn > 0 && clickMode == .off ? recordPoint : nil
        engine.setClick(on: clickMode != .off || countIn > 0, recordingOnly: clickMode == .recording, untilFrame: until,
                        levelDecibels: clickLevelDecibels, countIn: countIn > 0 ? (leadsInto - countIn)..<leadsInto : nil)
        // A count-in from before JACK's frame 0 runs on the engine's own clock, from a whole
        // number of periods before 0 (so that it reaches 0 on a period's edge), and JACK's
        // transport joins it at 0.
        let rolling = plan.rolling
        let preRolls = !plan.onTheFly && engine.followsHost && plan.transportStart < 0
        let period = Int64(max(engine.hostCycleFrames, config.periodFrames, 1))
        let preRollStart = -((-plan.transportStart + period - 1) / period) * period
        if !plan.onTheFly {
            if rolling { engine.stop() }
            // Already there (a command line starts the transport where its take begins): no
            // seek, so the first period rolls.
            if !preRolls && (rolling || engine.followsHost || status.positionFrame != plan.transportStart) {
                engine.locate(to: plan.transportStart)
            }
        }
        switch plan.kind {
        case .loop(let l): engine.setLoop(l, enabled: true)
        case .punch, .plain: engine.setLoop(loop, enabled: false)
        }
        let set: TakeSet
        do { set = try engine.startTakes(files.requests, gate: plan.gate, midi: files.midiRequests) } catch {
            files.dropClaims(in: folder)
            engine.setLoop(loop, enabled: loopEnabled)
            throw TransportError(.file, "cannot record: \(error)")
        }
        // A split take's pieces carry their own markers: the claim on the take's own name
        // (which no file will have) goes.
        if let folder, plan.request.split != nil {
            for name in files.names { TakeMarker.remove(forAudio: folder.audioFolder + "/" + name) }
        }
        engine.setEndFrame(nil)
        if !plan.onTheFly && options.waitsForTimePitchToStart { engine.waitForTimePitch() }
        if preRolls {
            engine.play(from: preRollStart, joiningHostAt: 0)
        } else if !plan.onTheFly {
            engine.play()
        }
        _ = engine.waitUntilApplied(timeoutSeconds: 0.5)
        return set
    }
}
