import TapedeckCore
import TapedeckDSP

/// The last value a fill worked out (at a timeline frame), so the next block, which starts
/// where this one ended, does not work it out again. Audio thread.
struct AnchorCache {
    var frame = Int64.min
    var value: (Float, Float) = (0, 0)
}

/// A strip's automation in one graph: its fader, pan and mute lanes, its sends' level lanes
/// (by send), its nodes' parameter lanes (resolved to the node's parameters), and the
/// gains worked out from them each block, as straight pieces.
///
/// Levels and pan are worked out at every ``anchorFrames``-th frame of a block and joined by
/// straight lines in amplitude between (a fade's curve within 0.001 dB), so the fader moves
/// frame by frame (applied by the ramp kernels a fader move uses: a gain per frame written
/// out and read back cost a quarter of automation's time at 256 tracks); node parameters are set every ``anchorFrames`` frames, the chain processing
/// the block in pieces that long, and the nodes' own smoothing joins them. Built on the
/// control thread; used by the audio thread (and a freewheeling export's helpers, one strip
/// each).
final class StripAutomation: @unchecked Sendable {
    /// Frames between values worked out from the lanes (a power of two: anchors are found
    /// by masking).
    static let anchorFrames = 32

    /// Where the audio thread finds everything it reads each block, in one allocation (the
    /// strip's ``Hot`` block): the fader, pan and mute lanes' segments, the node parameter
    /// lanes' segments, the fader's and pan's last anchors and piece counts, the parameters'
    /// table, then the pieces. At 256 automated strips a period these were some twenty
    /// separate allocations (lanes, caches, counts, tables), each a cache miss.
    private let hot: UnsafeMutableRawPointer
    /// The lanes, kept alive here; the audio thread reaches them through the unretained
    /// references below (taking a class reference out of a property or an array retains and
    /// releases it: at 256 tracks a period that was a tenth of automation's cost).
    private let keep: [LaneCurve]
    private let keepNodes: [NodeParameters]
    let gain: Unmanaged<LaneCurve>?
    let pan: Unmanaged<LaneCurve>?
    let mute: Unmanaged<LaneCurve>?
    /// Per send (the session's order), its level lane or nil.
    private let sendLanes: UnsafeMutablePointer<Unmanaged<LaneCurve>?>
    let sendCount: Int
    /// Node parameter lanes: the parameters they set, which, the lane (in ``hot``), and the
    /// parameter's range, so that setting it reads nothing else of the node's.
    private struct ParameterLane {
        let store: Unmanaged<NodeParameters>
        let index: Int
        let lane: Unmanaged<LaneCurve>
        let minimum: Double, maximum: Double, fallback: Double
        let whole: Bool, tempoSyncable: Bool

        /// `value` as the parameter can take it (as ``NodeParameters/set(_:_:)-(Int,Double)`` clamps).
        ///
        /// Audio thread: arithmetic.
        @inline(__always)
        func held(_ value: Double) -> Double {
            let v = value.isNaN ? fallback : min(max(value, minimum), maximum)
            // A branch, not a select: `rounded` is a call, made for every value otherwise.
            guard whole else { return v }
            return v.rounded()
        }
    }
    private let parameters: UnsafeMutablePointer<ParameterLane>
    let parameterCount: Int
    /// Whether the fader, pan or mute move.
    let movesStrip: Bool
    /// The last anchors worked out: the fader's, then the pan's (in ``hot``), and per send. Audio thread.
    private let caches: UnsafeMutablePointer<AnchorCache>
    private let sendCaches: UnsafeMutablePointer<AnchorCache>
    /// This block's fader, pan and send gains as straight pieces (one a frame at most).
    let gainPieces: GainPieces
    let panPieces: GainPieces
    /// The first automated send's pieces (interleaved with the fader's and pan's), and the
    /// others' (each its own table): a send's pieces are read where it lands, which on
    /// several threads is after the strip's other sends were worked out.
    private let firstSendPieces: GainPieces
    private let otherSendPieces: UnsafeMutablePointer<GainPieces>
    /// Which table each send's pieces use (−1: the send has no lane).
    private let sendPieceSlot: UnsafeMutablePointer<Int>
    let maxFrames: Int
    /// The pan law's table (``PanTable/storage``), kept so reading it needs no check that it is made.
    private let panTable = PanTable.storage

