#if canImport(Glibc)
import Glibc
#endif
import TapedeckDSP

/// Starting to roll and the mix's time-pitch restarts: the transport holds (state
/// `.starting`) until every disk stream has its frames and, under time-pitch, the mix's
/// look-ahead is rendered and the stretcher primed; then it rolls from the frame it was
/// asked for.
extension RenderCore {
    /// The mix's processors start again from the transport's sequence.
    ///
    /// Audio thread: no allocation.
    func restartTimePitch() {
        mixTimePitch?.restart(atSeq: seq, speed: timePitch.speed, pitchScale: timePitch.pitchScale)
    }

    /// The mix's processors start again where the playhead is, as at a locate: unless
    /// standing, the tracks read again from there (what the processors had taken from the
    /// rings is gone with them) and, rolling, the transport holds until they are ready and rolls on from the
    /// same frame — a short pause rather than a jump or a period that overruns.
    ///
    /// Audio thread: no allocation, no locks.
    func restartAtPlayhead() {
        // Standing, nothing has been read past the playhead: the rings still start there.
        guard state != .stopped else {
            restartTimePitch()
            return
        }
        if let next = pendingRoute { route = next; pendingRoute = nil }
        seekAll(seqStart: seq, timeline: position, route: route, continuesOld: false)  // restarts the processors
        if state == .rolling {
            state = .starting
            holdSince = deviceFrame
            shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: 0)
        }
    }

    /// Where the playhead will be after rolling `frames` more timeline frames (through a
    /// pending loop switch).
    ///
    /// Audio thread: arithmetic only.
    func timeline(afterRolling frames: Int64) -> Int64 {
        guard let next = pendingRoute, seq + frames >= routeSwitchSeq else { return route.advance(position, by: frames) }
        return next.advance(position, by: frames)
    }

    /// Stops rolling: takes end, and the disk is sent to read from here again so the next
    /// play starts at once.
    ///
    /// Audio thread: no allocation, no locks.
    func stopRolling() {
        endTakes()
        preRoll = PreRoll()
        guard state != .stopped else { return }
        state = .stopped
        if let next = pendingRoute { route = next; pendingRoute = nil }
        seekAll(seqStart: seq, timeline: position, route: route, continuesOld: false)
        shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: 0)
    }

    /// Starts rolling once every track has its first frames (or the wait went on too long:
    /// late tracks then start silent and are counted as underruns).
    ///
    /// Audio thread: no allocation, no locks; sleeps (waiting for the disk) only on an unpaced
    /// device, as the capture path does there.
    func rollWhenReady(_ g: Graph, frameCount n: Int) {
        var ready = readyToRoll(g, frameCount: n, primeUntil: waitsForDisk ? .max : cycleBegan + periodNanoseconds / 4)
        if waitsForDisk && !ready {
            // An unpaced device keeps no clock: the look-ahead is rendered and the stretcher
            // primed in this cycle (waiting for the disk, up to two seconds), so the roll
            // begins in the device period it was asked in, as at 1× — spread over periods, a
            // file tap or bounce began with that many periods of silence and every take and
            // click landed late.
            let giveUp = monotonicNanoseconds() + 2_000_000_000
            while !ready && monotonicNanoseconds() < giveUp {
                reader.signal()
                sleepNanoseconds(100_000)
                ready = readyToRoll(g, frameCount: n, primeUntil: .max)
            }
        }
        guard ready || deviceFrame - holdSince >= holdLimitFrames else { return }
        state = .rolling
        shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: speedFactor)
    }

    /// Whether the engine can roll from here: every track's disk stream holds this cycle's
    /// frames and, under time-pitch, the mix's look-ahead is rendered and the stretcher
    /// primed (priming stops at `deadline`, monotonic nanoseconds, and goes on next cycle).
    /// (A shared transport's slow sync asks only for the disk streams: filling the look-ahead
    /// there, with the engine standing, let the standing pass render the strips between the
    /// FIFO's blocks and the stretched mix lost 3 dB; a JACK start renders the look-ahead in
    /// its first rolling period instead.)
    ///
    /// Audio thread: no allocation, no locks.
    func readyToRoll(_ g: Graph, frameCount n: Int, primeUntil deadline: Int64) -> Bool {
        guard streamsReady(g, frameCount: n) else { return false }
        guard timePitch.engaged, let mix = mixTimePitch else { return true }
        return fillAhead(mix, g, frameCount: n, primeUntil: deadline)
    }

    /// While waiting to roll under time-pitch: renders up to a period's budget of the mix
    /// ahead (from what every track's disk stream already has), so the processors' restart
    /// is paid for before the roll. Returns whether the look-ahead is complete.
    ///
    /// Audio thread: no allocation, no locks.
    private func fillAhead(_ mix: MixTimePitch, _ g: Graph, frameCount n: Int, primeUntil deadline: Int64) -> Bool {
        let wanted = mix.wantedAhead(timePitch: timePitch)
        let k = min(wanted - mix.aheadFrames, MixTimePitch.budget(speed: timePitch.speed, frameCount: n))
        guard k > 0 else { return mix.prime(timePitch: timePitch, until: deadline) }
        var have = true
        for i in 0..<g.trackCount where have {
            g.stripTable[i]._withUnsafeGuaranteedRef { strip in
                if !strip.voice.hasData(atSeq: mix.seq + Int64(strip.latencyFrames), frameCount: k) { have = false }
            }
        }
        if have { mix.renderAhead(frameCount: k, timePitch: timePitch) }
        guard mix.aheadFrames >= wanted else { return false }
        // Then the stretcher's restart, in slices of a quarter period each.
        return mix.prime(timePitch: timePitch, until: deadline)
    }
}
