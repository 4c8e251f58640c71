import TapedeckCore
import TapedeckDSP

extension RenderCore {
    /// Every listening track takes its input: chain, meter, retroactive memory.
    ///
    /// Audio thread: no allocation, no locks.
    func processInputs(_ g: Graph, input: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int, transport: TransportInfo) {
        for i in 0..<g.inputCount {
            g.inputTable[i]._withUnsafeGuaranteedRef { strip in
                strip.retro?.currentDeviceFrame = deviceFrame
                strip.process(input: input, frameCount: n, transport: transport)
            }
        }
    }

    /// Renders every strip and routes it (``routeStrip(_:strip:frameCount:targets:)``): tracks
    /// play the monitored input or their material through their chains, buses their sums
    /// through theirs, in render order, onto the master bus and the device outputs. At
    /// another speed the material and the buses go through the mix's time-pitch processors,
    /// which pull them at timeline rate (``renderTimelineMix(into:frameCount:seq:)``); live
    /// strips (a monitored input, an armed instrument) stay at device rate, never stretched,
    /// straight to the master.
    ///
    /// Audio thread: no allocation, no locks.
    func mixTracks(_ g: Graph, frameCount n: Int, transport: TransportInfo) {
        bus[0].update(repeating: 0, count: n)
        bus[1].update(repeating: 0, count: n)
        if g.routes.hasDeviceOutputs { for c in 0..<directOutputCount { directOutputs[c].update(repeating: 0, count: n) } }
        updateAudibility(g)
        let rolling = state == .rolling
        // Under time-pitch the material is rendered ahead and when the processors ask for
        // it (while waiting to roll, the FIFO fills: see rollWhenReady).
        let mix = timePitch.engaged && state != .stopped ? mixTimePitch : nil
        if mix == nil { clearBuses(g, frameCount: n) }
        let targets = StripTargets(master: UnsafePointer(bus), devices: UnsafePointer(directOutputs), deviceCount: directOutputCount,
                                   throughBuses: mix == nil, timelineFrame: position)
        // The lowest ring fill, for the disk thread and the screen. One strip at a time, the
        // walk takes each strip's fill right after its render, while its ring's lines are
        // still in the cache; a second walk over every strip after the mix waited on memory
        // three times a strip (strip, voice, ring): 19 % of mixTracks' own samples at 256
        // tracks. Other paths (worker threads, time-pitch) take them in a walk at the end.
        var lowest = 1.0
        var fillsTaken = false
        if mix == nil, let pool = threadPool, let plan = g.processPlan.plan {
            mixOnThreads(g, pool: pool, plan: plan, frameCount: n, transport: transport, rolling: rolling, targets: targets)
        } else {
            fillsTaken = mix == nil
            let order = g.routes.order
            if g.trackCount > 0 { g.prefetch.fetch(strip: order[0]) }
            for k in 0..<g.trackCount {
                let i = order[k]
                // The next strip's ring frames, on their way while this one renders.
                if k + 1 < g.trackCount { g.prefetch.fetch(strip: order[k + 1]) }
                if g.routes.isBus[i] {
                    guard mix == nil else { continue }
                    g.stripTable[i]._withUnsafeGuaranteedRef { strip in
                        strip.renderBus(frameCount: n, transport: transport)
                        lowest = min(lowest, strip.voice.fill)
                    }
                    routeStrip(g, strip: i, frameCount: n, targets: targets)
                    continue
                }
                let monitor = monitoredInput(g, track: i, rolling: rolling)
                // Live input — audio monitored, or MIDI to an armed instrument — is played at
                // device rate, never stretched; the rest goes through the mix's processors.
                if mix != nil && monitor.channels == nil && !g.listensToMIDI[i] { continue }
                let missing = renderTrack(g, track: i, monitor: monitor, frameCount: n, transport: transport, rolling: rolling)
                if fillsTaken { lowest = min(lowest, g.stripTable[i]._withUnsafeGuaranteedRef { $0.voice.fill }) }
                countUnderrun(missing, track: i)
                routeStrip(g, strip: i, frameCount: n, targets: targets)
            }
        }
        if let mix, rolling {
            mix.renderAhead(frameCount: MixTimePitch.budget(speed: timePitch.speed, frameCount: n), timePitch: timePitch)
            mix.render(frameCount: n, timePitch: timePitch)
            MixKernels.accumulate(mix.output[0], into: bus[0], frameCount: n, startGain: 1, endGain: 1)
            MixKernels.accumulate(mix.output[1], into: bus[1], frameCount: n, startGain: 1, endGain: 1)
        }
        if !fillsTaken {
            for i in 0..<g.trackCount { lowest = min(lowest, g.stripTable[i]._withUnsafeGuaranteedRef { $0.voice.fill }) }
        }
        shared.board.playbackFillPermille.store(Int(lowest * 1000), ordering: .relaxed)
        if lowest < 0.5 { reader.signal() }
    }