    /// The lanes of `track` that this graph can play on a strip of `channelCount` whose chain
    /// is `chain` (nil when none can). A node or parameter the chain lacks is left out (the
    /// lane waits in the session until the chain has it). Control thread.
    static func make(_ track: GraphSpec.Track, chain: ChainInstance?, maxFrames: Int) -> StripAutomation? {
        guard !track.automation.isEmpty else { return nil }
        PanTable.prepare()
        var gain: AutomationLane?, pan: AutomationLane?, mute: AutomationLane?
        var sends = [LaneCurve?](repeating: nil, count: track.sends.count)
        var parameters: [(NodeParameters, Int, AutomationLane)] = []
        let sendNames = track.sendBuses
        for lane in track.automation {
            switch lane.parameter {
            case .gain: gain = lane
            case .pan: pan = lane
            case .mute: mute = lane
            case .send(let bus):
                if let k = sendNames.firstIndex(where: { $0.lowercased() == bus.lowercased() }) { sends[k] = LaneCurve(lane) }
            case .node(let node, let id):
                guard let chain, let at = AutomationTargets.nodeIndex(node, in: chain.chain), at < chain.nodes.count,
                      let p = AutomationTargets.parameterIndex(id, in: chain.nodes[at].parameters) else { continue }
                parameters.append((chain.nodes[at].parameters, p, lane))
            }
        }
        guard gain != nil || pan != nil || mute != nil || sends.contains(where: { $0 != nil }) || !parameters.isEmpty else { return nil }
        return StripAutomation(gain: gain, pan: pan, mute: mute, sends: sends, parameters: parameters, maxFrames: maxFrames)
    }

    /// The ``hot`` block's layout, in bytes: a cache line per lane segment (fader, pan, mute,
    /// then each node parameter lane), a line of the fader's and pan's anchors and the piece
    /// counts, the parameters' table, the sends' anchors, then the three piece tables
    /// (interleaved: a block's first pieces lie together, right after the rest).
    private struct Hot {
        static let line = 64
        let parameterSegments = 3 * Hot.line
        let anchors: Int
        let parameterTable: Int
        let sendAnchors: Int
        let pieces: Int
        let bytes: Int

        init(parameterCount: Int, sendCount: Int, pieceCapacity: Int) {
            func lines(_ bytes: Int) -> Int { (bytes + Hot.line - 1) / Hot.line * Hot.line }
            anchors = parameterSegments + parameterCount * Hot.line
            parameterTable = anchors + Hot.line
            sendAnchors = parameterTable + lines(parameterCount * MemoryLayout<ParameterLane>.stride)
            pieces = sendAnchors + lines(sendCount * MemoryLayout<AnchorCache>.stride)
            bytes = pieces + 3 * pieceCapacity * MemoryLayout<GainPiece>.stride
        }
    }

    private init(gain: AutomationLane?, pan: AutomationLane?, mute: AutomationLane?, sends: [LaneCurve?],
                 parameters lanes: [(NodeParameters, Int, AutomationLane)], maxFrames: Int) {
        let frames = max(maxFrames, 1)
        self.maxFrames = frames
        let layout = Hot(parameterCount: lanes.count, sendCount: sends.count, pieceCapacity: frames)
        let hot = UnsafeMutableRawPointer.allocate(byteCount: layout.bytes, alignment: Hot.line)
        self.hot = hot
        hot.initializeMemory(as: UInt8.self, repeating: 0, count: layout.bytes)
        precondition(MemoryLayout<LaneSegment>.stride == Hot.line, "a lane's segment is one cache line")
        let gainCurve = gain.map { LaneCurve($0, segment: hot) }
        let panCurve = pan.map { LaneCurve($0, segment: hot + Hot.line) }
        let muteCurve = mute.map { LaneCurve($0, segment: hot + 2 * Hot.line) }
        let parameterCurves = lanes.enumerated().map { k, p in LaneCurve(p.2, segment: hot + layout.parameterSegments + k * Hot.line) }
        keep = [gainCurve, panCurve, muteCurve].compactMap { $0 } + sends.compactMap { $0 } + parameterCurves
        keepNodes = lanes.map(\.0)
        self.gain = gainCurve.map { Unmanaged.passUnretained($0) }
        self.pan = panCurve.map { Unmanaged.passUnretained($0) }
        self.mute = muteCurve.map { Unmanaged.passUnretained($0) }
        movesStrip = gain != nil || pan != nil || mute != nil
        sendCount = sends.count
        sendLanes = .allocate(capacity: max(sends.count, 1))
        sendLanes.initialize(repeating: nil, count: max(sends.count, 1))
        for (k, lane) in sends.enumerated() { sendLanes[k] = lane.map { Unmanaged.passUnretained($0) } }
        sendPieceSlot = .allocate(capacity: max(sends.count, 1))
        sendPieceSlot.initialize(repeating: -1, count: max(sends.count, 1))
        var slots = 0
        for (k, lane) in sends.enumerated() where lane != nil {
            sendPieceSlot[k] = slots
            slots += 1
        }
        otherSendPieces = .allocate(capacity: max(slots - 1, 1))
        for k in 0..<max(slots - 1, 0) { (otherSendPieces + k).initialize(to: GainPieces(capacity: frames)) }
        otherSendPieceCount = max(slots - 1, 0)
        parameterCount = lanes.count
        parameters = (hot + layout.parameterTable).bindMemory(to: ParameterLane.self, capacity: max(lanes.count, 1))
        for k in 0..<lanes.count {
            let (store, index) = (lanes[k].0, lanes[k].1)
            let range = store.range(index)
            (parameters + k).initialize(to: ParameterLane(store: Unmanaged.passUnretained(store), index: index,
                                                          lane: Unmanaged.passUnretained(parameterCurves[k]),
                                                          minimum: range.minimum, maximum: range.maximum, fallback: range.fallback,
                                                          whole: range.whole, tempoSyncable: store.definitions[index].tempoSyncable))
        }
        // The anchors line: the fader's and pan's anchors (32 bytes), then the three piece counts.
        caches = (hot + layout.anchors).bindMemory(to: AnchorCache.self, capacity: 2)
        caches.initialize(repeating: AnchorCache(), count: 2)
        let counts = (hot + layout.anchors + 2 * MemoryLayout<AnchorCache>.stride).bindMemory(to: Int.self, capacity: 3)
        counts.initialize(repeating: 0, count: 3)
        sendCaches = (hot + layout.sendAnchors).bindMemory(to: AnchorCache.self, capacity: max(sends.count, 1))
        sendCaches.initialize(repeating: AnchorCache(), count: sends.count)
        let pieces = (hot + layout.pieces).bindMemory(to: GainPiece.self, capacity: 3 * frames)
        gainPieces = GainPieces(count: counts, pieces: pieces, capacity: frames, stride: 3)
        panPieces = GainPieces(count: counts + 1, pieces: pieces + 1, capacity: frames, stride: 3)
        firstSendPieces = GainPieces(count: counts + 2, pieces: pieces + 2, capacity: frames, stride: 3)
    }

