import CMixKernels
import CPrefetch
import TapedeckDSP

extension PlaybackStrip {
    /// The fader (with mute and solo: `audible`) and the two pan gains this strip glides to,
    /// as ``mixGlide`` holds them (x fader, y left, z right).
    ///
    /// Audio thread: relaxed loads, arithmetic.
    @inline(__always)
    func mixTarget(audible: Bool) -> SIMD4<Float> {
        let pan = controls.pan
        // The pan law's cosine and sine only when the pan moved (they were 1–2 % of a
        // 256-track period, every period).
        if pan != panGains.pan {
            let g = PanLaw.gains(channelCount: channelCount, pan: Double(pan))
            panGains = (pan, Float(g.left), Float(g.right))
        }
        return SIMD4(audible ? controls.gain : 0, panGains.left, panGains.right, 0)
    }

    /// Whether the fused pass may mix this strip: nothing between its ring and its fader (no
    /// chain, no MIDI for one), one or two channels, and its own material playing (no
    /// fallback still covering for it).
    ///
    /// Audio thread: relaxed loads.
    var mixesDirect: Bool {
        !isBus && chain == nil && channelCount <= 2 && midi.currentPlaylist() == nil && handedOver.load(ordering: .relaxed)
    }

    /// Mixes `frameCount` frames of this strip's material from sequence `seq` on onto `bus`
    /// (two channels) in one pass over the ring's memory: fader, the post-fader meter and pan
    /// as ``render(frameCount:rolling:seq:transport:monitor:monitorChannels:midi:)`` then
    /// fader, meter and pan over the strip's buffers would (the same arithmetic, sample for
    /// sample), the gains gliding from `start` to `end` (x fader, y left, z right) over the
    /// first `rampFrames` and holding `end` after. Only for ``mixesDirect``. Returns the
    /// underrun frames.
    ///
    /// Audio thread: no allocation, no locks.
    func mixDirect(onto bus: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int, seq: Int64,
                   start: SIMD4<Float>, end: SIMD4<Float>, rampFrames: Int) -> Int {
        let ramp = max(rampFrames, 1)
        var sink = StripMixSink(left: bus[0], right: bus[1], channelCount: channelCount, rampFrames: rampFrames,
                                fader: StripMixSink.Glide(fader: start.x, to: end.x, over: ramp),
                                panLeft: StripMixSink.Glide(pan: start.y, to: end.y, over: ramp),
                                panRight: StripMixSink.Glide(pan: start.z, to: end.z, over: ramp))
        let missing = voice.pull(into: &sink, frameCount: n, seq: seq)
        if missing > 0 { underrunFrames.add(Int64(missing), ordering: .relaxed) }
        let levels = sink.levels()
        meter.add(peaks: levels.peaks, squares: levels.squares, frameCount: n)
        return missing
    }
}

/// The fused mixing pass of a strip without a chain, as a ``FrameSink``: each frame read from
/// the ring (interleaved, mono or stereo) is multiplied by the fader, measured for the meter
/// (peak and sum of squares per channel) and added × the pan gains onto the bus — one read
/// of the ring's memory where the strip's path takes four passes over its buffers (copy out,
/// fader, meter, pan). At 32× the mix reads 8 192 frames of every track a period, and those
/// passes were most of the cost (measured with `perf`: the copy out of the ring 12 %, the
/// meter's peak 7 % of all CPU in `bench speed`).
///
/// The arithmetic is that of ``MixKernels/ramp(_:frameCount:from:to:)``,
/// ``MixKernels/accumulate(_:into:frameCount:startGain:endGain:)`` and the meter's kernels,
/// element for element, so the bus gets the same bits as through the strip's buffers.
struct StripMixSink: FrameSink {
    /// A gain over the request: gliding (frame f gets `start + step × (f + lead)`) over
    /// frames `0..<rampFrames`, `end` after. A pan gain held at 0 leaves its side of the bus
    /// alone, as the accumulate kernel does.
    struct Glide {
        let start: Float
        let end: Float
        let step: Float
        /// 1 for the fader (its ramp reaches the target on the block's last frame), 0 for pan.
        let lead: Float

        /// The fader gliding from `from` to `to` over `frames` (``MixKernels/ramp(_:frameCount:from:to:)``).
        init(fader from: Float, to: Float, over frames: Int) {
            start = from; end = to; lead = 1
            step = from == to ? 0 : (to - from) / Float(max(frames, 1))
        }

        /// A pan gain gliding from `from` to `to` over `frames` (``MixKernels/accumulate(_:into:frameCount:startGain:endGain:)``).
        init(pan from: Float, to: Float, over frames: Int) {
            start = from; end = to; lead = 0
            step = from == to ? 0 : (to - from) / Float(max(frames, 1))
        }