    /// The time-pitch processors' source: `frameCount` frames of the playing (not live)
    /// strips' mix from sequence `start` on, walked in blocks of ``timelineFrames`` (a bus sums
    /// a block of everything that feeds it), straight into `channels` (two). A track without
    /// a chain, sends or a delayed path is mixed in one fused pass from its ring
    /// (``PlaybackStrip/mixDirect(onto:frameCount:seq:start:end:rampFrames:)``: at 32× that is
    /// 8 192 frames of every track a period); each output frame still sums the strips in
    /// their order with the same gains, so the result is the same either way. Chains hear
    /// the session's tempo here (they process the material before it is stretched).
    ///
    /// Audio thread: no allocation, no locks.
    func renderTimelineMix(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int, seq start: Int64) {
        for c in 0..<2 { channels[c].update(repeating: 0, count: frameCount) }
        guard let graphRef = graph else { return }
        graphRef._withUnsafeGuaranteedRef { g in
            let r = g.routes
            var done = 0
            while done < frameCount {
                let m = min(timelineFrames, frameCount - done)
                let at = start + Int64(done)
                let timelineFrame = timeline(afterRolling: max(0, at - seq))
                // The map at the block's own timeline frame, at the session's tempo (the
                // material before it is stretched).
                var info: TransportInfo
                if var host = hostTransportInfo() {
                    host.tempoBPM = g.tempoMap.tempoBPM
                    host.beatPosition = Double(timelineFrame) / g.tempoMap.framesPerBeat
                    host.timelineFrame = timelineFrame
                    info = host
                } else {
                    info = transportInfo(g, atTimelineFrame: timelineFrame, speed: 1)
                }
                for c in 0..<2 { timelineTargets[c] = channels[c] + done }
                let targets = StripTargets(master: UnsafePointer(timelineTargets), devices: nil, deviceCount: 0, throughBuses: true,
                                           timelineFrame: timelineFrame)
                clearBuses(g, frameCount: m)
                for k in 0..<g.trackCount {
                    let i = r.order[k]
                    if r.isBus[i] {
                        g.stripTable[i]._withUnsafeGuaranteedRef { $0.renderBus(frameCount: m, transport: info) }
                        routeStrip(g, strip: i, frameCount: m, targets: targets)
                        continue
                    }
                    if monitoredInput(g, track: i, rolling: true).channels != nil || g.listensToMIDI[i] { continue }
                    let fused = g.stripTable[i]._withUnsafeGuaranteedRef { strip -> Bool in
                        let output = r.paths[r.first[i]]
                        guard r.pathCount[i] == 1, output.target == RoutePath.master, output.delayFrames == 0,
                              strip.automation == nil, strip.mixesDirect else { return false }
                        strip.mixGlide.aim(strip.mixTarget(audible: r.audible[i]))
                        let (from, to, ramp) = strip.mixGlide.advance(frameCount: m)
                        let missing = strip.mixDirect(onto: UnsafePointer(timelineTargets), frameCount: m, seq: at,
                                                      start: from, end: to, rampFrames: ramp)
                        countUnderrun(missing, track: i)
                        return true
                    }
                    if fused { continue }
                    g.stripTable[i]._withUnsafeGuaranteedRef { strip in
                        // MIDI regions at timeline rate too: their instrument's sound is stretched with the rest.
                        let midi = midiEvents(g, track: i, strip: strip, frameCount: m, from: timelineFrame, speed: 1)
                        let missing = strip.render(frameCount: m, rolling: true, seq: at, transport: info, monitor: nil, monitorChannels: 0,
                                                   midi: midi)
                        countUnderrun(missing, track: i)
                    }
                    routeStrip(g, strip: i, frameCount: m, targets: targets)
                }
                done += m
            }
        }
        // A NaN would poison the stretcher for good: it stops here, as silence, and is counted.
        let bad = NonFiniteSamples.replace(channels[0], count: frameCount) + NonFiniteSamples.replace(channels[1], count: frameCount)
        if bad > 0 { shared.board.busNonFiniteSamples.add(Int64(bad), ordering: .relaxed) }
    }

