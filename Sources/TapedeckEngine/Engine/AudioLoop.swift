import TapedeckCore
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

extension Engine {
    /// The body of the audio thread: read a period, meter it, push it to the capture ring,
    /// mix the playback rings, write a period, advance the transport.
    ///
    /// Audio thread: no allocation, no locks, no logging, no throwing, no files. It may sleep
    /// briefly while a ring is full or empty; on a paced device that becomes an xrun, which
    /// is recovered and accounted so the timeline stays aligned.
    func audioLoop() {
        let n = periodFrames
        // Capturing feeds a take, the retro buffer, or both.
        let capturing = take != nil || retroBuffer != nil
        let playing = plan != nil
        let maxFrames = take?.maxFrames ?? Int64.max
        let loopStart = plan?.startFrame ?? 0
        let loopEnd = plan?.endFrame ?? Int64.max
        let loops = (plan?.loop ?? false) && loopEnd > loopStart
        // Plain locals and an inout helper (no nested closure) so nothing captured is boxed
        // on the heap.
        var t = LoopTransport(position: plan?.startFrame ?? options.transportStartFrame, recorded: 0, capturing: capturing, maxFrames: maxFrames,
                              loopStart: loopStart, loopEnd: loopEnd, loops: loops)
        var stalled = options.stallAtFrame == nil
        var timePitch = LiveTimePitch()
        if let initial = plan?.timePitch {
            timePitch.apply(speed: initial.speed, varispeed: initial.mode == .varispeed, pitchSemitones: initial.pitchSemitones)
            if !initial.isIdentity && timePitchReady.load(ordering: .acquiring) { timePitch.engaged = true }
        }
        t.speed = timePitch.speed
        if playing && !timePitch.engaged {
            let info = transport(at: t.position, speed: 1)
            for i in 0..<voices.count { voices[i].primeChain(transport: info) }
        }
        let meterWindow = max(configuration.sampleRate / 10, n)
        var meterFrames = 0
        var outputPeak: (Float, Float) = (0, 0)

        // DSP load: from the period's input to its output, against the period's duration.
        let periodNanoseconds = Int64(n) * 1_000_000_000 / Int64(max(configuration.sampleRate, 1))
        var busiestNanoseconds: Int64 = 0
        var loadFrames = 0
        options.audioThreadProbe?.audioThreadBegins()
        cycle: while true {
            var busySince = monotonicNanoseconds()
            while let command = commands.pop() {
                switch command {
                case .stop: break cycle
                case .setTrackGains(let t, let l, let r):
                    if Int(t) < trackRings.count { trackGains[2 * Int(t)] = l; trackGains[2 * Int(t) + 1] = r }
                case .setTimePitch(let speed, let varispeed, let semitones):
                    let modeChanged = varispeed != timePitch.varispeed
                    timePitch.apply(speed: speed, varispeed: varispeed, pitchSemitones: semitones)
                    if !timePitch.engaged && timePitchReady.load(ordering: .acquiring) && (speed != 1 || semitones != 0) {
                        timePitch.engaged = true
                        for i in 0..<voices.count { voices[i].restartTimePitch() }
                    } else if timePitch.engaged && modeChanged {
                        for i in 0..<voices.count { voices[i].restartTimePitch() }
                    }
                    t.speed = timePitch.engaged ? timePitch.speed : 1
                }
            }
            if diskFailed.load(ordering: .acquiring) { break }
            if !stalled, let at = options.stallAtFrame, (capturing ? t.recorded : t.position) >= at {
                stalled = true
                sleepNanoseconds(Int64(options.stallMilliseconds) * 1_000_000)
            }
            if capturing {
                switch device.read(into: captureBuffers, frameCount: n) {
                case .ok: busySince = monotonicNanoseconds()
                case .xrun(let lost):
                    accountXrun(lost: lost, &t)
                    publish(position: t.position, recorded: t.recorded)
                    if t.recorded >= maxFrames { break cycle }
                    continue cycle
                case .failed(let code):
                    board.deviceErrorCode.store(code, ordering: .releasing)
                    board.state.store(EngineState.failed.rawValue, ordering: .releasing)
                    break cycle
                }
                let keep = Int(min(Int64(n), maxFrames - t.recorded))
                if let inputChain {
                    for c in 0..<takeChannelCount { wetBuffers[c].update(from: selectedCapture[c], count: n) }
                    var context = RenderContext(inPlace: UnsafeBufferPointer(start: wetBuffers, count: takeChannelCount),
                                                frameCount: n, transport: transport(at: t.position, speed: t.speed))
                    inputChain.process(&context)
                }
                // The period's input belongs to timeline frames position − latency onwards;
                // a gate keeps only what falls inside it.
                var from = 0, to = keep
                if let gate = takeGate {
                    let firstTimeline = t.position - takeLatencyFrames
                    from = Int(min(max(gate.startFrame - firstTimeline, 0), Int64(keep)))
                    // An open-ended gate ends at Int64.max: subtract without trapping.
                    let (untilEnd, overflow) = gate.endFrame.subtractingReportingOverflow(firstTimeline)
                    to = Int(min(max(overflow ? Int64.max : untilEnd, Int64(from)), Int64(keep)))
                }
                meter(frames: keep, into: &meterFrames, window: meterWindow)
                retroBuffer?.append(ringSources, frameCount: keep)
                if let ring = captureRing, to > from {
                    let pushed = pushWaiting(ring, ringSources, frameCount: to - from, sourceOffset: from)
                    let fill = ring.availableFrames
                    if fill > board.captureHighWaterFrames.load(ordering: .relaxed) {
                        board.captureHighWaterFrames.store(fill, ordering: .relaxed)
                    }
                    t.recorded += Int64(pushed)
                }
            }
            if writesOutput {
                let info = transport(at: t.position, speed: t.speed)
                mixPlayback(frameCount: n, timePitch: timePitch, transport: info)
                addClickAndMonitor(frameCount: n, transport: info, capturing: capturing)
                let l = MixKernels.peak(outputBuffers[0], frameCount: n), r = MixKernels.peak(outputBuffers[1], frameCount: n)
                outputPeak = (max(outputPeak.0, l), max(outputPeak.1, r))
                if !capturing {
                    meterFrames += n
                    if meterFrames >= meterWindow { meterFrames = 0 }
                }
                if meterFrames == 0 || meterFrames >= meterWindow - n {
                    board.outputPeakBits[0].store(outputPeak.0.bitPattern, ordering: .relaxed)
                    board.outputPeakBits[1].store(outputPeak.1.bitPattern, ordering: .relaxed)
                    outputPeak = (0, 0)
                }
                busiestNanoseconds = max(busiestNanoseconds, monotonicNanoseconds() - busySince)
                switch device.write(from: outputBuffers, frameCount: n) {
                case .ok: break
                case .xrun(let lost): accountXrun(lost: lost, &t)
                case .failed(let code):
                    board.deviceErrorCode.store(code, ordering: .releasing)
                    board.state.store(EngineState.failed.rawValue, ordering: .releasing)
                    break cycle
                }
            }
            if !writesOutput { busiestNanoseconds = max(busiestNanoseconds, monotonicNanoseconds() - busySince) }
            loadFrames += n
            if loadFrames >= meterWindow {
                board.dspLoadPermille.store(Int(busiestNanoseconds * 1000 / max(periodNanoseconds, 1)), ordering: .relaxed)
                busiestNanoseconds = 0
                loadFrames = 0
            }
            t.advance(deviceFrames: Int64(n))
            publish(position: t.position, recorded: t.recorded)
            if capturing && t.recorded >= maxFrames { break }
            if playing && !capturing && !loops && t.position >= loopEnd { break }
        }
        options.audioThreadProbe?.audioThreadEnds()
        publish(position: t.position, recorded: t.recorded)
        if board.state.load(ordering: .relaxed) == EngineState.running.rawValue {
            board.state.store(EngineState.finished.rawValue, ordering: .releasing)
        }
        audioDone.store(true, ordering: .releasing)
    }

