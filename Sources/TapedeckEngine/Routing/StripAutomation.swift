import TapedeckCore
import TapedeckDSP

/// One lane as the audio thread reads it: its points in flat tables and a cursor that walks
/// forward with the playhead (a jump back searches again), so reading a value costs a
/// comparison or two, never an allocation.
final class LaneCurve: @unchecked Sendable {
    private let frames: UnsafeMutablePointer<Int64>
    private let values: UnsafeMutablePointer<Double>
    private let exponential: UnsafeMutablePointer<Bool>
    let count: Int
    let parameter: AutomationParameter
    private let isLevel: Bool
    private let steps: Bool
    /// The segment last read: points `cursor` and `cursor + 1`. Audio thread.
    private var cursor = 0

    /// The lane's points (it has at least one). Control thread.
    init(_ lane: AutomationLane) {
        count = max(lane.points.count, 1)
        parameter = lane.parameter
        isLevel = lane.parameter.isLevel
        if case .mute = lane.parameter { steps = true } else { steps = false }
        frames = .allocate(capacity: count)
        values = .allocate(capacity: count)
        exponential = .allocate(capacity: count)
        for (i, p) in lane.points.enumerated() {
            frames[i] = p.frame
            values[i] = p.value
            exponential[i] = p.curve == .exponential
        }
        if lane.points.isEmpty {
            frames[0] = 0
            values[0] = 0
            exponential[0] = false
        }
    }

    deinit {
        frames.deallocate()
        values.deallocate()
        exponential.deallocate()
    }

    /// The frame of the last point at or before `frame` (Int64.min: none).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func pointFrame(atOrBefore frame: Int64) -> Int64 {
        if frame < frames[0] { return .min }
        _ = value(at: frame)
        var k = cursor
        while k + 1 < count && frames[k + 1] <= frame { k += 1 }
        return frames[k] <= frame ? frames[k] : .min
    }

    /// The frame of the first point after `frame` (Int64.max: none).
    ///
    /// Audio thread: no allocation, no locks (after ``value(at:)`` placed the cursor).
    @inline(__always)
    func nextPointFrame(after frame: Int64) -> Int64 {
        if frame < frames[0] { return frames[0] }
        var k = cursor
        while k < count && frames[k] <= frame { k += 1 }
        return k < count ? frames[k] : .max
    }

    /// The lane's value at timeline frame `frame` (as ``AutomationLane/value(at:)`` has it).
    ///
    /// Audio thread: no allocation, no locks.
    func value(at frame: Int64) -> Double {
        if frame <= frames[0] { return values[0] }
        if frame >= frames[count - 1] { return values[count - 1] }
        if frame < frames[cursor] {
            // Back (a locate, a loop): search again.
            var lo = 0, hi = count - 1
            while lo + 1 < hi {
                let mid = (lo + hi) / 2
                if frames[mid] <= frame { lo = mid } else { hi = mid }
            }
            cursor = lo
        }
        while cursor + 1 < count - 1 && frames[cursor + 1] <= frame { cursor += 1 }
        let a = cursor, b = cursor + 1
        if steps { return values[a] }
        let t = Double(frame - frames[a]) / Double(frames[b] - frames[a])
        return AutomationLane.interpolate(values[a], values[b], t: t, curve: exponential[a] ? .exponential : .linear, isLevel: isLevel)
    }
}

/// A strip's automation in one graph: its fader, pan and mute lanes, its sends' level lanes
/// (by send), its nodes' parameter lanes (resolved to the node's parameters), and the
/// per-frame gains worked out from them each block.
///
/// Levels and pan are worked out at every ``anchorFrames``-th frame of a block and joined by
/// straight lines in amplitude between (a fade's curve within 0.001 dB), so the fader moves
/// frame by frame; node parameters are set every ``anchorFrames`` frames, the chain processing
/// the block in pieces that long, and the nodes' own smoothing joins them. Built on the
/// control thread; used by the audio thread (and a freewheeling export's helpers, one strip
/// each).
final class StripAutomation: @unchecked Sendable {
    /// Frames between values worked out from the lanes.
    static let anchorFrames = 32

    let gain: LaneCurve?
    let pan: LaneCurve?
    let mute: LaneCurve?
    /// Per send (the session's order), its level lane or nil.
    let sends: [LaneCurve?]
    /// Node parameter lanes: the parameters they set (unretained: the chain keeps them) and
    /// which.
    let parameters: [(store: Unmanaged<NodeParameters>, index: Int, lane: LaneCurve)]
    private let keepNodes: [NodeParameters]
    /// This block's gains, per frame: the fader (with mute), the pan's two sides.
    let gainCurve: UnsafeMutablePointer<Float>
    let leftCurve: UnsafeMutablePointer<Float>
    let rightCurve: UnsafeMutablePointer<Float>
    /// A send's two sides this block.
    let sendLeft: UnsafeMutablePointer<Float>
    let sendRight: UnsafeMutablePointer<Float>
    let maxFrames: Int

    /// Whether the fader, pan or mute move.
    var movesStrip: Bool { gain != nil || pan != nil || mute != nil }

