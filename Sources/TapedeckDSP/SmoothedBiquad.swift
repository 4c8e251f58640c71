import Foundation

/// One RBJ biquad section for every channel, whose frequency, Q and gain glide to new values
/// in 32-frame steps (recomputing coefficients per step) so that a sweep never zips or clicks.
struct SmoothedBiquad {
    let shape: BiquadCoefficients.Shape
    private var frequency = ChunkSmoother(1000)
    private var q = ChunkSmoother(0.707)
    private var gain = ChunkSmoother(0)
    private var coefficients = BiquadCoefficients()
    private var state = UnsafeStorage<Double>()
    private var sampleRate = 48000.0
    private var channelCount = 0
    private var glide = 0.03

    /// Frames between coefficient updates while gliding.
    static let chunkFrames = 32

    init(shape: BiquadCoefficients.Shape) { self.shape = shape }

    /// Off the audio thread: allocates per-channel memory and lands on the given values.
    mutating func prepare(channelCount: Int, sampleRate: Double, frequencyHertz: Double, q: Double, gainDecibels: Double) {
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        state.allocate(2 * channelCount, fill: 0)
        frequency = ChunkSmoother(frequencyHertz)
        self.q = ChunkSmoother(q)
        gain = ChunkSmoother(gainDecibels)
        glide = 1 - exp(-Double(Self.chunkFrames) / frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate))
        updateCoefficients()
    }

    /// Off the audio thread.
    mutating func release() { state.free() }

    /// Audio thread: clears filter memory.
    func reset() { state.fill(0) }

    /// Audio thread: new targets, read once per block.
    @inline(__always) mutating func setTargets(frequencyHertz: Double, q: Double, gainDecibels: Double) {
        frequency.target = frequencyHertz
        self.q.target = q
        gain.target = gainDecibels
    }

    private mutating func updateCoefficients() {
        coefficients = .rbj(shape, frequencyHertz: frequency.current, q: q.current,
                            gainDecibels: gain.current, sampleRate: sampleRate)
    }

    /// Audio thread: filters `frameCount` frames of every channel from `input` to `output`
    /// (which may be the same buffers).
    mutating func process(input: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                          output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        let channels = min(channelCount, output.count)
        guard let s = state.pointer else { return }
        var start = 0
        while start < frameCount {
            let gliding = !(frequency.isSteady && q.isSteady && gain.isSteady)
            if gliding {
                _ = frequency.advance(coefficient: glide, logarithmic: true)
                _ = q.advance(coefficient: glide, logarithmic: true)
                _ = gain.advance(coefficient: glide, logarithmic: false)
                updateCoefficients()
            }
            let count = gliding ? min(Self.chunkFrames, frameCount - start) : frameCount - start
            if channels == 2 {
                coefficients.process2(UnsafePointer(input[0] + start), output[0] + start,
                                      UnsafePointer(input[1] + start), output[1] + start, count: count, state: s)
                start += count
                continue
            }
            for c in 0..<channels {
                coefficients.processPairs(UnsafePointer(input[c] + start), output[c] + start, count: count, state: s + 2 * c)
            }
            start += count
        }
    }

    /// Audio thread: three steady mono sections in series over `buffer`, in one pass — the
    /// same arithmetic as three ``process(input:output:frameCount:)`` calls (each section's
    /// output is rounded to Float before the next, as between calls), but the three
    /// recurrences overlap in the core instead of running one after another (the EQ's three
    /// bands). Returns false, doing nothing, unless all three are mono and none is gliding.
    static func processSteadyCascade(_ first: inout SmoothedBiquad, _ second: inout SmoothedBiquad, _ third: inout SmoothedBiquad,
                                     buffer: UnsafeMutablePointer<Float>, frameCount: Int) -> Bool {
        guard first.isSteadyMono, second.isSteadyMono, third.isSteadyMono,
              let s0 = first.state.pointer, let s1 = second.state.pointer, let s2 = third.state.pointer, frameCount > 0
        else { return false }
        let c0 = first.coefficients, c1 = second.coefficients, c2 = third.coefficients
        // Each section's state as in BiquadCoefficients.process: (yPrevious, u, s2).
        var y0 = 0.0, u0 = s0[0], v0 = s0[1]
        var y1 = 0.0, u1 = s1[0], v1 = s1[1]
        var y2 = 0.0, u2 = s2[0], v2 = s2[1]
        for i in 0..<frameCount {
            let x0 = Double(buffer[i])
            let a = (c0.b0 * x0 + u0) - c0.a1 * y0
            u0 = c0.b1 * x0 + v0
            v0 = c0.b2 * x0 - c0.a2 * a
            y0 = a
            let x1 = Double(Float(a))
            let b = (c1.b0 * x1 + u1) - c1.a1 * y1
            u1 = c1.b1 * x1 + v1
            v1 = c1.b2 * x1 - c1.a2 * b
            y1 = b
            let x2 = Double(Float(b))
            let c = (c2.b0 * x2 + u2) - c2.a1 * y2
            u2 = c2.b1 * x2 + v2
            v2 = c2.b2 * x2 - c2.a2 * c
            y2 = c
            buffer[i] = Float(c)
        }
        BiquadCoefficients.store(u: u0, yPrevious: y0, s2: v0, a1: c0.a1, into: s0)
        BiquadCoefficients.store(u: u1, yPrevious: y1, s2: v1, a1: c1.a1, into: s1)
        BiquadCoefficients.store(u: u2, yPrevious: y2, s2: v2, a1: c2.a1, into: s2)
        return true
    }

    private var isSteadyMono: Bool { channelCount == 1 && frequency.isSteady && q.isSteady && gain.isSteady }

    /// Whether the section passes its input on unchanged and may be skipped: steady, its
    /// coefficients those of 1 (b0 = 1, b1 = a1, b2 = a2: a shelf or peak at 0 dB, where the
    /// cookbook divides equal numbers), and its memory empty. Such a section's memory stays
    /// empty (it computes x − x), so it is cleared when only the Double rounding of running it
    /// is left (below 1e-9, 180 dB under full scale), and from then on skipping it gives the
    /// output running it would (each output is its input again once rounded to Float).
    /// Why: a 0 dB band costs a full biquad per frame, and an `eq` left flat on a track
    /// (the bench's `hpf,comp,eq,gain`) cost three of them. Audio thread: arithmetic.
    func isTransparent() -> Bool {
        guard frequency.isSteady && q.isSteady && gain.isSteady,
              coefficients.b0 == 1, coefficients.b1 == coefficients.a1, coefficients.b2 == coefficients.a2,
              let s = state.pointer else { return false }
        for i in 0..<(2 * channelCount) where abs(s[i]) >= 1e-9 { return false }
        state.fill(0)
        return true
    }
}
