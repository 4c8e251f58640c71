import Foundation

/// Small building blocks the nodes share: preallocated storage, ramps, biquads, noise.

/// A fixed block of `T` allocated off the audio thread, read and written on it without ARC
/// or bounds checks (nodes index it only below `count`).
struct UnsafeStorage<T: BitwiseCopyable> {
    private(set) var pointer: UnsafeMutablePointer<T>?
    private(set) var count = 0
    private var fromCalloc = false
    /// Bytes mapped with `mmap` (``allocateLazilyZeroed(_:)``'s huge pages), else 0.
    private var mappedBytes = 0

    /// Frees any old storage and allocates `count` elements set to `fill`. Off the audio thread.
    mutating func allocate(_ count: Int, fill: T) {
        free()
        let p = UnsafeMutablePointer<T>.allocate(capacity: max(count, 1))
        p.initialize(repeating: fill, count: max(count, 1))
        pointer = p
        self.count = count
    }

    /// Releases the storage. Off the audio thread.
    mutating func free() {
        if mappedBytes > 0 { munmap(pointer, mappedBytes) } else if fromCalloc { Foundation.free(pointer) } else { pointer?.deallocate() }
        pointer = nil
        count = 0
        fromCalloc = false
        mappedBytes = 0
    }

    /// Audio thread: sets every element to `value`.
    func fill(_ value: T) { pointer?.update(repeating: value, count: count) }

    /// Element `i`; `i` must be below `count`.
    @inline(__always) subscript(i: Int) -> T {
        get { pointer.unsafelyUnwrapped[i] }
        nonmutating set { pointer.unsafelyUnwrapped[i] = newValue }
    }
}

extension UnsafeStorage where T == Float {
    /// Frees any old storage and allocates `count` zeroed samples whose pages the kernel maps
    /// on first touch (calloc): nothing is written now, so a large delay line costs nothing
    /// until used, and then on the thread that renders. For offline rendering only — a first
    /// touch faults, which the audio thread must never do. Off the audio thread.
    ///
    /// Two megabytes or more are mapped on their own, aligned to 2 MiB and marked for huge
    /// pages (where the kernel offers them, as Debian's does on request): one fault then
    /// maps and zeroes 2 MiB, not 4 KiB. Why: an export's delay lines (4 s for each channel,
    /// 2 MiB a stereo track) faulted 4 KiB at a time as the write head first went round —
    /// 64 % of a W8 export's 7,286 page faults, every one on a rendering thread. With huge
    /// pages the export takes 2,996, and 4–11 % less CPU (medians of alternating runs with
    /// the kernel's huge pages on and off, three sets; idle: 136 against 143 ms), its wall
    /// time the same within the noise. Where the kernel has no huge page to give it maps
    /// small ones, as before. Offline only: a live line is touched whole when it is made.
    mutating func allocateLazilyZeroed(_ count: Int) {
        free()
        let huge = 2 << 20
        let bytes = max(count, 1) * MemoryLayout<Float>.stride
        if bytes >= huge {
            let length = (bytes + huge - 1) / huge * huge
            // Mapped a huge page longer, then trimmed to a 2 MiB boundary at both ends.
            if let raw = mmap(nil, length + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED {
                let address = UInt(bitPattern: raw)
                let aligned = (address + UInt(huge) - 1) / UInt(huge) * UInt(huge)
                let head = Int(aligned - address)
                if head > 0 { munmap(raw, head) }
                let start = UnsafeMutableRawPointer(bitPattern: aligned)!
                munmap(start + length, huge - head)
                _ = madvise(start, length, MADV_HUGEPAGE)
                pointer = start.bindMemory(to: Float.self, capacity: max(count, 1))
                self.count = count
                mappedBytes = length
                return
            }
        }
        guard let raw = calloc(max(count, 1), MemoryLayout<Float>.stride) else {
            allocate(count, fill: 0)
            return
        }
        pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        self.count = count
        fromCalloc = true
    }
}

/// A value moving linearly to its target over a fixed number of frames, so parameter steps
/// turn into ramps instead of clicks. When steady, callers take a constant fast path.
struct LinearRamp {
    private(set) var current: Float
    private(set) var target: Float
    private var step: Float = 0
    private(set) var remaining = 0

    init(_ value: Float) { current = value; target = value }