    /// The lanes of `track` that this graph can play on a strip of `channelCount` whose chain
    /// is `chain` (nil when none can). A node or parameter the chain lacks is left out (the
    /// lane waits in the session until the chain has it). Control thread.
    static func make(_ track: GraphSpec.Track, chain: ChainInstance?, maxFrames: Int) -> StripAutomation? {
        guard !track.automation.isEmpty else { return nil }
        var gain: LaneCurve?, pan: LaneCurve?, mute: LaneCurve?
        var sends = [LaneCurve?](repeating: nil, count: track.sends.count)
        var parameters: [(NodeParameters, Int, LaneCurve)] = []
        let sendNames = track.sendBuses
        for lane in track.automation {
            switch lane.parameter {
            case .gain: gain = LaneCurve(lane)
            case .pan: pan = LaneCurve(lane)
            case .mute: mute = LaneCurve(lane)
            case .send(let bus):
                if let k = sendNames.firstIndex(where: { $0.lowercased() == bus.lowercased() }) { sends[k] = LaneCurve(lane) }
            case .node(let node, let id):
                guard let chain, let at = AutomationTargets.nodeIndex(node, in: chain.chain), at < chain.nodes.count,
                      let p = AutomationTargets.parameterIndex(id, in: chain.nodes[at].parameters) else { continue }
                parameters.append((chain.nodes[at].parameters, p, LaneCurve(lane)))
            }
        }
        guard gain != nil || pan != nil || mute != nil || sends.contains(where: { $0 != nil }) || !parameters.isEmpty else { return nil }
        return StripAutomation(gain: gain, pan: pan, mute: mute, sends: sends, parameters: parameters, maxFrames: maxFrames)
    }

    private init(gain: LaneCurve?, pan: LaneCurve?, mute: LaneCurve?, sends: [LaneCurve?], parameters: [(NodeParameters, Int, LaneCurve)],
                 maxFrames: Int) {
        self.gain = gain
        self.pan = pan
        self.mute = mute
        self.sends = sends
        keepNodes = parameters.map(\.0)
        self.parameters = parameters.map { (Unmanaged.passUnretained($0.0), $0.1, $0.2) }
        let frames = max(maxFrames, 1)
        self.maxFrames = frames
        func buffer() -> UnsafeMutablePointer<Float> {
            let b = UnsafeMutablePointer<Float>.allocate(capacity: frames)
            b.initialize(repeating: 0, count: frames)
            return b
        }
        gainCurve = buffer()
        leftCurve = buffer()
        rightCurve = buffer()
        sendLeft = buffer()
        sendRight = buffer()
    }

    deinit {
        gainCurve.deallocate()
        leftCurve.deallocate()
        rightCurve.deallocate()
        sendLeft.deallocate()
        sendRight.deallocate()
    }

    /// Sets every parameter lane's node parameter to its value at `frame`.
    ///
    /// Audio thread: atomic stores.
    @inline(__always)
    func setParameters(at frame: Int64) {
        for k in 0..<parameters.count {
            let p = parameters[k]
            let v = p.lane.value(at: frame)
            p.store._withUnsafeGuaranteedRef { $0.set(p.index, v) }
        }
    }

    /// Fills `into[0..<n]` with `map(lane(frame))` from timeline frame `start` on: worked out at
    /// every ``anchorFrames``-th frame of the timeline and at every point of the lane (a corner
    /// is never cut), joined by straight lines. The anchors lie on the timeline, not in the
    /// block, so a block of any length (a period of 64 frames, an export's 16 384) gets the
    /// same values frame for frame.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func fill(_ into: UnsafeMutablePointer<Float>, frameCount n: Int, from start: Int64, lane: LaneCurve,
                     _ map: (Double) -> Float) {
        let span = Int64(anchorFrames)
        var f = 0
        while f < n {
            let t = start + Int64(f)
            var a = t - ((t % span) + span) % span
            a = max(a, lane.pointFrame(atOrBefore: t))
            var b = a - ((a % span) + span) % span + span
            b = min(b, lane.nextPointFrame(after: t))
            let va = map(lane.value(at: a))
            let vb = map(lane.value(at: b))
            let step = (vb - va) / Float(b - a)
            let end = Int(min(Int64(n), b - start))
            for i in f..<end { into[i] = va + step * Float(start + Int64(i) - a) }
            f = max(end, f + 1)
        }
    }

    /// This block's fader (× mute) and pan gains, frame by frame, from `start`: lanes where
    /// there are, else the strip's own `fader` and pan gains.
    ///
    /// Audio thread: no allocation, no locks.
    func fillStrip(from start: Int64, frameCount n: Int, fader: Float, panGains: (Float, Float), channelCount: Int) {
        if let gain {
            StripAutomation.fill(gainCurve, frameCount: n, from: start, lane: gain) { Float(Decibels.toLinear($0)) }
        } else {
            gainCurve.update(repeating: fader, count: n)
        }
        if let mute {
            // A mute steps where its point is.
            for i in 0..<n where mute.value(at: start + Int64(i)) >= 0.5 { gainCurve[i] = 0 }
        }
        if let pan {
            StripAutomation.fill(leftCurve, frameCount: n, from: start, lane: pan) {
                Float(PanLaw.gains(channelCount: channelCount, pan: $0).left)
            }
            StripAutomation.fill(rightCurve, frameCount: n, from: start, lane: pan) {
                Float(PanLaw.gains(channelCount: channelCount, pan: $0).right)
            }
        } else {
            leftCurve.update(repeating: panGains.0, count: n)
            rightCurve.update(repeating: panGains.1, count: n)
        }
    }

    /// Send `index`'s level lane as gains into ``sendLeft``/``sendRight`` (× `left`/`right`,
    /// the send's pan); false when the send has no lane.
    ///
    /// Audio thread: no allocation, no locks.
    func fillSend(_ index: Int, from start: Int64, frameCount n: Int, left: Float, right: Float) -> Bool {
        guard index >= 0 && index < sends.count, let lane = sends[index] else { return false }
        StripAutomation.fill(sendLeft, frameCount: n, from: start, lane: lane) { Float(Decibels.toLinear($0)) }
        for i in 0..<n {
            sendRight[i] = sendLeft[i] * right
            sendLeft[i] *= left
        }
        return true
    }
}

