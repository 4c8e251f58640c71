import TapedeckCore
import TapedeckDSP

/// The walk through the strips: every strip in render order (tracks, then each bus once all
/// that feeds it is summed), and for each its pre-fader sends, its fader with mute and solo,
/// its meter, its post-fader sends and its output — onto a bus, the master, or device
/// outputs — each path held back by its delay compensation. Live playback (at the period's
/// frames) and the time-pitch path (at timeline frames, in blocks) walk the same way; an
/// export is live playback freewheeled, so all three share this.
extension RenderCore {
    /// What a walk reaches: a block's master and device outputs, and whether buses and sends
    /// are in it (not for live strips while the mix is stretched: they are heard at device
    /// rate, straight to the master, while the buses run at timeline rate).
    struct StripTargets {
        /// The master bus's two channels for this block.
        var master: UnsafePointer<UnsafeMutablePointer<Float>>
        /// Device outputs, or nil when this walk does not reach them (timeline rate).
        var devices: UnsafePointer<UnsafeMutablePointer<Float>>?
        /// How many ``devices`` there are (a path to one past them is not heard).
        var deviceCount: Int
        /// Whether sends and bus outputs are followed (false: outputs to buses go to the master).
        var throughBuses: Bool
        /// The timeline frame of the block's first frame (automation reads its lanes from there).
        var timelineFrame: Int64
    }

    /// This cycle's audibility of every strip from mutes and solos along the routing: with any
    /// strip soloed, a strip is heard when it is soloed, solo-safe, feeds a soloed strip or is
    /// fed by one; a muted strip never is.
    ///
    /// Audio thread: no allocation, no locks.
    func updateAudibility(_ g: Graph) {
        let r = g.routes
        var anySolo = false
        for i in 0..<g.trackCount where !anySolo { anySolo = g.stripTable[i]._withUnsafeGuaranteedRef { $0.controls.solo } }
        soloedThisCycle = anySolo
        guard anySolo else {
            for i in 0..<g.trackCount { r.audible[i] = !g.stripTable[i]._withUnsafeGuaranteedRef { $0.controls.mute } }
            return
        }
        for i in 0..<g.trackCount { r.soloFlags[i] = g.stripTable[i]._withUnsafeGuaranteedRef { $0.controls.solo } }
        r.markSoloPaths()
        for i in 0..<g.trackCount {
            let (mute, solo) = g.stripTable[i]._withUnsafeGuaranteedRef { ($0.controls.mute, $0.controls.solo) }
            r.audible[i] = !mute && (solo || r.soloSafe[i] || r.isOnSoloPath(i))
        }
    }

    /// A locate: what the delays hold and the buses' chains remember belongs to the old place.
    /// (Stopping keeps them, so a bus's reverb rings out as a track's does.)
    ///
    /// Audio thread: no allocation, no locks (writes the delays' frames).
    func flushRouting(_ g: Graph) {
        let r = g.routes
        for p in 0..<r.totalPaths {
            r.paths[p].state._withUnsafeGuaranteedRef { state in
                state.delay?.reset()
                state.glide.settle()
            }
        }
        for i in 0..<g.trackCount where r.isBus[i] { g.stripTable[i]._withUnsafeGuaranteedRef { $0.chain?.reset() } }
    }