    private let otherSendPieceCount: Int

    deinit {
        for k in 0..<otherSendPieceCount { otherSendPieces[k].deallocate() }
        otherSendPieces.deallocate()
        sendPieceSlot.deallocate()
        sendLanes.deallocate()
        // The lanes (in `keep`, released after this) no longer read their segments here.
        hot.deallocate()
    }

    /// The fader's, pan's and mute's segments (in ``hot``). Audio thread: pointer arithmetic.
    private var gainSegment: UnsafeMutablePointer<LaneSegment> { hot.assumingMemoryBound(to: LaneSegment.self) }
    private var panSegment: UnsafeMutablePointer<LaneSegment> { hot.assumingMemoryBound(to: LaneSegment.self) + 1 }
    private var muteSegment: UnsafeMutablePointer<LaneSegment> { hot.assumingMemoryBound(to: LaneSegment.self) + 2 }
    /// The node parameter lanes' segments, one a line after the mute's. Audio thread: pointer arithmetic.
    private var parameterSegments: UnsafeMutablePointer<LaneSegment> { hot.assumingMemoryBound(to: LaneSegment.self) + 3 }

    /// Sets every parameter lane's node parameter to its value at `frame`, but a parameter a
    /// hand holds (automation written in touch or latch): that keeps the value set by hand.
    ///
    /// Audio thread: atomic stores.
    @inline(__always)
    func setParameters(at frame: Int64) {
        for k in 0..<parameterCount {
            let p = parameters[k]
            if p.store._withUnsafeGuaranteedRef({ $0.isTouched(p.index) }) { continue }
            let v = p.held(LaneCurve.value(parameterSegments + k, p.lane, at: frame))
            p.store._withUnsafeGuaranteedRef { $0.setInRange(p.index, v, tempoSyncable: p.tempoSyncable) }
        }
    }

