/// What the device lost: an xrun told by the device, and the device time it cost, moved
/// through by the transport so everything stays at its device time (an xrun is never a
/// locate).
extension RenderCore {
    /// An xrun: counted, told with all it cost (`lostFrames`), and what is left of it skipped.
    /// (A device that had to wait a cycle to know tells it where the playhead is by then: a
    /// period or so after it began.)
    ///
    /// Audio thread: no allocation, no locks.
    func deviceDidXrun(lostFrames: Int64, skippingNow: Int64) {
        shared.board.xrunCount.add(1, ordering: .relaxed)
        EngineActivity.shared.signal()
        // Where it began: where part of it was skipped already, else where the device began
        // holding (the loss came just before; the playhead moved on since, through the
        // cycles held), else here.
        let began = lostFrames > skippingNow && untoldXrunFrame >= 0 ? untoldXrunFrame
            : deviceHolding && holdBeganFrame >= 0 ? holdBeganFrame : position
        // Not rolling: the skip below moves no playhead, and no take holds the loss.
        shared.events.push(EngineEvent(kind: .deviceXrun, frame: began, frames: lostFrames, whileStopped: state != .rolling))
        deviceSkipped(frames: skippingNow)
        // What was skipped for this xrun is told now (an xrun that cost nothing leaves
        // another's untold frames alone).
        if lostFrames > 0 { untoldXrunFrame = -1 }
    }

    /// The device may have lost up to `frames` just before this cycle and will tell later
    /// (``AudioDeviceClient/deviceHolds(frames:)``): each running take marks where it is, and
    /// its writer writes no further until the device tells, so what it turns out to have lost
    /// is inserted there as silence — before the frames kept meanwhile, which then land on
    /// their own device time, never early. 0 ends the hold.
    ///
    /// Audio thread: no allocation, no locks.
    func deviceHolds(frames held: Int64) {
        let holding = held > 0
        guard holding != deviceHolding else { return }
        deviceHolding = holding
        holdBeganFrame = holding ? position : -1
        // The retroactive memory holds as the takes do: what it heard meanwhile is silence
        // once the device tells, and it shows none of it before.
        if let graphRef = graph {
            graphRef._withUnsafeGuaranteedRef { g in
                for i in 0..<g.inputCount {
                    g.inputTable[i]._withUnsafeGuaranteedRef { strip in
                        if holding { strip.retro?.beginHold() } else { strip.retro?.endHold() }
                    }
                }
            }
        }
        guard let takesRef = takes else { return }
        takesRef._withUnsafeGuaranteedRef { set in
            // A take that has not begun holds nothing: what is lost before it is not its own.
            guard set.startDevice != .max || !holding else { return }
            for l in 0..<set.lanes.count {
                set.laneTable[l]._withUnsafeGuaranteedRef { lane in
                    if holding { beginHold(lane) } else { endHold(lane, resolved: true, tells: l == 0) }
                    if let mirror = lane.mirror { if holding { beginHold(mirror) } else { endHold(mirror, resolved: true) } }
                }
            }
        }
    }

    /// Every take of `set` (and its mirror), begun while the device holds, holds from where
    /// it is now (its held span told at its own timeline frame: the playhead may be before
    /// its record point); one already holding keeps its hold.
    ///
    /// Audio thread: no allocation, no locks.
    func holdLanes(of set: TakeSet) {
        let recordPoint = set.recordPointFrame.load(ordering: .relaxed)
        for l in 0..<set.lanes.count {
            set.laneTable[l]._withUnsafeGuaranteedRef { lane in
                beginHold(lane, at: recordPoint + lane.kept)
                if let mirror = lane.mirror { beginHold(mirror, at: recordPoint + mirror.kept) }
            }
        }
    }

    /// `lane` holds from its next frame, which lies at timeline frame `at` (default: the playhead).
    ///
    /// Audio thread: no allocation, no locks.
    private func beginHold(_ lane: TakeLane, at: Int64? = nil) {
        guard lane.holdAt < 0 else { return }
        lane.holdAt = lane.kept
        lane.holdPosition = at ?? position
        lane.insertedAtHold = 0
        lane.heldDropCount = 0
        lane.holdFrom.store(lane.kept, ordering: .releasing)
    }

