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

    /// Where (device frames into this period, 0 ≤ o < n) the rolling transport passes
    /// timeline frame `frame`, or nil when it does not this period.
    ///
    /// Audio thread: arithmetic only.
    func crossing(_ frame: Int64, frameCount n: Int) -> Int64? {
        guard state == .rolling else { return nil }
        let speed = speedFactor
        let span = Double(n) * speed + fraction
        let until = route.framesUntilWrap(from: position)
        let first = min(span, Double(until))
        if frame >= position && Double(frame - position) < first {
            return Int64(Double(frame - position) / speed)
        }
        if span > Double(until), frame >= route.loopStart, Double(frame - route.loopStart) < span - Double(until) {
            return Int64((Double(until) + Double(frame - route.loopStart)) / speed)
        }
        return nil
    }

    /// Offset into this stretch of input (device frames from `deviceFrame`) of played
    /// device frame `played`, clamped to 0…n, overflow-safe.
    @inline(__always)
    private func inputOffset(ofPlayed played: Int64, latency: Int64, frameCount n: Int) -> Int {
        if played == .max { return n }
        let (shifted, o1) = played.addingReportingOverflow(latency)
        if o1 { return n }
        let (offset, o2) = shifted.subtractingReportingOverflow(deviceFrame)
        if o2 { return offset < 0 ? n : 0 }
        return Int(min(max(offset, 0), Int64(n)))
    }

    /// Works out the takes' gate for this stretch of `frameCount` device frames and pushes
    /// what it keeps into every take's ring (`silence`: device time lost in an xrun). A full
    /// ring loses frames, which are counted and become silence in the take.
    ///
    /// Audio thread: no allocation, no locks; waits only with ``EngineOptions/waitsForDisk``.
    func keepTakes(_ g: Graph, frameCount n: Int, silence: Bool) {
        guard let takesRef = takes else { return }
        var ended = false
        takesRef._withUnsafeGuaranteedRef { set in
            let gate = set.gate
            if set.startDevice == .max && !silence {
                if let point = gate.recordPoint {
                    if let o = crossing(point, frameCount: n) {
                        set.startDevice = deviceFrame + o
                        set.recordPointFrame.store(point, ordering: .relaxed)
                    }
                } else if state == .rolling {
                    // At once: from the input that belongs to what is heard now.
                    set.startDevice = deviceFrame - gate.latencyFrames
                    let back = Int64(Double(gate.latencyFrames) * speedFactor)
                    set.recordPointFrame.store(position - back, ordering: .relaxed)
                }
                if set.startDevice != .max, let maxFrames = gate.maxFrames {
                    let (end, overflow) = set.startDevice.addingReportingOverflow(maxFrames)
                    set.endDevice = min(set.endDevice, overflow ? .max : end)
                }
            }
            set.startDeviceFrame.store(set.startDevice, ordering: .releasing)
            if set.startDevice != .max && !silence, let end = gate.endFrame, let o = crossing(end, frameCount: n) {
                set.endDevice = min(set.endDevice, deviceFrame + o)
            }
            let latency = gate.latencyFrames
            let from = inputOffset(ofPlayed: set.startDevice, latency: latency, frameCount: n)
            let to = max(from, inputOffset(ofPlayed: set.endDevice, latency: latency, frameCount: n))
            if to > from {
                for l in 0..<set.lanes.count {
                    set.laneTable[l]._withUnsafeGuaranteedRef { lane in
                        push(lane, graph: g, from: from, count: to - from, keptBefore: set.keptFrames, silence: silence)
                    }
                }
                if set.keptFrames == 0 {
                    stampFirstFrame(set)
                    set.startedFlag.store(true, ordering: .releasing)
                }
                set.keptFrames += Int64(to - from)
                set.framesKept.store(set.keptFrames, ordering: .releasing)
                writer.signal()
            }
            // Every take's disk refused a write: nothing kept from here on could be written,
            // so the pass ends now (on an unpaced device the timeline would run on for hours).
            if set.nothingWritable { ended = true }
            if set.endDevice != .max {
                let (heard, overflow) = (deviceFrame + Int64(n)).subtractingReportingOverflow(latency)
                if !overflow && heard >= set.endDevice { ended = true }
            }
        }
        if ended { endTakes() }
    }

    /// The takes, not started yet, start at their record point `recordPoint`, which was
    /// played at device frame `played`, in the past: the input kept since is lost (an xrun
    /// hid it) and becomes silence, so the take still starts on its record point and keeps
    /// its length. The rest of the period is kept as usual by ``keepTakes(_:frameCount:silence:)``.
    ///
    /// Audio thread: no allocation, no locks.
    func startTakes(recordPoint: Int64, playedAtDevice played: Int64) {
        guard let takesRef = takes, let g = graph else { return }
        takesRef._withUnsafeGuaranteedRef { set in
            guard set.startDevice == .max else { return }
            set.startDevice = played
            set.recordPointFrame.store(recordPoint, ordering: .relaxed)
            if let maxFrames = set.gate.maxFrames {
                let (end, overflow) = played.addingReportingOverflow(maxFrames)
                set.endDevice = min(set.endDevice, overflow ? .max : end)
            }
            set.startDeviceFrame.store(played, ordering: .releasing)
            // Input arrives `latency` after what it was played against: what of it came before now.
            let lost = Int(max(0, min(deviceFrame - (played + set.gate.latencyFrames), Int64(Int32.max))))
            guard lost > 0 else { return }
            g._withUnsafeGuaranteedRef { graph in
                for l in 0..<set.lanes.count {
                    set.laneTable[l]._withUnsafeGuaranteedRef { lane in
                        push(lane, graph: graph, from: 0, count: lost, keptBefore: set.keptFrames, silence: true)
                    }
                }
            }
            stampFirstFrame(set)
            set.startedFlag.store(true, ordering: .releasing)
            set.keptFrames += Int64(lost)
            set.framesKept.store(set.keptFrames, ordering: .releasing)
            writer.signal()
        }
    }

    /// Pushes `count` frames from `from` of the lane's track input (wet, dry or both) into
    /// its ring, and into its mirror's; what does not fit is dropped and recorded as a gap.
    ///
    /// Audio thread: no allocation, no locks.
    private func push(_ lane: TakeLane, graph g: Graph, from: Int, count: Int, keptBefore: Int64, silence: Bool) {
        let request = lane.request
        let channels = request.channelCount
        let inputIndex = request.track >= 0 && request.track < g.trackCount ? g.inputForTrack[request.track] : -1
        var sources: UnsafePointer<UnsafeMutablePointer<Float>>? = nil
        if inputIndex >= 0 && !silence {
            g.inputTable[inputIndex]._withUnsafeGuaranteedRef { strip in
                let have = strip.channelCount
                for c in 0..<channels {
                    let k = min(c, have - 1)
                    ringSources[c] = request.recordsDry ? strip.dry[k] : strip.wet[k]
                    if lane.dryWriter != nil { ringSources[channels + c] = strip.dry[k] }
                }
            }
            sources = UnsafePointer(ringSources)
        }
        fill(lane, sources: sources, from: from, count: count, keptBefore: keptBefore)
        // The mirror's ring carries the take's channels (the first ones of `sources`).
        if let mirror = lane.mirror { fill(mirror, sources: sources, from: from, count: count, keptBefore: keptBefore) }
    }

    /// Pushes `count` frames of `sources` (nil: silence) into `lane`'s ring; what does not
    /// fit is dropped and recorded as a gap (a take's drop is the input's: counted and said;
    /// a mirror's only its own).
    ///
    /// Audio thread: no allocation, no locks.
    private func fill(_ lane: TakeLane, sources: UnsafePointer<UnsafeMutablePointer<Float>>?, from: Int, count: Int, keptBefore: Int64) {
        var pushed = lane.ring.push(sources, frameCount: count, sourceOffset: from)
        var waited: Int64 = 0
        while pushed < count && waitsForDisk && waited < 2_000_000_000 {
            writer.signal()
            sleepNanoseconds(500_000)
            waited += 500_000
            pushed += lane.ring.push(sources, frameCount: count - pushed, sourceOffset: from + pushed)
        }
        if pushed < count {
            let lost = Int64(count - pushed)
            _ = lane.gaps.push(TakeGap(frame: keptBefore + Int64(pushed), count: lost))
            lane.droppedFrames.add(lost, ordering: .relaxed)
            if lane.isMirror { return }
            shared.board.droppedFrames.add(lost, ordering: .relaxed)
            EngineActivity.shared.signal()
            shared.events.push(EngineEvent(kind: .captureDropped, frame: keptBefore + Int64(pushed), frames: lost,
                                           track: lane.request.track))
        }
    }

    /// Ends the running pass: no more input is kept; the writer finishes the files.
    ///
    /// Audio thread: no allocation, no locks.
    func endTakes() {
        guard let ref = takes else { return }
        takes = nil
        ref._withUnsafeGuaranteedRef { set in
            for i in 0..<set.lanes.count {
                let track = set.laneTable[i]._withUnsafeGuaranteedRef { $0.request.track }
                if track >= 0 && track < recordingTrackCapacity { recordingTracks[track] = false }
            }
            set.endedFlag.store(true, ordering: .releasing)
        }
        writer.signal()
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
        if mix == nil, let pool = threadPool, let plan = g.processPlan.plan {
            mixOnThreads(g, pool: pool, plan: plan, frameCount: n, transport: transport, rolling: rolling, targets: targets)
        } else {
            let order = g.routes.order
            if g.trackCount > 0 { g.prefetch.fetch(strip: order[0]) }
            for k in 0..<g.trackCount {
                let i = order[k]
                // The next strip's ring frames, on their way while this one renders.
                if k + 1 < g.trackCount { g.prefetch.fetch(strip: order[k + 1]) }
                if g.routes.isBus[i] {
                    guard mix == nil else { continue }
                    g.stripTable[i]._withUnsafeGuaranteedRef { $0.renderBus(frameCount: n, transport: transport) }
                    routeStrip(g, strip: i, frameCount: n, targets: targets)
                    continue
                }
                let monitor = monitoredInput(g, track: i, rolling: rolling)
                // Live input — audio monitored, or MIDI to an armed instrument — is played at
                // device rate, never stretched; the rest goes through the mix's processors.
                if mix != nil && monitor.channels == nil && !g.listensToMIDI[i] { continue }
                let missing = renderTrack(g, track: i, monitor: monitor, frameCount: n, transport: transport, rolling: rolling)
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
        var lowest = 1.0
        for i in 0..<g.trackCount { lowest = min(lowest, g.stripTable[i]._withUnsafeGuaranteedRef { $0.voice.fill }) }
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
