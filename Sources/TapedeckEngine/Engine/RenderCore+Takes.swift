import TapedeckCore
import TapedeckDSP

/// Recording on the audio thread: where a pass starts and ends on the device's clock, and
/// which input each take keeps.
///
/// A take's frame k is the input that arrived its own latency (``TakeLane/latencyFrames``,
/// from ``TakeLatency``) after the frame played at `startDevice + k`. Each take follows its
/// own: inputs whose ports have different latencies line up alike, and a latency that changes
/// while a take records (a port patched, a buffer size changed) moves where its input is read
/// from at once — later frames wait for their input, frames whose input already went by are
/// silence — so every frame stays where it was played, and the take is told where it moved.
extension RenderCore {
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

    /// Works out the takes' gate for this stretch of `frameCount` device frames and pushes
    /// what each take keeps into its ring (`silence`: device time lost in an xrun). A full
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
                    // At once: from what is heard now, as the quickest input hears it (a take
                    // of a slower input waits a little for its first frame).
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
            guard set.startDevice != .max else { return }
            // A take that begins while the device holds (its clock not trusted yet: PipeWire
            // runs a stall's missed cycles back to back, and a count-in can end in one) holds
            // from here, as one under way when the hold began does: what it keeps meanwhile
            // is never placed, and what the device turns out to have lost goes before it.
            if deviceHolding { holdLanes(of: set) }
            if !silence, let end = gate.endFrame, let o = crossing(end, frameCount: n) {
                set.endDevice = min(set.endDevice, deviceFrame + o)
            }
            // A pass of MIDI takes only ends when what was played at its end is heard.
            var allDone = set.endDevice != .max && deviceFrame &+ Int64(n) &- gate.latencyFrames >= set.endDevice
            var most: Int64 = 0
            if set.lanes.isEmpty {
                // MIDI takes only: the pass's length is what was heard of it, at the gate's latency.
                let next = set.startDevice.addingSaturating(set.keptFrames).addingSaturating(gate.latencyFrames)
                let end = set.endDevice == .max ? Int64.max : set.endDevice.addingSaturating(gate.latencyFrames)
                let to = min(max(end, next), deviceFrame + Int64(n))
                most = set.keptFrames + max(0, to - max(next, deviceFrame)) + max(0, min(deviceFrame, end) - next)
            }
            for l in 0..<set.lanes.count {
                set.laneTable[l]._withUnsafeGuaranteedRef { lane in
                    followLatency(lane)
                    let done = keep(lane, of: set, graph: g, frameCount: n, silence: silence)
                    allDone = (l == 0 ? done : allDone && done)
                    most = max(most, lane.kept)
                }
            }
            if most > set.keptFrames {
                if set.keptFrames == 0 {
                    stampFirstFrame(set)
                    set.startedFlag.store(true, ordering: .releasing)
                }
                set.keptFrames = most
                set.framesKept.store(most, ordering: .releasing)
                writer.signal()
            }
            // Every take's disk refused a write: nothing kept from here on could be written,
            // so the pass ends now (on an unpaced device the timeline would run on for hours).
            if set.nothingWritable { ended = true }
            if set.endDevice != .max && allDone { ended = true }
        }
        if ended { endTakes() }
    }

    /// Takes the latency the control thread asked for (``TakeLane/latencyTarget``); a take
    /// already under way is told where it moved (``EngineEvent/Kind/takeLatencyChanged``).
    ///
    /// Audio thread: an atomic load; an event push at most.
    @inline(__always)
    private func followLatency(_ lane: TakeLane) {
        let target = lane.latencyTarget.load(ordering: .relaxed)
        guard target != lane.latencyFrames else { return }
        if lane.kept > 0 {
            shared.events.push(EngineEvent(kind: .takeLatencyChanged, frame: lane.kept, frames: target,
                                           track: lane.request.track, previousFrames: lane.latencyFrames))
            EngineActivity.shared.signal()
        }
        lane.latencyFrames = target
    }

    /// Keeps what `lane` takes of this stretch (input device frames `deviceFrame ..< +n`):
    /// its next frame is the input of device frame `startDevice + kept + latency`. True once
    /// the input of its last frame is in.
    ///
    /// Audio thread: no allocation, no locks.
    private func keep(_ lane: TakeLane, of set: TakeSet, graph g: Graph, frameCount n: Int, silence: Bool) -> Bool {
        let latency = lane.latencyFrames
        let next = set.startDevice.addingSaturating(lane.kept).addingSaturating(latency)
        let end = set.endDevice == .max ? Int64.max : set.endDevice.addingSaturating(latency)
        let periodEnd = deviceFrame + Int64(n)
        var kept = lane.kept
        if next < deviceFrame {
            // Its input for these frames went by already (the take starts in the past, after
            // an xrun hid its start; or its latency fell): silence keeps its length and place.
            let pad = min(min(deviceFrame, end) - next, Int64(Int32.max))
            if pad > 0 {
                push(lane, graph: g, from: 0, count: Int(pad), keptBefore: kept, silence: true)
                kept += pad
            }
        }
        let from = Int(min(max(next - deviceFrame, 0), Int64(n)))
        let to = Int(min(max(end - deviceFrame, Int64(from)), Int64(n)))
        if to > from {
            push(lane, graph: g, from: from, count: to - from, keptBefore: kept, silence: silence)
            kept += Int64(to - from)
        }
        if kept != lane.kept {
            lane.kept = kept
            lane.framesKept.store(kept, ordering: .releasing)
            if let mirror = lane.mirror { mirror.framesKept.store(kept, ordering: .releasing) }
        }
        return periodEnd >= end
    }

    /// The takes, not started yet, start at their record point `recordPoint`, which was
    /// played at device frame `played`, in the past: the input kept since is lost (an xrun
    /// hid it) and becomes silence, so the take still starts on its record point and keeps
    /// its length (``keepTakes(_:frameCount:silence:)`` pads it as this period is kept).
    ///
    /// Audio thread: no allocation, no locks.
    func startTakes(recordPoint: Int64, playedAtDevice played: Int64) {
        guard let takesRef = takes else { return }
        takesRef._withUnsafeGuaranteedRef { set in
            guard set.startDevice == .max else { return }
            set.startDevice = played
            set.recordPointFrame.store(recordPoint, ordering: .relaxed)
            if let maxFrames = set.gate.maxFrames {
                let (end, overflow) = played.addingReportingOverflow(maxFrames)
                set.endDevice = min(set.endDevice, overflow ? .max : end)
            }
            set.startDeviceFrame.store(played, ordering: .releasing)
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
        // Two seconds of the clock, not 4,000 sleeps of half a millisecond: on a busy machine
        // each sleep lasts longer than asked, and counting what was asked waited far longer.
        let since = pushed < count && waitsForDisk ? monotonicNanoseconds() : 0
        while pushed < count && waitsForDisk && monotonicNanoseconds() - since < 2_000_000_000 {
            writer.signal()
            sleepNanoseconds(500_000)
            pushed += lane.ring.push(sources, frameCount: count - pushed, sourceOffset: from + pushed)
        }
        if pushed < count {
            let lost = Int64(count - pushed)
            let gap = TakeGap(frame: keptBefore + Int64(pushed), count: lost)
            if lane.holdAt >= 0 {
                // Told to the writer once the hold ends, after the silence it inserts before it.
                if lane.heldDropCount < TakeLane.heldDropCapacity {
                    lane.heldDrops[lane.heldDropCount] = gap
                    lane.heldDropCount += 1
                } else {
                    lane.heldDrops[lane.heldDropCount - 1].count += lost
                }
            } else {
                _ = lane.gaps.push(gap)
            }
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
                set.laneTable[i]._withUnsafeGuaranteedRef { lane in
                    // A hold the device never resolved: what was kept follows on (nothing
                    // was said lost), and the writer finishes.
                    endHold(lane)
                    if let mirror = lane.mirror { endHold(mirror) }
                    let track = lane.request.track
                    if track >= 0 && track < recordingTrackCapacity { recordingTracks[track] = false }
                }
            }
            set.endedFlag.store(true, ordering: .releasing)
        }
        writer.signal()
    }
}

extension Int64 {
    /// `self + other`, held at the ends of the range instead of trapping.
    ///
    /// Any thread: arithmetic only.
    @inline(__always)
    func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
