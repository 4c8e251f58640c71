import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckTakes

/// The end of a recording pass: its takes closed and turned into finished takes.
extension Transport {
    /// Turns the pass's MIDI takes into finished takes placed as its audio takes are: at the
    /// record point, punched in, or one take per loop pass. A take in which nothing was
    /// played is deleted.
    func finishMIDITakes(_ pass: RecordingPass, start: Int64) {
        for (take, outcome) in zip(pass.midiTakes, pass.set.midiOutcomes) {
            if let error = outcome.error { lastPassProblems.append(error) }
            var marker = take.marker
            if case .loop = pass.kind {} else { marker.timelineStartFrame = start }
            let regions = outcome.eventCount > 0 ? marker.regions(fileFrames: outcome.frameCount, file: take.relativeFile ?? take.path) : []
            guard let first = regions.first else {
                unlink(take.path)
                TakeMarker.remove(forAudio: take.path)
                notices.append("nothing was played on \(take.trackName): no MIDI take")
                continue
            }
            let placement: TakePlacement
            switch pass.kind {
            case .loop: placement = .loopPasses(Array(regions.dropFirst()))
            case .punch: placement = .punch(crossfadeFrames: 0)
            case .plain: placement = .plain
            }
            finishedTakes.append(FinishedTake(trackIndex: take.track, trackName: take.trackName, region: first,
                                              markerPath: TakeMarker.sidecarPath(forAudio: take.path), placement: placement))
            if let folder = pass.mirrorFolder, let problem = mirrorMIDITake(take.path, into: folder) { lastPassProblems.append(problem) }
        }
    }

    /// Ends the running pass where it is; the transport rolls on.
    public func stopRecording() {
        guard pass != nil else { return }
        engine.endTakes()
        _ = engine.waitUntilApplied(timeoutSeconds: 0.5)
    }

    /// Whether a recording pass runs (counting in, pre-rolling or keeping frames).
    public var isRecording: Bool { pass != nil }

    /// Frames each take of the running pass holds so far.
    public var recordedFrames: Int64 { pass?.set.frameCount ?? 0 }

