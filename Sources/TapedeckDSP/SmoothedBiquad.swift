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
                coefficients.process(UnsafePointer(input[c] + start), output[c] + start, count: count,
                                     z1: &s[2 * c], z2: &s[2 * c + 1])
            }
            start += count
        }
    }
}