    /// The hold is over: the frames kept meanwhile become silence, the spans dropped
    /// meanwhile go to the writer (after what was inserted before them), and it writes on.
    ///
    /// The cycles the device held were read by a clock it could not trust: read late (JACK's
    /// clock of the cycle after them, given back later), another client may have written its
    /// next cycle into their input already; and when frames were lost, a late cycle's audio
    /// belongs before the loss and a timely one's after it, which no reading tells apart. So
    /// what they hold is never placed: it is silence, counted as lost and said as an xrun
    /// (`tells`), and nothing lands out of place. (`resolved` false: the pass ended with the
    /// device still unsure; what was kept follows on.) Audio thread: no allocation, no locks.
    func endHold(_ lane: TakeLane, resolved: Bool = false, tells: Bool = false) {
        guard lane.holdAt >= 0 else { return }
        let held = lane.kept - lane.holdAt - lane.insertedAtHold
        if resolved && held > 0 {
            // What the ring holds of the span: the span less what was dropped from it (spans
            // dropped meanwhile lie inside it, and are silence with the rest).
            var dropped: Int64 = 0
            for i in 0..<lane.heldDropCount { dropped += lane.heldDrops[i].count }
            _ = lane.gaps.push(TakeGap(frame: lane.holdAt + lane.insertedAtHold, count: held, replaces: true,
                                       ringFrames: max(0, held - dropped)))
            if tells {
                // On the timeline where the span lies: after what was inserted at the hold
                // (the transport moved on through that too).
                shared.events.push(EngineEvent(kind: .deviceXrun, frame: lane.holdPosition + lane.insertedAtHold, frames: held))
                EngineActivity.shared.signal()
            }
        } else {
            for i in 0..<lane.heldDropCount {
                var gap = lane.heldDrops[i]
                gap.frame += lane.insertedAtHold
                _ = lane.gaps.push(gap)
            }
        }
        lane.heldDropCount = 0
        lane.holdAt = -1
        lane.holdFrom.store(.max, ordering: .releasing)
        writer.signal()
    }

    /// Silence for `lost` frames at the hold's take frame: the writer has written up to
    /// there and no further, so the frames kept since follow it. Audio thread.
    private func insertAtHold(_ lane: TakeLane, frames lost: Int64) {
        _ = lane.gaps.push(TakeGap(frame: lane.holdAt + lane.insertedAtHold, count: lost))
        lane.insertedAtHold += lost
        lane.kept += lost
        lane.framesKept.store(lane.kept, ordering: .releasing)
    }

    /// The device lost `lost` frames of time: the transport moves on by as much, takes get
    /// silence there and the retroactive memory too, so everything stays at its device time.
    /// While the device held frames (``deviceHolds(frames:)``), the takes' silence goes where
    /// the hold began.
    ///
    /// Audio thread: no allocation, no locks.
    func deviceSkipped(frames lost: Int64) {
        guard lost > 0 else {
            publish()
            return
        }
        if untoldXrunFrame < 0 { untoldXrunFrame = deviceHolding && holdBeganFrame >= 0 ? holdBeganFrame : position }
        let seqBefore = seq
        var inserted = false
        if deviceHolding, let takesRef = takes {
            takesRef._withUnsafeGuaranteedRef { set in
                guard set.startDevice != .max else { return }
                inserted = true
                var most: Int64 = set.keptFrames
                for l in 0..<set.lanes.count {
                    set.laneTable[l]._withUnsafeGuaranteedRef { lane in
                        guard lane.holdAt >= 0 else { return }
                        insertAtHold(lane, frames: lost)
                        if let mirror = lane.mirror, mirror.holdAt >= 0 { insertAtHold(mirror, frames: lost) }
                        most = max(most, lane.kept)
                    }
                }
                set.keptFrames = most
                set.framesKept.store(most, ordering: .releasing)
            }
        }
        if let graphRef = graph {
            graphRef._withUnsafeGuaranteedRef { g in
                var left = lost
                while left > 0 {
                    let k = Int(min(left, Int64(periodFrames)))
                    if !inserted { keepTakes(g, frameCount: k, silence: true) }
                    for i in 0..<g.inputCount { g.inputTable[i]._withUnsafeGuaranteedRef { $0.skip(frameCount: k) } }
                    if state == .rolling { advance(deviceFrames: Int64(k)) }
                    deviceFrame += Int64(k)
                    left -= Int64(k)
                }
            }
        } else {
            deviceFrame += lost
        }
        // The mix's processors skip what the transport moved through meanwhile.
        if timePitch.engaged { mixTimePitch?.debtFrames += seq - seqBefore }
        // The transport moved on with device time: the same stretch, unless the skip crossed
        // a loop's wrap (logged there) or rounding at another speed moved it.
        shared.log.appendUnlessContinued(deviceFrame: deviceFrame, timelineFrame: position, speed: state == .rolling ? speedFactor : 0)
        // A rolling shared transport (JACK's) moved on by the lost frames too: that is the
        // xrun, not a locate by another program (at a speed other than 1 the playhead and the
        // shared transport part ways, and following the "jump" would throw the playhead back).
        if hostFollow.seen && hostFollow.state == .rolling { hostFollow.expectedFrame += lost }
        publish()
    }
}
