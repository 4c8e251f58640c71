/// Reverb: Jezar's Freeverb (public domain, 2000) — eight damped feedback combs in parallel
/// into four series allpasses per channel, tunings scaled from 44.1 kHz to the session rate.
/// Odd channels use the design's 23-frame stereo spread so a stereo tail decorrelates.
public final class ReverbNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `reverb`.
    public static let descriptor = NodeDescriptor(
        name: "reverb", displayName: "Reverb", kind: .effect, subtype: "frev", tags: ["Reverb", "Space"],
        summary: "Freeverb room reverb: size, damping, wet mix.",
        parameters: [
            ParameterDefinition(id: "size", name: "Room size", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 0.5, decimals: 2),
            ParameterDefinition(id: "damping", name: "Damping", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 0.5, decimals: 2),
            ParameterDefinition(id: "mix", name: "Wet mix", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 0.25, decimals: 2),
        ])

    static let combTunings = [1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617]
    static let allpassTunings = [556, 441, 341, 225]
    static let stereoSpread = 23
    /// Freeverb's input attenuation: eight combs summed would otherwise be far too loud.
    static let fixedGain: Float = 0.015

    /// The live parameters.
    public let parameters = NodeParameters(ReverbNode.descriptor.parameters)
    private var channelCount = 0
    private var memory = UnsafeStorage<Float>()
    private var lengths = UnsafeStorage<Int>()   // 12 filters per channel: 8 combs then 4 allpasses
    private var offsets = UnsafeStorage<Int>()
    private var positions = UnsafeStorage<Int>()
    private var combStores = UnsafeStorage<Float>()
    private var mix = LinearRamp(0)
    private var rampFrames = 960

    /// Creates a medium room.
    public init() {}

    /// Off the audio thread: allocates every comb and allpass line for every channel.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        channelCount = format.channelCount
        let scale = format.sampleRate / 44100
        let perChannel = 12
        lengths.allocate(perChannel * channelCount, fill: 1)
        offsets.allocate(perChannel * channelCount, fill: 0)
        positions.allocate(perChannel * channelCount, fill: 0)
        combStores.allocate(8 * channelCount, fill: 0)
        var total = 0
        for c in 0..<channelCount {
            let spread = c % 2 == 1 ? Self.stereoSpread : 0
            for (k, tuning) in (Self.combTunings + Self.allpassTunings).enumerated() {
                let length = max(1, Int(Double(tuning + spread) * scale))
                lengths[c * perChannel + k] = length
                offsets[c * perChannel + k] = total
                total += length
            }
        }
        memory.allocate(total, fill: 0)
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: format.sampleRate))
        mix.jump(to: Float(parameters.value(2)))
    }

    /// Audio thread: runs every channel's combs and allpasses.
    public func process(_ context: inout RenderContext) {
        // Freeverb's mapping from knobs to loop gains.
        let feedback = Float(parameters.value(0)) * 0.28 + 0.7
        let damp1 = Float(parameters.value(1)) * 0.4, damp2 = 1 - damp1
        mix.setTarget(Float(parameters.value(2)), frames: rampFrames)
        guard let mem = memory.pointer, let len = lengths.pointer, let off = offsets.pointer,
              let pos = positions.pointer, let stores = combStores.pointer else { return }
        var wet = mix
        for c in 0..<min(channelCount, context.output.count) {
            wet = mix
            let input = context.input[c], output = context.output[c]
            let f = c * 12
            for i in 0..<context.frameCount {
                let x = input[i]
                let feed = x * Self.fixedGain
                var sum: Float = 0
                for k in 0..<8 {
                    let line = mem + off[f + k]
                    let p = pos[f + k]
                    let y = line[p]
                    let store = y * damp2 + stores[c * 8 + k] * damp1
                    stores[c * 8 + k] = store
                    line[p] = feed + store * feedback
                    pos[f + k] = p + 1 == len[f + k] ? 0 : p + 1
                    sum += y
                }
                for k in 8..<12 {
                    let line = mem + off[f + k]
                    let p = pos[f + k]
                    let buffered = line[p]
                    line[p] = sum + buffered * 0.5
                    sum = buffered - sum
                    pos[f + k] = p + 1 == len[f + k] ? 0 : p + 1
                }
                let m = wet.next()
                // Freeverb's wet scale (3) restores the level fixedGain took away.
                output[i] = x * (1 - m) + sum * 3 * m
            }
        }
        mix = wet
        // Flush denormals in the damping filters once per block.
        for k in 0..<combStores.count where abs(stores[k]) < 1e-20 { stores[k] = 0 }
    }

    /// Audio thread: silences the tail.
    public func reset() { memory.fill(0); combStores.fill(0); positions.fill(0) }

    /// Off the audio thread.
    public func release() { memory.free(); lengths.free(); offsets.free(); positions.free(); combStores.free() }
}