    /// Closes the takes of a pass that ended (or, with `force`, of any pass: the engine is
    /// closing) and turns them into finished takes: one region at the record point (punched
    /// in when punching, scaled when recorded at another speed), or one take per loop pass.
    /// A take with nothing on the timeline is deleted.
    func finishPassIfEnded(force: Bool) {
        guard let pass, force || pass.set.hasEnded else { return }
        let incidents = passIncidents()
        self.pass = nil
        let outcomes = engine.finish(pass.set)
        // A clock-stamped take goes where its time of day falls on the session's timeline.
        let (start, placement) = placedStart(of: pass)
        let crossfade = session.punchCrossfadeFrames
        var nothing = false
        lastPassProblems = []
        // A notice, not a failure: the take is kept, at the record point.
        if let placement { notices.append(placement) }
        // Takes whose disk refused a write: closed with what they hold, said once each.
        lastPassFailures = pass.set.failedTakes
        lastPassMirrors = outcomes.compactMap(\.mirror)
        lastPassLatencies = pass.takes.map(\.latency)
        let everyTakeFailed = pass.set.nothingWritable
        for f in lastPassFailures where !saidFailedTakes.contains(f.index) {
            saidFailedTakes.insert(f.index)
            takeFailures.append(failureReport(f, of: pass, stoppedPass: everyTakeFailed))
        }
        if !engine.isRunning, let why = engine.status().lastError {
            lastPassProblems.append("the device stopped: \(why) (the takes were kept up to there)")
            // Said here, with the takes: once.
            saidDeviceStop = true
        }
        for (k, (take, outcome)) in zip(pass.takes, outcomes).enumerated() {
            if let f = lastPassFailures.first(where: { $0.index == k }) {
                lastPassProblems.append(failureReport(f, of: pass, stoppedPass: everyTakeFailed, goesOn: false).text)
            } else if let error = outcome.error {
                // The file's error names the file.
                let clock = TimeText.clock(frames: outcome.frameCount, sampleRate: engine.configuration.sampleRate)
                let onTrack = take.relativeFile == nil ? "" : " on track \(take.track + 1)"
                lastPassProblems.append("\(error) — kept \(clock) (\(outcome.frameCount) frames)\(onTrack)")
            }
            if outcome.droppedFrames > 0 {
                lastPassProblems.append("\(take.path): \(outcome.droppedFrames) input frames were lost to a slow disk (silence there)")
            }
            lastPassProblems += finishMirror(of: take, index: k, outcome: outcome, in: pass)
            let frames = outcome.frameCount
            let file = take.relativeFile ?? take.path
            let stamped = stamp(take: take, index: k, of: pass, frames: frames, start: start, incidents: incidents,
                                mirrorFrames: outcome.mirror?.frameCount)
            lastPassProblems += stamped.problems
            // Known now for the passes after this one, whatever the front-end does meanwhile.
            if session.timeOfDayOrigin == nil, let origin = stamped.origin { session.timeOfDayOrigin = origin }
            // Where the pass really started (a take started on the fly knows it only now).
            var marker = take.marker
            if case .loop = pass.kind {} else { marker.timelineStartFrame = start }
            if let pieceFrames = take.pieceFrames, frames > 0 {
                var all = pieces(of: take, marker: marker, frames: frames, pieceFrames: pieceFrames, count: outcome.pieceCount)
                if !all.isEmpty {
                    all[0].markers = stamped.markers
                    all[0].timeOfDayOrigin = stamped.origin
                }
                finishedTakes += all
                continue
            }
            let regions = marker.regions(fileFrames: frames, file: file)
            guard let first = regions.first else {
                // The mirror may hold what its take's full disk did not (said above, kept).
                let mirrorKeeps = (outcome.mirror?.frameCount ?? 0) > frames
                nothing = nothing || !mirrorKeeps
                if take.relativeFile != nil {
                    unlink(take.path)
                    if let peak = take.peakPath { unlink(peak) }
                    if let dry = take.dryPath { unlink(dry) }
                    TakeMarker.remove(forAudio: take.path)
                }
                if let mirror = take.mirrorPath, !mirrorKeeps {
                    unlink(mirror)
                    TakeMarker.remove(forAudio: mirror)
                }
                continue
            }
            let placement: TakePlacement
            switch pass.kind {
            case .loop: placement = .loopPasses(Array(regions.dropFirst()))
            case .punch: placement = .punch(crossfadeFrames: crossfade)
            case .plain: placement = .plain
            }
            var finished = FinishedTake(trackIndex: take.track, trackName: take.trackName, region: first,
                                        markerPath: TakeMarker.sidecarPath(forAudio: take.path), placement: placement)
            finished.markers = stamped.markers
            finished.timeOfDayOrigin = stamped.origin
            finishedTakes.append(finished)
        }
        finishMIDITakes(pass, start: start)
        errors += lastPassProblems
        if nothing { errors.append("nothing was recorded (stopped before the record point was reached)") }
        recordingTracks = []
        if inputOverride != nil {
            inputOverride = nil
            listening = Set(session.tracks.indices.filter { session.tracks[$0].armed })
            if engine.isRunning { rebuild() }
        }
        if engine.isRunning {
            engine.setLoop(loop, enabled: loopEnabled)
            engine.setClick(on: clickMode == .always, levelDecibels: clickLevelDecibels)
            // A pass no disk would take any more stops the transport too: it is loud.
            if pass.stopsWhenDone || everyTakeFailed {
                engine.stop()
            } else if status.transport != .stopped {
                // Rolling on after a punch-out: it stops at the end of the material again.
                engine.setEndFrame(endFrame(startingAt: status.positionFrame))
            }
        }
    }
}
