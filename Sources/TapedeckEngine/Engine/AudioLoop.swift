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
        let capturing = take != nil
        let playing = plan != nil
        let maxFrames = take?.maxFrames ?? Int64.max
        let loopStart = plan?.startFrame ?? 0
        let loopEnd = plan?.endFrame ?? Int64.max
        let loops = (plan?.loop ?? false) && loopEnd > loopStart
        // Plain locals and an inout helper (no nested closure) so nothing captured is boxed
        // on the heap.
        var t = LoopTransport(position: plan?.startFrame ?? 0, recorded: 0, capturing: capturing, maxFrames: maxFrames,
                              loopStart: loopStart, loopEnd: loopEnd, loops: loops)
        var stalled = options.stallAtFrame == nil
        let meterWindow = max(configuration.sampleRate / 10, n)
        var meterFrames = 0
        var outputPeak: (Float, Float) = (0, 0)

        cycle: while true {
            while let command = commands.pop() {
                switch command {
                case .stop: break cycle
                case .setTrackGains(let t, let l, let r):
                    if Int(t) < trackRings.count { trackGains[2 * Int(t)] = l; trackGains[2 * Int(t) + 1] = r }
                case .setTimePitch:
                    break
                }
            }
            if diskFailed.load(ordering: .acquiring) { break }
            if !stalled, let at = options.stallAtFrame, (capturing ? t.recorded : t.position) >= at {
                stalled = true
                sleepNanoseconds(Int64(options.stallMilliseconds) * 1_000_000)
            }
            if capturing {
                switch device.read(into: captureBuffers, frameCount: n) {
                case .ok: break
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
                meter(frames: keep, into: &meterFrames, window: meterWindow)
                if let ring = captureRing {
                    let pushed = pushWaiting(ring, selectedCapture, frameCount: keep)
                    t.recorded += Int64(pushed)
                }
            }
            if playing {
                mixPlayback(frameCount: n)
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
                switch device.write(from: outputBuffers, frameCount: n) {
                case .ok: break
                case .xrun(let lost): accountXrun(lost: lost, &t)
                case .failed(let code):
                    board.deviceErrorCode.store(code, ordering: .releasing)
                    board.state.store(EngineState.failed.rawValue, ordering: .releasing)
                    break cycle
                }
            }
            t.advance(by: Int64(n))
            publish(position: t.position, recorded: t.recorded)
            if capturing && t.recorded >= maxFrames { break }
            if playing && !capturing && !loops && t.position >= loopEnd { break }
        }
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
        for i in trackRings.indices { trackDebt[i] += lost }
        t.advance(by: lost)
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
    private func pushWaiting(_ ring: FrameRing, _ channels: UnsafePointer<UnsafeMutablePointer<Float>>?, frameCount: Int) -> Int {
        var done = ring.push(channels, frameCount: frameCount)
        var waited: Int64 = 0
        while done < frameCount && waited < options.ringWaitNanoseconds && !diskFailed.load(ordering: .relaxed) {
            sleepNanoseconds(1_000_000)
            waited += 1_000_000
            done += ring.push(channels, frameCount: frameCount - done, sourceOffset: done)
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
            meterPeak[c] = max(meterPeak[c], MixKernels.peak(selectedCapture[c], frameCount: frames))
            meterSquares[c] += MixKernels.sumOfSquares(selectedCapture[c], frameCount: frames)
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

    /// Pops a period from every track ring (skipping frames owed to an xrun, waiting a
    /// bounded time for a late disk) and mixes it into the output bus with each track's gains.
    ///
    /// Audio thread: no allocation, no locks.
    private func mixPlayback(frameCount n: Int) {
        let outs = max(configuration.playbackChannels, 2)
        for ch in 0..<outs { outputBuffers[ch].update(repeating: 0, count: n) }
        var lowestFill = 1000
        for t in trackRings.indices {
            let ring = trackRings[t]
            let bufs = trackBuffers[t]
            if trackDebt[t] > 0 {
                let skipped = ring.pop(into: nil, frameCount: Int(min(trackDebt[t], Int64(ring.availableFrames))))
                trackDebt[t] -= Int64(skipped)
            }
            var got = ring.pop(into: bufs, frameCount: n)
            var waited: Int64 = 0
            while got < n && trackDebt[t] == 0 && waited < options.ringWaitNanoseconds {
                sleepNanoseconds(500_000)
                waited += 500_000
                got += ring.pop(into: bufs, frameCount: n - got, destinationOffset: got)
            }
            if got < n {
                for ch in 0..<ring.channelCount { (bufs[ch] + got).update(repeating: 0, count: n - got) }
                trackDebt[t] += Int64(n - got)
            }
            lowestFill = min(lowestFill, ring.availableFrames * 1000 / ring.capacityFrames)
            let gl = trackGains[2 * t], gr = trackGains[2 * t + 1]
            let right = ring.channelCount > 1 ? bufs[1] : bufs[0]
            MixKernels.accumulate(bufs[0], into: outputBuffers[0], frameCount: n, startGain: gl, endGain: gl)
            MixKernels.accumulate(right, into: outputBuffers[1], frameCount: n, startGain: gr, endGain: gr)
        }
        if configuration.playbackChannels == 1 {
            for i in 0..<n { outputBuffers[0][i] = (outputBuffers[0][i] + outputBuffers[1][i]) * 0.5 }
        }
        board.playbackFillPermille.store(lowestFill, ordering: .relaxed)
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

    /// Moves the transport on, wrapping inside the loop range.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    mutating func advance(by frames: Int64) {
        position += frames
        if loops && position >= loopEnd { position = loopStart + (position - loopStart) % (loopEnd - loopStart) }
    }
}