        var glides: Bool { start != end }
    }

    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    /// Channels of the ring's frames (1 or 2).
    let channelCount: Int
    let rampFrames: Int
    let fader: Glide
    let panLeft: Glide
    let panRight: Glide
    private var peakLanes = (SIMD8<Float>(), SIMD8<Float>())
    private var peakTail: (Float, Float) = (0, 0)
    private var squareLanes = (SIMD8<Float>(), SIMD8<Float>())
    private var squareTail: (Float, Float) = (0, 0)

    init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, channelCount: Int, rampFrames: Int,
         fader: Glide, panLeft: Glide, panRight: Glide) {
        self.left = left
        self.right = right
        self.channelCount = channelCount
        self.rampFrames = rampFrames
        self.fader = fader
        self.panLeft = panLeft
        self.panRight = panRight
    }

    private static let laneIndex = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
    /// Whether the eight-frame steps run as AVX2 (`CMixKernels`, where the CPU has it: `bench
    /// speed` at 32× varispeed, almost all mix, p50 21–24 → 17.5–18 % of a period here, side
    /// by side) or as this file's Swift loop (baseline SSE2); both give the same bits. Tests
    /// switch it to check both. Read on the audio thread.
    nonisolated(unsafe) static var usesAVX2 = td_mix_has_avx2() == 1
    /// How far ahead of the loads the ring's memory is fetched (`bench speed` at 32×: varispeed
    /// p50 30 % → 26 % of a period; 1, 2, 4 and 8 KiB ahead measured alike).
    static let prefetchBytes = 2048

    /// Silence adds nothing to the bus or the meter. Audio thread: nothing.
    @inline(__always)
    mutating func silence(at offset: Int, count: Int) {}

    /// Audio thread: no allocation, no locks.
    @inline(__always)
    mutating func frames(_ source: UnsafePointer<Float>, at offset: Int, count: Int) {
        // The gliding part, then the held part, each with its gains fixed.
        let gliding = max(0, min(count, rampFrames - offset))
        if gliding > 0 {
            span(source, at: offset, count: gliding, fader: fader, left: panLeft, right: panRight)
        }
        if count > gliding {
            let held = (Glide(fader: fader.end, to: fader.end, over: 1), Glide(pan: panLeft.end, to: panLeft.end, over: 1),
                        Glide(pan: panRight.end, to: panRight.end, over: 1))
            span(source + gliding * channelCount, at: offset + gliding, count: count - gliding,
                 fader: held.0, left: held.1, right: held.2)
        }
    }

    /// The gain vector for frames `f…f+7`. Audio thread: arithmetic.
    @inline(__always)
    private static func gains(_ g: Glide, _ f: Int) -> SIMD8<Float> {
        guard g.glides else { return SIMD8(repeating: g.start) }
        return SIMD8(repeating: g.start) + (SIMD8(repeating: Float(f) + g.lead) + laneIndex) * g.step
    }

    /// The gain for frame `f`. Audio thread: arithmetic.
    @inline(__always)
    private static func gain(_ g: Glide, _ f: Int) -> Float {
        g.glides ? g.start + g.step * (Float(f) + g.lead) : g.start
    }

    /// Largest of `lanes` and |`v`| lane by lane, NaNs passed over (a NaN compares false),
    /// as ``MixKernels/peak(_:frameCount:)`` finds it. This compare-and-replace compiles to
    /// one `maxps` per four lanes (checked in the assembly), where the integer form there
    /// takes seven instructions on x86-64's baseline SSE2, which has no 32-bit integer max.
    ///
    /// Audio thread: arithmetic.
    @inline(__always)
    private static func raise(_ lanes: inout SIMD8<Float>, _ v: SIMD8<Float>) {
        let magnitude = unsafeBitCast(unsafeBitCast(v, to: SIMD8<UInt32>.self) & 0x7FFF_FFFF, to: SIMD8<Float>.self)
        lanes = lanes.replacing(with: magnitude, where: magnitude .> lanes)
    }

    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private mutating func span(_ source: UnsafePointer<Float>, at offset: Int, count: Int, fader: Glide, left panLeft: Glide,
                               right panRight: Glide) {
        let leftOn = panLeft.glides || panLeft.start != 0
        let rightOn = panRight.glides || panRight.start != 0
        let raw = UnsafeRawPointer(source)
        let leftBus = UnsafeMutableRawPointer(left + offset), rightBus = UnsafeMutableRawPointer(right + offset)
        let stereo = channelCount == 2
        // A fader held at unity multiplies by 1: the same bits, skipped.
        let scales = fader.glides || fader.start != 1
        // The meter's sums in locals: the bus stores could alias `self`, which would keep
        // them in memory through every step.
        var peak0 = peakLanes.0, peak1 = peakLanes.1, squares0 = squareLanes.0, squares1 = squareLanes.1
        var j = 0
        if StripMixSink.usesAVX2 && count >= 8 {
            let whole = count & ~7
            var levels = td_mix_levels()
            withUnsafeMutableBytes(of: &levels) { raw in
                raw.storeBytes(of: peak0, toByteOffset: 0, as: SIMD8<Float>.self)
                raw.storeBytes(of: peak1, toByteOffset: 32, as: SIMD8<Float>.self)
                raw.storeBytes(of: squares0, toByteOffset: 64, as: SIMD8<Float>.self)
                raw.storeBytes(of: squares1, toByteOffset: 96, as: SIMD8<Float>.self)
            }
            func glide(_ g: Glide) -> td_mix_glide { td_mix_glide(start: g.start, step: g.step, lead: g.lead, glides: g.glides ? 1 : 0) }
            td_mix_span_avx2(source, stereo ? 1 : 0, left, right, offset, whole, glide(fader), glide(panLeft), glide(panRight),
                             leftOn ? 1 : 0, rightOn ? 1 : 0, scales ? 1 : 0, StripMixSink.prefetchBytes, &levels)
            withUnsafeBytes(of: &levels) { raw in
                peak0 = raw.loadUnaligned(fromByteOffset: 0, as: SIMD8<Float>.self)
                peak1 = raw.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
                squares0 = raw.loadUnaligned(fromByteOffset: 64, as: SIMD8<Float>.self)
                squares1 = raw.loadUnaligned(fromByteOffset: 96, as: SIMD8<Float>.self)
            }
            j = whole
        }
        while j + 8 <= count {
            let f = offset + j
            var l: SIMD8<Float>, r: SIMD8<Float>
            // Ahead of the loads, so they find the ring's memory in cache (one line a step in stereo).
            td_prefetch(raw + j * 4 * channelCount + StripMixSink.prefetchBytes)
            if stereo {
                let both = raw.loadUnaligned(fromByteOffset: j * 8, as: SIMD16<Float>.self)
                l = both.evenHalf
                r = both.oddHalf
            } else {
                l = raw.loadUnaligned(fromByteOffset: j * 4, as: SIMD8<Float>.self)
                r = l
            }
            if scales {
                let g = StripMixSink.gains(fader, f)
                l *= g
                r *= g
            }
            StripMixSink.raise(&peak0, l)
            squares0 += l * l
            if stereo {
                StripMixSink.raise(&peak1, r)
                squares1 += r * r
            }
            if leftOn {
                let sum = leftBus.loadUnaligned(fromByteOffset: j * 4, as: SIMD8<Float>.self) + l * StripMixSink.gains(panLeft, f)
                leftBus.storeBytes(of: sum, toByteOffset: j * 4, as: SIMD8<Float>.self)
            }
            if rightOn {
                let sum = rightBus.loadUnaligned(fromByteOffset: j * 4, as: SIMD8<Float>.self) + r * StripMixSink.gains(panRight, f)
                rightBus.storeBytes(of: sum, toByteOffset: j * 4, as: SIMD8<Float>.self)
            }
            j += 8
        }
        peakLanes = (peak0, peak1)
        squareLanes = (squares0, squares1)
        while j < count {
            let f = offset + j
            let g = StripMixSink.gain(fader, f)
            let l = source[j * channelCount] * g
            let r = stereo ? source[j * 2 + 1] * g : l
            if abs(l) > peakTail.0 { peakTail.0 = abs(l) }
            squareTail.0 += l * l
            if stereo {
                if abs(r) > peakTail.1 { peakTail.1 = abs(r) }
                squareTail.1 += r * r
            }
            if leftOn { left[f] += l * StripMixSink.gain(panLeft, f) }
            if rightOn { right[f] += r * StripMixSink.gain(panRight, f) }
            j += 1
        }
    }

    /// Per channel, the peak and the sum of squares of everything mixed so far.
    ///
    /// Audio thread: arithmetic.
    func levels() -> (peaks: (Float, Float), squares: (Double, Double)) {
        func peak(_ lanes: SIMD8<Float>, _ tail: Float) -> Float { max(lanes.max(), tail) }
        return ((peak(peakLanes.0, peakTail.0), peak(peakLanes.1, peakTail.1)),
                (Double(squareLanes.0.sum()) + Double(squareTail.0), Double(squareLanes.1.sum()) + Double(squareTail.1)))
    }
}
