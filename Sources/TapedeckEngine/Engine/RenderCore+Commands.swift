import TapedeckCore
import TapedeckDSP

/// The transport's commands as the audio thread applies them (play, locate, loop, speed and
/// pitch, click, takes), and the seeks they send every voice on.
extension RenderCore {
    /// One command. Audio thread: no allocation, no locks.
    func apply(_ command: EngineCommand) {
        switch command {
        case .play:
            guard state == .stopped else { return }
            state = .starting
            holdSince = deviceFrame
        case .locate(let frame, _):
            if state == .rolling {
                state = .starting
                holdSince = deviceFrame
            }
            jump(to: frame)
        case .preRoll(let from, let join, _):
            beginPreRoll(from: from, joiningAt: join)
        case .route(let start, let end, let loops, _):
            changeRoute(to: PlayRoute(loopStart: start, loopEnd: end, loops: loops))
        case .endFrame(let frame, _):
            endFrame = frame
        case .timePitch(let speed, let varispeed, let semitones, _):
            let modeChanged = varispeed != timePitch.varispeed
            timePitch.apply(speed: speed, varispeed: varispeed, pitchSemitones: semitones)
            let wanted = speed != 1 || semitones != 0
            if !timePitch.engaged && wanted && shared.timePitchReady.load(ordering: .acquiring) && mixTimePitch != nil {
                timePitch.engaged = true
                restartAtPlayhead()
            } else if timePitch.engaged
                        && (modeChanged || mixTimePitch?.changesStretcher(speed: speed, pitchScale: timePitch.pitchScale) == true) {
                restartAtPlayhead()
            }
            if state == .rolling { shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: speedFactor) }
        case .click(let on, let recordingOnly, let until, let countInFrom, let countInTo, _):
            clickOn = on
            clickRecordingOnly = recordingOnly
            clickUntil = until
            countInFrames = countInFrom..<max(countInFrom, countInTo)
        case .startTakes(let raw, _):
            endTakes()
            let ref = Unmanaged<TakeSet>.fromOpaque(raw)
            takes = ref
            ref._withUnsafeGuaranteedRef { set in
                for i in 0..<set.lanes.count {
                    let track = set.laneTable[i]._withUnsafeGuaranteedRef { $0.request.track }
                    if track >= 0 && track < recordingTrackCapacity { recordingTracks[track] = true }
                }
            }
        case .endTakes:
            endTakes()
        }
    }

    /// Timeline frames per device frame.
    var speedFactor: Double { timePitch.engaged ? timePitch.speed : 1 }

    /// A new loop takes effect where the way the playhead goes would first differ (the old
    /// loop's wrap or the new one's, whichever comes first): up to there every track plays
    /// what its ring holds, from there what the disk reads the new way round. So switching
    /// the loop never interrupts what is heard, rolling or standing. (A second change before
    /// the first one's switch point reads everything again from here.)
    ///
    /// Audio thread: no allocation, no locks.
    func changeRoute(to next: PlayRoute) {
        if next == (pendingRoute ?? route) { return }
        if pendingRoute != nil {
            pendingRoute = nil
            rereadAll(route: next)
            return
        }
        let split = PlayRoute.divergence(route, next, from: position)
        if split == .max {
            // Never apart from here on: nothing to read again.
            route = next
            return
        }
        if split == 0 {
            rereadAll(route: next)
            return
        }
        pendingRoute = next
        routeSwitchSeq = seq + split
        seekAll(seqStart: routeSwitchSeq, timeline: next.advance(position, by: split), route: next, continuesOld: true)
    }

    /// Every track reads again from here the `next` way round; a rolling transport holds
    /// until they have. Audio thread: no allocation, no locks.
    func rereadAll(route next: PlayRoute) {
        route = next
        seekAll(seqStart: seq, timeline: position, route: next, continuesOld: false)
        if state == .rolling {
            state = .starting
            holdSince = deviceFrame
        }
    }

    /// Every voice of the graph asks for sequence `seqStart` onwards at `timeline` along
    /// `route`. Fallbacks are let go: the new voices are told where to go, the old are not.
    ///
    /// Audio thread: no allocation, no locks.
    func seekAll(seqStart: Int64, timeline: Int64, route: PlayRoute, continuesOld: Bool) {
        epoch += 1
        // What was rendered ahead from the seek's start belongs to the old way: dropped at once.
        closeAhead()
        guard let graphRef = graph else { return }
        graphRef._withUnsafeGuaranteedRef { g in
            dropAhead(g, fromSeq: seqStart, continuesOld: continuesOld)
            for i in 0..<g.trackCount {
                g.stripTable[i]._withUnsafeGuaranteedRef { strip in
                    strip.handedOver.store(true, ordering: .releasing)
                    strip.voice.requestSeek(epoch: epoch, seqStart: seqStart, timelineStart: timeline, route: route,
                                            continuesOld: continuesOld)
                }
            }
        }
        if timePitch.engaged && !continuesOld { restartTimePitch() }
        reader.signal()
    }
}