    /// Accounts `lost` frames of device time after an xrun: silence in the take, the same
    /// span skipped in every playback ring, the transport moved on, so the timeline stays
    /// aligned and the take's length stays equal to the time it spans.
    ///
    /// Audio thread: no allocation, no locks, no logging.
    private func accountXrun(lost: Int64, _ t: inout LoopTransport) {
        board.xrunCount.add(1, ordering: .relaxed)
        xrunEvents.push(XrunEvent(frame: t.capturing ? t.recorded : t.position, lostFrames: lost))
        guard lost > 0 else { return }
        if t.capturing, let ring = captureRing {
            let fill = min(lost, t.maxFrames - t.recorded)
            var left = fill
            while left > 0 {
                let k = pushWaiting(ring, nil, frameCount: Int(min(left, Int64(periodFrames))))
                if k == 0 { break }
                left -= Int64(k)
            }
            t.recorded += fill - left
        }
        // The device lost `lost` frames of time; at speed s that is s × lost timeline frames.
        let timeline = Int64((Double(lost) * t.speed).rounded())
        for i in 0..<voices.count { voices[i].debtFrames += timeline }
        t.advance(deviceFrames: lost)
    }

    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private func publish(position: Int64, recorded: Int64) {
        board.positionFrame.store(position, ordering: .relaxed)
        board.recordedFrames.store(recorded, ordering: .releasing)
    }