    /// Whether the value has arrived (no ramp in progress).
    @inline(__always) var isSteady: Bool { remaining == 0 }

    /// Starts a ramp to `newTarget` lasting `frames` (a repeated target keeps the ramp going).
    @inline(__always) mutating func setTarget(_ newTarget: Float, frames: Int) {
        guard newTarget != target else { return }
        target = newTarget
        if frames <= 0 || current == newTarget {
            current = newTarget
            remaining = 0
        } else {
            step = (newTarget - current) / Float(frames)
            remaining = frames
        }
    }

    /// Jumps to `value` without a ramp (on reset, or before the first block).
    mutating func jump(to value: Float) { current = value; target = value; remaining = 0 }

    /// Audio thread: the next frame's value.
    @inline(__always) mutating func next() -> Float {
        if remaining > 0 {
            remaining -= 1
            current = remaining == 0 ? target : current + step
        }
        return current
    }
}

/// Audio thread: `output[i] = input[i] * ramp` for `count` frames; a steady ramp becomes a
/// vectorizable constant-gain loop. Works in place.
@inline(__always)
func applyGain(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int, ramp: inout LinearRamp) {
    var i = 0
    while i < count && !ramp.isSteady {
        output[i] = input[i] * ramp.next()
        i += 1
    }
    let g = ramp.current
    if g == 1 {
        if UnsafePointer(output) != input { output.advanced(by: i).update(from: input.advanced(by: i), count: count - i) }
        return
    }
    // Eight at a time explicitly: input and output may be the same buffer, and the optimiser
    // left the plain loop scalar (measured: the gain node was 6 % of a mixdown).
    let lanes = SIMD8<Float>(repeating: g)
    while i + 8 <= count {
        let v = UnsafeRawPointer(input + i).loadUnaligned(as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(output + i).storeBytes(of: v * lanes, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count {
        output[i] = input[i] * g
        i += 1
    }
}

/// A parameter eased toward its target once per sub-block, for values (cutoff, Q, rate) that
/// feed coefficient calculations too costly to redo every frame.
struct ChunkSmoother {
    var current: Double
    var target: Double

    init(_ value: Double) { current = value; target = value }

    /// Whether `current` has reached `target`.
    var isSteady: Bool { current == target }

    /// Audio thread: moves a fraction `coefficient` of the way (geometrically when
    /// `logarithmic`, which suits frequencies) and snaps when close. Returns the new value.
    @inline(__always) mutating func advance(coefficient: Double, logarithmic: Bool) -> Double {
        if current == target { return current }
        if logarithmic && current > 0 && target > 0 {
            current *= pow(target / current, coefficient)
        } else {
            current += (target - current) * coefficient
        }
        if abs(current - target) <= 1e-5 * max(abs(target), 1e-3) { current = target }
        return current
    }
}

/// Second-order section coefficients (normalised: a0 = 1), from the RBJ Audio EQ Cookbook.
struct BiquadCoefficients {
    var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0

    /// The filter shapes of the cookbook that Tapedeck uses.
    enum Shape { case lowPass, highPass, peak, lowShelf, highShelf }

    /// Cookbook coefficients for `shape` at `frequencyHertz`, quality `q` and gain (peak, shelves).
    static func rbj(_ shape: Shape, frequencyHertz: Double, q: Double, gainDecibels: Double = 0,
                    sampleRate: Double) -> BiquadCoefficients {
        let f = min(max(frequencyHertz, 1), sampleRate * 0.499)
        let w0 = 2 * Double.pi * f / sampleRate
        let cw = cos(w0), sw = sin(w0)
        let alpha = sw / (2 * max(q, 1e-3))
        let A = pow(10, gainDecibels / 40)
        var b0, b1, b2, a0, a1, a2: Double
        switch shape {
        case .lowPass:
            b0 = (1 - cw) / 2; b1 = 1 - cw; b2 = b0
            a0 = 1 + alpha; a1 = -2 * cw; a2 = 1 - alpha
        case .highPass:
            b0 = (1 + cw) / 2; b1 = -(1 + cw); b2 = b0
            a0 = 1 + alpha; a1 = -2 * cw; a2 = 1 - alpha
        case .peak:
            b0 = 1 + alpha * A; b1 = -2 * cw; b2 = 1 - alpha * A
            a0 = 1 + alpha / A; a1 = -2 * cw; a2 = 1 - alpha / A
        case .lowShelf:
            let s = 2 * A.squareRoot() * alpha
            b0 = A * ((A + 1) - (A - 1) * cw + s); b1 = 2 * A * ((A - 1) - (A + 1) * cw)
            b2 = A * ((A + 1) - (A - 1) * cw - s)
            a0 = (A + 1) + (A - 1) * cw + s; a1 = -2 * ((A - 1) + (A + 1) * cw)
            a2 = (A + 1) + (A - 1) * cw - s
        case .highShelf:
            let s = 2 * A.squareRoot() * alpha
            b0 = A * ((A + 1) + (A - 1) * cw + s); b1 = -2 * A * ((A - 1) + (A + 1) * cw)
            b2 = A * ((A + 1) + (A - 1) * cw - s)
            a0 = (A + 1) - (A - 1) * cw + s; a1 = 2 * ((A - 1) - (A + 1) * cw)
            a2 = (A + 1) - (A - 1) * cw - s
        }
        return BiquadCoefficients(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }

    /// Audio thread: filters `count` frames (transposed direct form II, Double state so low
    /// cutoffs stay accurate). Works in place.
    ///
    /// Why the loop is written this way: as the textbook writes it, each output waits on the
    /// last through a multiply, a subtract and two adds. Here the part of the next output that
    /// does not depend on this one (`b0·x[n+1] + b1·x[n] + s2[n−1]`) is summed first, so the
    /// feedback path is one multiply and one subtract — about twice the throughput. Same
    /// filter; the sums are grouped differently, so a sample can differ from the textbook
    /// order by rounding in Double (about 1e-16 relative), which a Float output almost never
    /// shows.
    @inline(__always)
    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int,
                 z1: inout Double, z2: inout Double) {
        guard count > 0 else { return }
        // The state between samples is kept as (yPrevious, u, s2) with s1 = u − a1·yPrevious.
        var yPrevious = 0.0, u = z1, s2 = z2
        for i in 0..<count {
            let x = Double(input[i])
            let y = (b0 * x + u) - a1 * yPrevious
            u = b1 * x + s2
            s2 = b2 * x - a2 * y
            yPrevious = y
            output[i] = Float(y)
        }
        let s1 = u - a1 * yPrevious
        // Flush denormals: a decaying tail must not slow the audio thread to a crawl.
        z1 = abs(s1) < 1e-20 ? 0 : s1
        z2 = abs(s2) < 1e-20 ? 0 : s2
    }

    /// Audio thread: the loop's state back into (z1, z2) at `state`, as ``process(_:_:count:z1:z2:)`` leaves it.
    @inline(__always)
    static func store(u: Double, yPrevious: Double, s2: Double, a1: Double, into state: UnsafeMutablePointer<Double>) {
        let s1 = u - a1 * yPrevious
        state[0] = abs(s1) < 1e-20 ? 0 : s1
        state[1] = abs(s2) < 1e-20 ? 0 : s2
    }

    /// Audio thread: filters two channels in one pass, both in the lanes of one SIMD register
    /// (the same filter as ``process(_:_:count:z1:z2:)`` on each). `state` holds (z1, z2) of
    /// the left channel, then of the right. Works in place.
    ///
    /// Why it is written this way: in the transposed form each output waits on the one before
    /// through a multiply and a subtract, and on the one before that through five operations
    /// (≈ 7 cycles a frame, the whole cost of a W8 low-pass). After two frames in that form,
    /// which give the last two inputs and outputs, it runs as direct form I two frames a step:
    /// y[n] and y[n+1] both follow from y[n−1] and y[n−2] (with y[n+1]'s coefficients
    /// a1² − a2 and a1·a2 worked out once), so the recurrence waits once per two frames — a
    /// third less time for a stereo low-pass (measured: 42 → 28 ms for W8's 23 million frames).
    /// The same filter; sums grouped differently round differently in Double (≈ 1e-16
    /// relative), which a Float output almost never shows. The state is handed back in the
    /// transposed form, so every other path (mono, glides, the EQ's cascade) continues from it.
    @inline(__always)
    func process2(_ inputL: UnsafePointer<Float>, _ outputL: UnsafeMutablePointer<Float>,
                  _ inputR: UnsafePointer<Float>, _ outputR: UnsafeMutablePointer<Float>, count: Int,
                  state: UnsafeMutablePointer<Double>) {
        guard count > 0 else { return }
        typealias V = SIMD2<Double>
        let b0 = V(repeating: self.b0), b1 = V(repeating: self.b1), b2 = V(repeating: self.b2)
        let a1 = V(repeating: self.a1), a2 = V(repeating: self.a2)
        var yPrevious = V(), yOlder = V(), u = V(state[0], state[2]), s2 = V(state[1], state[3])
        // The inputs are kept: in place, the outputs overwrite them.
        var xPrevious = V(), xOlder = V()
        let head = min(count, 2)
        for i in 0..<head {
            let x = V(Double(inputL[i]), Double(inputR[i]))
            let y = (b0 * x + u) - a1 * yPrevious
            u = b1 * x + s2
            s2 = b2 * x - a2 * y
            yOlder = yPrevious
            yPrevious = y
            xOlder = xPrevious
            xPrevious = x
            outputL[i] = Float(y[0])
            outputR[i] = Float(y[1])
        }
        var s1 = u - a1 * yPrevious
        if count > head {
            // Direct form I from here: the last two inputs and outputs.
            var x1 = xPrevious, x2 = xOlder
            var y1 = yPrevious, y2 = yOlder
            let h1 = V(repeating: -self.a1)
            let p0 = V(repeating: -self.a1), q0 = V(repeating: -self.a2)
            let p1 = V(repeating: self.a1 * self.a1 - self.a2), q1 = V(repeating: self.a1 * self.a2)
            var i = head
            while i + 2 <= count {
                let l = V(UnsafeRawPointer(inputL + i).loadUnaligned(as: SIMD2<Float>.self))
                let r = V(UnsafeRawPointer(inputR + i).loadUnaligned(as: SIMD2<Float>.self))
                let xa = V(l[0], r[0]), xb = V(l[1], r[1])
                let fa: V = (b0 * xa + b1 * x1) + b2 * x2
                let fb: V = (b0 * xb + b1 * xa) + b2 * x1
                let gb: V = fb + h1 * fa
                let ya: V = (fa + q0 * y2) + p0 * y1
                let yb: V = (gb + q1 * y2) + p1 * y1
                UnsafeMutableRawPointer(outputL + i).storeBytes(of: SIMD2<Float>(V(ya[0], yb[0])), as: SIMD2<Float>.self)
                UnsafeMutableRawPointer(outputR + i).storeBytes(of: SIMD2<Float>(V(ya[1], yb[1])), as: SIMD2<Float>.self)
                x2 = xa; x1 = xb; y2 = ya; y1 = yb
                i += 2
            }
            if i < count {
                let x = V(Double(inputL[i]), Double(inputR[i]))
                let f: V = (b0 * x + b1 * x1) + b2 * x2
                let y: V = (f + q0 * y2) + p0 * y1
                outputL[i] = Float(y[0])
                outputR[i] = Float(y[1])
                x2 = x1; x1 = x; y2 = y1; y1 = y
            }
            // Back to the transposed form's state after the last frame.
            s1 = ((b1 * x1 - a1 * y1) + b2 * x2) - a2 * y2
            s2 = b2 * x1 - a2 * y1
        }
        state[0] = abs(s1[0]) < 1e-20 ? 0 : s1[0]
        state[1] = abs(s2[0]) < 1e-20 ? 0 : s2[0]
        state[2] = abs(s1[1]) < 1e-20 ? 0 : s1[1]
        state[3] = abs(s2[1]) < 1e-20 ? 0 : s2[1]
    }
}

/// A tiny deterministic generator (xorshift32) for noise: same seed, same output.
struct NoiseSource {
    private var state: UInt32

    init(seed: UInt32) { state = seed == 0 ? 0x9E37_79B9 : seed }

    /// Audio thread: a uniform value in [-1, 1).
    @inline(__always) mutating func nextBipolar() -> Float {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        return Float(Int32(bitPattern: state)) * (1.0 / 2_147_483_648.0)
    }
}

/// Linear gain of `decibels` as Float.
@inline(__always) func gainOf(decibels: Double) -> Float {
    decibels <= -200 ? 0 : Float(pow(10, decibels / 20))
}

/// ``gainOf(decibels:)`` worked out again only when the value changes: `pow` is a library
/// call, and once a block for every gain node was 1.3 % of a 256-track period. A node keeps
/// one per parameter in dB. Audio thread.
struct DecibelGain {
    private var decibels = Double.nan
    private var gain: Float = 1

    /// The linear gain of `value` dB. Audio thread: a compare, `pow` when it changed.
    @inline(__always) mutating func of(_ value: Double) -> Float {
        if value != decibels {
            decibels = value
            gain = gainOf(decibels: value)
        }
        return gain
    }
}

/// ``onePoleCoefficient(milliseconds:sampleRate:)`` worked out again only when the time
/// changes (an `exp` a block otherwise). Audio thread.
struct OnePoleCoefficient {
    private var milliseconds = Double.nan
    private var coefficient = 0.0

    /// The coefficient for `value` ms at `sampleRate`. Audio thread: a compare, `exp` when it changed.
    @inline(__always) mutating func of(_ value: Double, sampleRate: Double) -> Double {
        if value != milliseconds {
            milliseconds = value
            coefficient = onePoleCoefficient(milliseconds: value, sampleRate: sampleRate)
        }
        return coefficient
    }
}

/// Frames in `milliseconds` at `sampleRate`.
@inline(__always) func frames(milliseconds: Double, sampleRate: Double) -> Double {
    milliseconds * 0.001 * sampleRate
}

/// The one-pole coefficient that closes 63% of a gap in `milliseconds`.
@inline(__always) func onePoleCoefficient(milliseconds: Double, sampleRate: Double) -> Double {
    let n = frames(milliseconds: milliseconds, sampleRate: sampleRate)
    return n <= 0 ? 0 : exp(-1 / n)
}

/// How long parameter ramps last: long enough not to click, short enough to feel immediate.
let parameterRampMilliseconds = 20.0

/// Audio thread: sine of a phase in turns (0…1), within 0.001 of `sin` — cheap enough for
/// per-frame LFOs. Parabolic approximation with one refinement step.
@inline(__always) func fastSine(turns: Float) -> Float {
    var t = turns - Float(Int(turns))
    if t < 0 { t += 1 }
    let x = (t < 0.5 ? t : t - 1) * (2 * Float.pi)
    let y = (4 / Float.pi) * x - (4 / (Float.pi * Float.pi)) * x * abs(x)
    return 0.225 * (y * abs(y) - y) + y
}

/// Wraps a phase in turns back into 0..<1.
@inline(__always) func wrapTurns(_ phase: Double) -> Double { phase - phase.rounded(.down) }

/// Audio thread: log2 of a positive float within 2e-6 (0.00001 dB), several times cheaper
/// than `log10` — the compressor needs one per frame. Exponent from the bits, mantissa folded
/// into [√½, √2) and an atanh series for the rest.
@inline(__always) func fastLog2(_ x: Float) -> Float {
    var bits = x.bitPattern
    var e = Int32((bits >> 23) & 0xFF) - 127
    bits = (bits & 0x007F_FFFF) | 0x3F80_0000
    var m = Float(bitPattern: bits)
    if m > 1.41421356 { m *= 0.5; e += 1 }
    let s = (m - 1) / (m + 1), s2 = s * s
    let ln = 2 * s * (1 + s2 * (1.0 / 3 + s2 * (0.2 + s2 * (1.0 / 7))))
    return Float(e) + ln * 1.44269504
}

/// Audio thread: 2^x for x in about -126…127, within 0.001 dB; the partner of ``fastLog2(_:)``.
@inline(__always) func fastExp2(_ x: Float) -> Float {
    let clamped = max(min(x, 127), -126)
    // floor without a library call (the build targets baseline x86-64, which has no
    // rounding instruction): truncate, then step down below zero. Exact in this range.
    var xi = Float(Int32(clamped))
    if xi > clamped { xi -= 1 }
    let f = clamped - xi
    let p = 1 + f * (0.6931472 + f * (0.2402265 + f * (0.0555041 + f * (0.0096181 + f * 0.0013333))))
    return p * Float(bitPattern: UInt32(Int32(xi) + 127) << 23)
}

/// Decibels per doubling of amplitude: 20·log10(2).
let decibelsPerOctave: Float = 6.0205999