    /// Clears every bus for a block of `frameCount` frames.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func clearBuses(_ g: Graph, frameCount n: Int) {
        let r = g.routes
        for i in 0..<g.trackCount where r.isBus[i] { g.stripTable[i]._withUnsafeGuaranteedRef { $0.clearBus(frameCount: n) } }
    }

    /// Strip `i`'s rendered pre-fader signal (in its buffers) on its way: pre-fader sends,
    /// fader with mute and solo, meter, stem tap, post-fader sends, output. Each path's gains
    /// are kept in ``RouteTable/gains``; with `lands`, each path is added into its
    /// destination at once (one thread walking the strips in order), otherwise the
    /// destinations gather them later in the same order (``landIncoming(_:bus:frameCount:scratch:)``,
    /// ``landFinal(_:frameCount:targets:scratch:)``) and a strip with pre-fader sends keeps
    /// its pre-fader signal for them (``RouteTable/preFader``).
    ///
    /// Audio thread, or a worker for its strip: no allocation, no locks.
    func routeStrip(_ g: Graph, strip i: Int, frameCount n: Int, targets: StripTargets, lands: Bool = true,
                    scratch: PathScratch? = nil) {
        let r = g.routes
        let scratch = scratch ?? PathScratch(channels: pathScratch, devices: deviceTargets)
        let first = r.first[i], count = r.pathCount[i]
        g.stripTable[i]._withUnsafeGuaranteedRef { strip in
            let source = UnsafePointer(strip.buffers)
            if let taps = stemTaps, taps.preFader, let pair = taps.pair(track: i) {
                for c in 0..<strip.channelCount { pair[c].update(from: source[c], count: n) }
            }
            if targets.throughBuses {
                if !lands, let kept = r.preFader[i] {
                    for c in 0..<strip.channelCount { kept[c].update(from: source[c], count: n) }
                }
                for p in first..<(first + count) where r.paths[p].kind == .preFaderSend {
                    r.gains[p] = sendGains(g, strip: i, path: p, frameCount: n, targets: targets)
                    if lands { landSend(g, path: p, from: source, frameCount: n, scratch: scratch) }
                }
            }
            let automation = strip.automation
            let automated = automation?._withUnsafeGuaranteedRef { $0.movesStrip } ?? false
            let (start, end, k): (SIMD4<Float>, SIMD4<Float>, Int)
            if automated, let automation {
                // The fader, mute and pan from their lanes, frame by frame; mute and solo along
                // the routing still glide (x), and the pan the lanes leave alone holds.
                let target = strip.mixTarget(audible: r.audible[i])
                let touched = strip.controls.touched
                let hasGainLane = automation._withUnsafeGuaranteedRef { $0.gain != nil }
                let gainLane = hasGainLane && !touched.contains(.gain)
                if !hasGainLane {
                    // No lane to go back to (it went while held): nothing to glide from.
                    strip.gainWasTouched = false
                } else if gainLane == strip.gainWasTouched {
                    // A hand takes hold of the fader's lane or lets go: the gain glides from the
                    // lane's value to the hand's, or back (x carries what the lane does not).
                    let laneGain = automation._withUnsafeGuaranteedRef { a in
                        a.gain.map { lane in lane._withUnsafeGuaranteedRef { Float(Decibels.toLinear($0.value(at: targets.timelineFrame))) } } ?? 1
                    }
                    let now = strip.mixGlide.current
                    if !now.x.isNaN {
                        let x: Float = gainLane ? (laneGain > 0 ? now.x / laneGain : 1) : now.x * laneGain
                        strip.mixGlide.stand(at: SIMD4(x.isFinite ? x : 1, now.y, now.z, 0))
                    }
                    strip.gainWasTouched = !gainLane
                }
                // A fader lane replaces the fader; without one (or held by hand) the fader
                // glides as ever.
                strip.mixGlide.aim(SIMD4(gainLane ? (r.audible[i] ? 1 : 0) : target.x, target.y, target.z, 0))
                (start, end, k) = strip.mixGlide.advance(frameCount: n)
                automation._withUnsafeGuaranteedRef { a in
                    a.applyStrip(to: UnsafePointer(strip.buffers), channelCount: strip.channelCount, from: targets.timelineFrame,
                                 frameCount: n, panGains: (end.y, end.z), touched: touched)
                }
                for c in 0..<strip.channelCount { RenderCore.glide(strip.buffers[c], frameCount: n, from: start.x, to: end.x, over: k) }
            } else {
                strip.mixGlide.aim(strip.mixTarget(audible: r.audible[i]))
                (start, end, k) = strip.mixGlide.advance(frameCount: n)
                for c in 0..<strip.channelCount { RenderCore.glide(strip.buffers[c], frameCount: n, from: start.x, to: end.x, over: k) }
            }
            if !rendersOffline { strip.meter.measure(strip.buffers, available: strip.channelCount, frameCount: n) }
            if let taps = stemTaps, !taps.preFader, let stem = taps.pair(track: i) {
                stem[0].update(repeating: 0, count: n)
                stem[1].update(repeating: 0, count: n)
                let second = strip.channelCount > 1 ? source[1] : source[0]
                if automated, let automation {
                    automation._withUnsafeGuaranteedRef { a in
                        a.panPieces.accumulate(source[0], into: stem[0], side: 0)
                        a.panPieces.accumulate(second, into: stem[1], side: 1)
                    }
                } else {
                    RenderCore.accumulate(source[0], into: stem[0], frameCount: n, from: start.y, to: end.y, over: k)
                    RenderCore.accumulate(second, into: stem[1], frameCount: n, from: start.z, to: end.z, over: k)
                }
                stemTaps?.delay(track: i, frameCount: n)
            }
            if targets.throughBuses {
                for p in first..<(first + count) where r.paths[p].kind == .postFaderSend {
                    r.gains[p] = sendGains(g, strip: i, path: p, frameCount: n, targets: targets)
                    if lands { landSend(g, path: p, from: source, frameCount: n, scratch: scratch) }
                }
            }
            // The output: the strip's pan (its glide, or the pan lane's pieces); into one
            // channel, the pair folded at half each.
            let p = first + count - 1
            let own = automated ? automation.map { a in PathGains.pieces(a._withUnsafeGuaranteedRef { $0.panPieces }) } ?? .glide((start.y, start.z, end.y, end.z), k)
                : .glide((start.y, start.z, end.y, end.z), k)
            let path = r.paths[p]
            if path.targetChannels == 1 {
                let fold: Float = path.sourceChannels == 2 ? 0.5 : 1
                r.gains[p] = .glide((fold, fold, fold, fold), 0)
            } else {
                r.gains[p] = own
            }
            if lands { landOutput(g, strip: i, path: p, from: source, frameCount: n, own: own, targets: targets, scratch: scratch) }
        }
    }

    /// Where a path lands a block: the walk's scratch (a delayed path is gathered there before
    /// its delay) and a table of two device outputs. One per thread.
    struct PathScratch {
        /// Two channels of a strip block.
        var channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
        /// Two pointers, aimed at a path's pair of device outputs.
        var devices: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    }

    /// A send's gains this block: its level and pan (gliding) or its level lane's pieces, the
    /// hand's level while one holds it.
    ///
    /// Audio thread, or a worker for the send's strip: no allocation, no locks.
    private func sendGains(_ g: Graph, strip i: Int, path p: Int, frameCount n: Int, targets: StripTargets) -> PathGains {
        let path = g.routes.paths[p]
        return path.state._withUnsafeGuaranteedRef { state -> PathGains in
            let level = state.controls.level
            // The send's pan as two gains (a mono bus takes a pair folded at half each).
            var panL: Float, panR: Float
            if path.targetChannels == 2 {
                let pan = state.controls.pan
                if pan != state.panGains.pan {
                    let g = PanLaw.gains(channelCount: path.sourceChannels, pan: Double(pan))
                    state.panGains = (pan, Float(g.left), Float(g.right))
                }
                (panL, panR) = (state.panGains.left, state.panGains.right)
            } else {
                panL = path.sourceChannels == 2 ? 0.5 : 1
                panR = panL
            }
            // A send with a level lane: the lane's level frame by frame, at the send's pan.
            if let automation = g.stripTable[i]._withUnsafeGuaranteedRef({ $0.automation }),
               automation._withUnsafeGuaranteedRef({ $0.fillSend(path.sendIndex, from: targets.timelineFrame, frameCount: n,
                                                                  left: panL, right: panR) }) {
                let pieces = automation._withUnsafeGuaranteedRef { $0.sendPieces(path.sendIndex) }
                if state.controls.isTouched {
                    // A hand holds the send (its lane written in touch or latch): the level set
                    // by hand is heard, gliding from the lane's where it takes hold.
                    if !state.handHeld, pieces.count > 0 {
                        state.glide.stand(at: SIMD4(pieces[0].left, pieces[0].right, 0, 0))
                        state.handHeld = true
                    }
                    state.returnFrames = 0
                } else if state.handHeld || state.returnFrames > 0 {
                    // Let go: from the hand's level into the lane's over a glide's length (a
                    // crossfade of the two, so it ends on the lane however the lane moves),
                    // then the lane.
                    if state.handHeld {
                        state.handHeld = false
                        state.returnFrames = GainGlide.lengthFrames
                        state.handGains = SIMD2(state.glide.current.x, state.glide.current.y)
                    }
                    let last = pieces[max(pieces.count - 1, 0)]
                    let length = Float(GainGlide.lengthFrames)
                    let p = min(1, (length - Float(state.returnFrames) + Float(n)) / length)
                    let lane = SIMD2(last.leftEnd, last.rightEnd)
                    let end = state.handGains * (1 - p) + lane * p
                    let start = state.glide.current
                    state.glide.stand(at: SIMD4(end.x, end.y, 0, 0))
                    state.returnFrames -= n
                    return .glide((start.x, start.y, end.x, end.y), n)
                } else {
                    // The lane; the glide follows it, for a hand that takes hold next.
                    let last = pieces[max(pieces.count - 1, 0)]
                    state.glide.stand(at: SIMD4(last.leftEnd, last.rightEnd, 0, 0))
                    return .pieces(pieces)
                }
            }
            state.glide.aim(SIMD4(level * panL, level * panR, 0, 0))
            let (start, end, k) = state.glide.advance(frameCount: n)
            return .glide((start.x, start.y, end.x, end.y), k)
        }
    }

    /// A send's block, `source` × its gains (``RouteTable/gains``), into its bus, held back by
    /// its delay.
    ///
    /// Audio thread, or the worker that lands it: no allocation, no locks.
    @inline(__always)
    func landSend(_ g: Graph, path p: Int, from source: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int,
                  scratch: PathScratch) {
        let path = g.routes.paths[p]
        let destination = g.stripTable[path.target]._withUnsafeGuaranteedRef { UnsafePointer($0.buffers) }
        path.state._withUnsafeGuaranteedRef { state in
            land(path, state: state, from: source, into: destination, frameCount: n, gains: g.routes.gains[p], scratch: scratch)
        }
    }

    /// A strip's output, post-fader, with its gains (``RouteTable/gains``): onto the master or
    /// a bus, or to device outputs, held back by its delay. Outputs to buses go to the master
    /// with the strip's own pan (`own`) when the walk does not reach buses; outputs to devices
    /// are not heard when it does not reach them.
    ///
    /// Audio thread, or the worker that lands it: no allocation, no locks.
    func landOutput(_ g: Graph, strip i: Int, path p: Int, from source: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int,
                    own: PathGains, targets: StripTargets, scratch: PathScratch) {
        let path = g.routes.paths[p]
        let gains = g.routes.gains[p]
        path.state._withUnsafeGuaranteedRef { state in
            switch path.target {
            case RoutePath.device:
                guard let devices = targets.devices, path.deviceLeft < targets.deviceCount,
                      path.deviceRight < targets.deviceCount else { return }
                scratch.devices[0] = devices[path.deviceLeft]
                scratch.devices[1] = devices[max(path.deviceRight, path.deviceLeft)]
                land(path, state: state, from: source, into: UnsafePointer(scratch.devices), frameCount: n, gains: gains, scratch: scratch)
            case RoutePath.master:
                guard isolatedStrip < 0 || isolatedStrip == i else { return }
                land(path, state: state, from: source, into: targets.master, frameCount: n, gains: gains, scratch: scratch)
            default:
                if targets.throughBuses {
                    let destination = g.stripTable[path.target]._withUnsafeGuaranteedRef { UnsafePointer($0.buffers) }
                    land(path, state: state, from: source, into: destination, frameCount: n, gains: gains, scratch: scratch)
                } else {
                    // Heard at once, beside the stretched buses: the strip's own pan onto the master.
                    let second = path.sourceChannels > 1 ? source[1] : source[0]
                    RenderCore.accumulate(source[0], into: targets.master[0], frameCount: n, gains: own, side: 0)
                    RenderCore.accumulate(second, into: targets.master[1], frameCount: n, gains: own, side: 1)
                }
            }
        }
    }

    /// Adds `source` × `gains` into `destination`, through the path's delay when it has one
    /// (gathered in `scratch` first).
    ///
    /// Audio thread, or a worker: no allocation, no locks.
    @inline(__always)
    private func land(_ path: RoutePath, state: PathState, from source: UnsafePointer<UnsafeMutablePointer<Float>>,
                      into destination: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int, gains: PathGains,
                      scratch: PathScratch) {
        let second = path.sourceChannels > 1 ? source[1] : source[0]
        let delayed = state.delay != nil
        let to = delayed ? UnsafePointer(scratch.channels) : destination
        if delayed { for c in 0..<path.targetChannels { scratch.channels[c].update(repeating: 0, count: n) } }
        if path.targetChannels == 2 {
            RenderCore.accumulate(source[0], into: to[0], frameCount: n, gains: gains, side: 0)
            RenderCore.accumulate(second, into: to[1], frameCount: n, gains: gains, side: 1)
        } else {
            RenderCore.accumulate(source[0], into: to[0], frameCount: n, gains: gains, side: 0)
            if path.sourceChannels > 1 { RenderCore.accumulate(source[1], into: to[0], frameCount: n, gains: gains, side: 1) }
        }
        guard let delay = state.delay else { return }
        delay.process(UnsafePointer(scratch.channels), channelCount: path.targetChannels, frameCount: n)
        for c in 0..<path.targetChannels {
            MixKernels.accumulate(scratch.channels[c], into: destination[c], frameCount: n, startGain: 1, endGain: 1)
        }
    }

    /// Adds `source` × side `side` (0 left, 1 right) of `gains` into `destination`.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func accumulate(_ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>, frameCount n: Int,
                           gains: PathGains, side: Int) {
        switch gains {
        case .glide(let g, let k):
            if side == 0 { accumulate(source, into: destination, frameCount: n, from: g.0, to: g.2, over: k) } else {
                accumulate(source, into: destination, frameCount: n, from: g.1, to: g.3, over: k)
            }
        case .pieces(let pieces):
            pieces.accumulate(source, into: destination, side: side)
        }
    }

    /// Multiplies `buffer` in place by a gain gliding from `from` to `to` over the first `k`
    /// frames (as ``MixKernels/ramp(_:frameCount:from:to:)``) and holding `to` after.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func glide(_ buffer: UnsafeMutablePointer<Float>, frameCount n: Int, from: Float, to: Float, over k: Int) {
        if k > 0 { MixKernels.ramp(buffer, frameCount: k, from: from, to: to) }
        if n > k && to != 1 { MixKernels.scale(buffer + k, frameCount: n - k, gain: to) }
    }

    /// Adds `source` × a gain gliding from `from` to `to` over the first `k` frames (as
    /// ``MixKernels/accumulate(_:into:frameCount:startGain:endGain:)``) and holding `to` after.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func accumulate(_ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>, frameCount n: Int,
                           from: Float, to: Float, over k: Int) {
        if k > 0 { MixKernels.accumulate(source, into: destination, frameCount: k, startGain: from, endGain: to) }
        if n > k { MixKernels.accumulate(source + k, into: destination + k, frameCount: n - k, startGain: to, endGain: to) }
    }
}