    /// Pushes into `ring`, waiting (bounded) for the disk thread to make room.
    ///
    /// Audio thread: no allocation, no locks; sleeps 1 ms at a time at most
    /// ``EngineOptions/ringWaitNanoseconds`` in all.
    private func pushWaiting(_ ring: FrameRing, _ channels: UnsafePointer<UnsafeMutablePointer<Float>>?, frameCount: Int,
                             sourceOffset: Int = 0) -> Int {
        var done = ring.push(channels, frameCount: frameCount, sourceOffset: sourceOffset)
        var waited: Int64 = 0
        while done < frameCount && waited < options.ringWaitNanoseconds && !diskFailed.load(ordering: .relaxed) {
            sleepNanoseconds(1_000_000)
            waited += 1_000_000
            done += ring.push(channels, frameCount: frameCount - done, sourceOffset: sourceOffset + done)
        }
        return done
    }

    /// Updates the input meters with the period's selected channels and publishes them once
    /// per meter window.
    ///
    /// Audio thread: no allocation, no locks.
    private func meter(frames: Int, into count: inout Int, window: Int) {
        let channels = board.meterCount
        for c in 0..<channels {
            // What is recorded: after the input chain.
            meterPeak[c] = max(meterPeak[c], MixKernels.peak(ringSources[c], frameCount: frames))
            meterSquares[c] += MixKernels.sumOfSquares(ringSources[c], frameCount: frames)
        }
        count += frames
        if count >= window {
            for c in 0..<channels {
                board.setMeter(c, peak: meterPeak[c], rms: Float((meterSquares[c] / Double(count)).squareRoot()))
                meterPeak[c] = 0
                meterSquares[c] = 0
            }
            count = 0
        }
    }

