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
        let began = lostFrames > skippingNow && untoldXrunFrame >= 0 ? untoldXrunFrame : position
        shared.events.push(EngineEvent(kind: .deviceXrun, frame: began, frames: lostFrames))
        deviceSkipped(frames: skippingNow)
        // What was skipped for this xrun is told now (an xrun that cost nothing leaves
        // another's untold frames alone).
        if lostFrames > 0 { untoldXrunFrame = -1 }
    }

    /// The device lost `lost` frames of time: the transport moves on by as much, takes get
    /// silence there and the retroactive memory too, so everything stays at its device time.
    ///
    /// Audio thread: no allocation, no locks.
    func deviceSkipped(frames lost: Int64) {
        guard lost > 0 else {
            publish()
            return
        }
        if untoldXrunFrame < 0 { untoldXrunFrame = position }
        let seqBefore = seq
        if let graphRef = graph {
            graphRef._withUnsafeGuaranteedRef { g in
                var left = lost
                while left > 0 {
                    let k = Int(min(left, Int64(periodFrames)))
                    keepTakes(g, frameCount: k, silence: true)
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
        shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: state == .rolling ? speedFactor : 0)
        // A rolling shared transport (JACK's) moved on by the lost frames too: that is the
        // xrun, not a locate by another program (at a speed other than 1 the playhead and the
        // shared transport part ways, and following the "jump" would throw the playhead back).
        if hostFollow.seen && hostFollow.state == .rolling { hostFollow.expectedFrame += lost }
        publish()
    }
}