/// The gains a path lands with: gliding from one pair to another over the block's first
/// frames (the mixer's moves), or in straight pieces (automation).
enum PathGains {
    /// Left from .0 to .2, right from .1 to .3, over the first `Int` frames, then held.
    case glide((Float, Float, Float, Float), Int)
    /// Automation's pieces, both sides.
    case pieces(GainPieces)
}

extension RouteTable {
    /// Marks, for this cycle, the strips fed by a soloed strip (forward along the order) and
    /// those feeding one (backward), from ``soloFlags`` as the caller filled them.
    ///
    /// Audio thread: no allocation, no locks.
    func markSoloPaths() {
        for i in 0..<stripCount {
            fedFlags[i] = false
            feedsFlags[i] = false
        }
        for k in 0..<stripCount {
            let i = order[k]
            guard soloFlags[i] || fedFlags[i] else { continue }
            for p in first[i]..<(first[i] + pathCount[i]) where paths[p].target >= 0 { fedFlags[paths[p].target] = true }
        }
        var k = stripCount - 1
        while k >= 0 {
            let i = order[k]
            for p in first[i]..<(first[i] + pathCount[i]) {
                let t = paths[p].target
                if t >= 0 && (soloFlags[t] || feedsFlags[t]) { feedsFlags[i] = true }
            }
            k -= 1
        }
    }

    /// Whether strip `i` is fed by or feeds a soloed strip this cycle (after ``markSoloPaths(_:)``).
    ///
    /// Audio thread: loads.
    @inline(__always)
    func isOnSoloPath(_ i: Int) -> Bool { fedFlags[i] || feedsFlags[i] }
}