    /// Renders every track's period (ring → time-pitch → chain) and mixes it into the
    /// output bus with the track's gains, then runs the master chain.
    ///
    /// Audio thread: no allocation, no locks.
    private func mixPlayback(frameCount n: Int, timePitch: LiveTimePitch, transport: TransportInfo) {
        let outs = max(configuration.playbackChannels, 2)
        for ch in 0..<outs { outputBuffers[ch].update(repeating: 0, count: n) }
        var lowestFill = 1000
        // Index loops: an unspecialised iterator (debug builds) allocates on every pass.
        for i in 0..<voices.count {
            let voice = voices[i]
            voice.render(frameCount: n, timePitch: timePitch, transport: transport)
            let ring = voice.ring
            lowestFill = min(lowestFill, ring.availableFrames * 1000 / ring.capacityFrames)
            let gl = trackGains[2 * i], gr = trackGains[2 * i + 1]
            let bufs = voice.buffers
            let right = voice.channelCount > 1 ? bufs[1] : bufs[0]
            MixKernels.accumulate(bufs[0], into: outputBuffers[0], frameCount: n, startGain: gl, endGain: gl)
            MixKernels.accumulate(right, into: outputBuffers[1], frameCount: n, startGain: gr, endGain: gr)
        }
        if let masterChain {
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: outputBuffers, count: 2), frameCount: n,
                                        transport: transport)
            masterChain.process(&context)
        }
        if configuration.playbackChannels == 1 {
            for i in 0..<n { outputBuffers[0][i] = (outputBuffers[0][i] + outputBuffers[1][i]) * 0.5 }
        }
        board.playbackFillPermille.store(lowestFill, ordering: .relaxed)
    }

    /// Adds the metronome to its output channels and, when monitoring, the take's input
    /// (after its input chain) to the main pair. Neither reaches the take: the take is fed
    /// from the capture buffers before this runs.
    ///
    /// Audio thread: no allocation, no locks.
    private func addClickAndMonitor(frameCount n: Int, transport: TransportInfo, capturing: Bool) {
        if let clickNode, capturing || !clickRecordingOnly, transport.timelineFrame < clickUntilFrame {
            clickBuffer[0].update(repeating: 0, count: n)
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: clickBuffer, count: 1), frameCount: n,
                                        transport: transport)
            clickNode.process(&context)
            let outs = max(configuration.playbackChannels, 2)
            for i in 0..<clickOutputCount {
                let ch = clickOutputs[i]
                if ch < outs { MixKernels.accumulate(clickBuffer[0], into: outputBuffers[ch], frameCount: n, startGain: 1, endGain: 1) }
            }
        }
        if monitorsInput && capturing && takeChannelCount > 0 {
            // What is heard is always the processed input, even when the take keeps it dry.
            let heard = inputChain == nil ? selectedCapture : wetBuffers
            let right = takeChannelCount > 1 ? 1 : 0
            MixKernels.accumulate(heard[0], into: outputBuffers[0], frameCount: n, startGain: 1, endGain: 1)
            MixKernels.accumulate(heard[right], into: outputBuffers[1], frameCount: n, startGain: 1, endGain: 1)
        }
    }

    /// The host clock for nodes at timeline `frame`: tempo-synced nodes follow the session's
    /// tempo as heard, so at speed s the tempo they see is s × the session's.
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    func transport(at frame: Int64, speed: Double) -> TransportInfo {
        let map = plan?.tempoMap ?? TempoMap(sampleRate: configuration.sampleRate, tempoBPM: 120,
                                             timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
        return TransportInfo(tempoBPM: map.tempoBPM * speed, beatPosition: Double(frame) / map.framesPerBeat,
                             beatsPerBar: map.timeSignature.beatsPerBar, beatUnit: map.timeSignature.beatUnit,
                             sampleRate: Double(configuration.sampleRate), timelineFrame: frame,
                             isPlaying: plan != nil, isRecording: take != nil, isCycling: plan?.loop ?? false)
    }
}

/// The audio thread's transport: where the timeline is and how much has been recorded.
struct LoopTransport {
    var position: Int64
    var recorded: Int64
    let capturing: Bool
    let maxFrames: Int64
    let loopStart: Int64
    let loopEnd: Int64
    let loops: Bool
    /// Timeline frames per device frame (1 unless time-pitch is engaged).
    var speed = 1.0
    /// The fraction of a timeline frame carried between periods at speeds other than 1.
    var fraction = 0.0

    /// Moves the transport on by `deviceFrames` of device time (× speed on the timeline),
    /// wrapping inside the loop range.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    mutating func advance(deviceFrames: Int64) {
        if speed == 1 && fraction == 0 {
            position += deviceFrames
        } else {
            let exact = Double(deviceFrames) * speed + fraction
            let whole = exact.rounded(.down)
            fraction = exact - whole
            position += Int64(whole)
        }
        if loops && position >= loopEnd { position = loopStart + (position - loopStart) % (loopEnd - loopStart) }
    }
}