    /// The input track `i` hears this period, if any (by its monitoring mode: auto hears
    /// while standing and while the track records).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func monitoredInput(_ g: Graph, track i: Int, rolling: Bool) -> (channels: UnsafePointer<UnsafeMutablePointer<Float>>?, count: Int) {
        let inputIndex = g.inputForTrack[i]
        guard inputIndex >= 0 else { return (nil, 0) }
        return g.inputTable[inputIndex]._withUnsafeGuaranteedRef { input in
            let recording = i < recordingTrackCapacity && recordingTracks[i]
            let hears: Bool
            switch input.monitoring {
            case .off: hears = false
            case .input: hears = true
            case .auto: hears = recording || !rolling
            }
            return hears ? (UnsafePointer(input.wet), input.channelCount) : (nil, 0)
        }
    }

    /// Counts and reports a track's underrun. Audio thread: no allocation, no locks.
    @inline(__always)
    func countUnderrun(_ missing: Int, track i: Int) {
        guard missing > 0 else { return }
        shared.board.underrunFrames.add(Int64(missing), ordering: .relaxed)
        EngineActivity.shared.signal()
        shared.events.push(EngineEvent(kind: .playbackUnderrun, frame: position, frames: Int64(missing), track: i))
    }

    /// The master chain and fader on the bus, the master meter, then the device's outputs
    /// (a mono device gets the two sides folded), and what strips route straight to device
    /// outputs added on top.
    ///
    /// Audio thread: no allocation, no locks.
    func master(_ g: Graph, output: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int) {
        // A NaN from a file on a track without effects would reach the speakers and poison
        // the master chain's filters for good: it stops here, as silence, and is counted.
        let bad = NonFiniteSamples.replace(bus[0], count: n) + NonFiniteSamples.replace(bus[1], count: n)
        if bad > 0 { shared.board.busNonFiniteSamples.add(Int64(bad), ordering: .relaxed) }
        if let chain = g.masterChain, !bypassesMaster {
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: bus, count: 2), frameCount: n, transport: transportInfo(g))
            chain.process(&context)
        }
        let target = bypassesMaster ? 1 : Float(bitPattern: shared.masterGainBits.load(ordering: .relaxed))
        // The first period plays at the fader (a glide from unity swelled the start of every
        // play with the master below 0 dB).
        if appliedMasterGain.isNaN { appliedMasterGain = target }
        MixKernels.ramp(bus[0], frameCount: n, from: appliedMasterGain, to: target)
        MixKernels.ramp(bus[1], frameCount: n, from: appliedMasterGain, to: target)
        appliedMasterGain = target
        // Freewheeling, no one reads the meters (the loudness meter was half an export's time).
        if !rendersOffline {
            masterMeter.measure(bus, available: 2, frameCount: n)
            if state == .rolling { loudness.measure(bus, frameCount: n, mayWait: waitsForDisk) }
        }
        if playbackChannels == 1 {
            for i in 0..<n { output[0][i] = (bus[0][i] + bus[1][i]) * 0.5 }
            output[1].update(repeating: 0, count: n)
        } else {
            output[0].update(from: bus[0], count: n)
            output[1].update(from: bus[1], count: n)
        }
        var c = 2
        while c < playbackChannels {
            output[c].update(repeating: 0, count: n)
            c += 1
        }
        guard g.routes.hasDeviceOutputs else { return }
        for c in 0..<min(max(playbackChannels, 2), directOutputCount) {
            MixKernels.accumulate(directOutputs[c], into: output[c], frameCount: n, startGain: 1, endGain: 1)
        }
    }

    /// Moves the playhead on by `deviceFrames` of device time (× speed on the timeline),
    /// round the loop, through a pending loop switch, stopping at the end frame.
    ///
    /// Audio thread: no allocation, no locks.
    func advance(deviceFrames: Int64) {
        let from = position
        let exact = Double(deviceFrames) * speedFactor + fraction
        let whole = exact.rounded(.down)
        fraction = exact - whole
        let frames = Int64(whole)
        let until = route.framesUntilWrap(from: position)
        if let next = pendingRoute, seq + frames >= routeSwitchSeq {
            // The two ways round agree up to the switch point, and at it the new one rules
            // (a wrap exactly there is the new loop's): so the new route covers the period.
            position = next.advance(position, by: frames)
            route = next
            pendingRoute = nil
        } else {
            position = route.advance(position, by: frames)
        }
        if until <= frames && pendingRoute == nil {
            let at = deviceFrame + Int64(Double(until - 1) / speedFactor) + 1
            shared.log.append(deviceFrame: at, timelineFrame: route.loopStart, speed: speedFactor)
        }
        seq += frames
        if position >= endFrame {
            position = endFrame
            stopAtEnd()
        }
        if preRoll.joinFrame >= 0 && position >= preRoll.joinFrame && state == .rolling {
            holdForHost(reachedAtDevice: deviceFrame + Int64((Double(max(preRoll.joinFrame - from, 0)) / speedFactor).rounded(.up)))
        }
    }

    /// The transport reached its end frame: it stops there.
    ///
    /// Audio thread: no allocation, no locks.
    private func stopAtEnd() {
        endTakes()
        state = .stopped
        seekAll(seqStart: seq, timeline: position, route: route, continuesOld: false)
        shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: 0)
    }
}