    /// Fills `pieces` with `map(lane(frame))` for `n` frames from timeline frame `start`: worked
    /// out at every ``anchorFrames``-th frame of the timeline and at every point of the lane (a
    /// corner is never cut), joined by straight pieces. The anchors lie on the timeline, not
    /// in the block, so a block of any length (a period of 64 frames, an export's 16 384) gets
    /// the same values frame for frame; the last anchor is kept in `cache` for the next block.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func fill(_ pieces: GainPieces, frameCount n: Int, from start: Int64, segment: UnsafeMutablePointer<LaneSegment>,
                     lane: Unmanaged<LaneCurve>,
                     cache: UnsafeMutablePointer<AnchorCache>, _ sample: (Int64) -> (Float, Float)) {
        let span = Int64(anchorFrames)
        pieces.count = 0
        var f = 0
        while f < n {
            let t = start + Int64(f)
            let corners = LaneCurve.corners(segment, lane, around: t)
            let a = max(t & ~(span - 1), corners.before)
            let b = min((a & ~(span - 1)) + span, corners.after)
            let va = cache.pointee.frame == a ? cache.pointee.value : sample(a)
            let vb = sample(b)
            cache.pointee = AnchorCache(frame: b, value: vb)
            // A piece is at most an anchor span long: at full span a multiply by 1/32 is the
            // division exactly, without its wait.
            let width = b - a
            let inverse = width == span ? 1 / Float(span) : 1 / Float(width)
            let stepL = (vb.0 - va.0) * inverse, stepR = (vb.1 - va.1) * inverse
            let end = Int(min(Int64(n), b - start))
            let first = Float(t - a)
            pieces.append(GainPiece(start: f, count: end - f, left: va.0 + stepL * first, leftStep: stepL,
                                    right: va.1 + stepR * first, rightStep: stepR))
            f = max(end, f + 1)
        }
    }

    /// Applies this block's fader lane and mute lane to `buffers` in place (the frames from
    /// timeline frame `start`), unless a hand holds them (`touched`: the strip's own glide
    /// carries the fader then), and leaves the pan's two sides in ``panPieces``: from the pan
    /// lane, or `panGains` held when there is none or a hand holds it.
    ///
    /// Audio thread: no allocation, no locks.
    func applyStrip(to buffers: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, from start: Int64,
                    frameCount n: Int, panGains: (Float, Float), touched: MixerControls.Touch = []) {
        if let gain, !touched.contains(.gain) {
            let segment = gainSegment
            StripAutomation.fill(gainPieces, frameCount: n, from: start, segment: segment, lane: gain, cache: caches) {
                let a = Float(LaneCurve.amplitude(segment, gain, at: $0))
                return (a, a)
            }
            for c in 0..<channelCount { gainPieces.scale(buffers[c], side: 0) }
        }
        if let mute, !touched.contains(.mute) {
            // A mute steps where its point is: silence over the runs it holds.
            let segment = muteSegment
            var f = 0
            while f < n {
                let t = start + Int64(f)
                let next = LaneCurve.corners(segment, mute, around: t).after
                let end = next == .max ? n : Int(min(Int64(n), max(next - start, Int64(f + 1))))
                if LaneCurve.value(segment, mute, at: t) >= 0.5 {
                    for c in 0..<channelCount { buffers[c].advanced(by: f).update(repeating: 0, count: end - f) }
                }
                f = end
            }
        }
        if let pan, !touched.contains(.pan) {
            let segment = panSegment
            StripAutomation.fill(panPieces, frameCount: n, from: start, segment: segment, lane: pan, cache: caches + 1) {
                let pan = LaneCurve.value(segment, pan, at: $0)
                if channelCount == 1 { return PanTable.mono(pan: pan, table: panTable) }
                let g = PanLaw.stereo(pan: pan)
                return (Float(g.left), Float(g.right))
            }
        } else {
            panPieces.hold(left: panGains.0, right: panGains.1, frameCount: n)
        }
    }

    /// Send `index`'s pieces (after ``fillSend(_:from:frameCount:left:right:)`` said it has a lane).
    ///
    /// Audio thread: loads.
    @inline(__always)
    func sendPieces(_ index: Int) -> GainPieces {
        let slot = index >= 0 && index < sendCount ? sendPieceSlot[index] : -1
        return slot <= 0 ? firstSendPieces : otherSendPieces[slot - 1]
    }

    /// Send `index`'s level lane as pieces into ``sendPieces(_:)`` (× `left`/`right`, the
    /// send's pan); false when the send has no lane.
    ///
    /// Audio thread: no allocation, no locks.
    func fillSend(_ index: Int, from start: Int64, frameCount n: Int, left: Float, right: Float) -> Bool {
        guard index >= 0 && index < sendCount, let lane = sendLanes[index] else { return false }
        let sendPieces = self.sendPieces(index)
        let segment = lane._withUnsafeGuaranteedRef { $0.segment }
        StripAutomation.fill(sendPieces, frameCount: n, from: start, segment: segment, lane: lane, cache: sendCaches + index) {
            let a = Float(LaneCurve.amplitude(segment, lane, at: $0))
            return (a, a)
        }
        // The pan applied after: the anchors kept for the next block stay the lane's own.
        for k in 0..<sendPieces.count {
            var p = sendPieces[k]
            p.scale(left: left, right: right)
            sendPieces[k] = p
        }
        return true
    }
}
