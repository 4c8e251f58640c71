/// Delay: an echo in milliseconds or a note value that follows the tempo, with feedback.
///
/// The delay time glides over 50 ms when it changes (a tape-like pitch bend instead of a
/// click); reading between frames interpolates linearly, and a whole-frame delay reads exactly.
public final class DelayNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `delay`.
    public static let descriptor = NodeDescriptor(
        name: "delay", displayName: "Delay", kind: .effect, subtype: "dely", tags: ["Delay", "Tempo"],
        summary: "Echoes after a time in ms or a tempo-synced note value (1/8, 1/4., 1/8t), with feedback.",
        parameters: [
            ParameterDefinition(id: "time", name: "Time", unit: .milliseconds, minimum: 1, maximum: 4000,
                                defaultValue: 250, decimals: 1, tempoSyncable: true),
            ParameterDefinition(id: "feedback", name: "Feedback", unit: .fraction, minimum: 0, maximum: 0.95, defaultValue: 0.3, decimals: 2),
            ParameterDefinition(id: "mix", name: "Wet mix", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 0.35, decimals: 2),
        ])

    /// The longest delay, whatever the tempo: a synced value at a slow tempo is clamped to it.
    public static let maximumMilliseconds = 4000.0
    /// How long a change of delay time glides.
    static let glideMilliseconds = 50.0

    /// The live parameters.
    public let parameters = NodeParameters(DelayNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var channelCount = 0
    private var lines = UnsafeStorage<Float>()
    private var mask = 0
    private var writeIndex = 0
    /// Frames of each line written since it was last silenced (at most the line's length):
    /// writing starts at index 0 after a reset, so only these need clearing at the next.
    private var writtenFrames = 0
    private var maxDelayFrames: Float = 1
    private var delayFrames = LinearRamp(1)
    private var feedback = LinearRamp(0)
    private var mix = LinearRamp(0)
    private var glideFrames = 2400
    private var rampFrames = 960
    private var started = false

    /// Creates a 250 ms delay.
    public init() {}

    /// Off the audio thread: allocates a power-of-two ring per channel for the longest delay.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        channelCount = format.channelCount
        let needed = Int(frames(milliseconds: Self.maximumMilliseconds, sampleRate: sampleRate)) + maxFrames + 4
        var size = 1
        while size < needed { size <<= 1 }
        // Offline, the lines' pages are mapped as the delay first writes them (on the thread
        // that renders); live, they are all touched now, so the audio thread never faults.
        if format.isRealtime { lines.allocate(size * channelCount, fill: 0) } else { lines.allocateLazilyZeroed(size * channelCount) }
        mask = size - 1
        writtenFrames = 0
        maxDelayFrames = Float(frames(milliseconds: Self.maximumMilliseconds, sampleRate: sampleRate))
        glideFrames = Int(frames(milliseconds: Self.glideMilliseconds, sampleRate: sampleRate))
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate))
        feedback.jump(to: Float(parameters.value(1)))
        mix.jump(to: Float(parameters.value(2)))
        started = false
        reset()
    }

    /// Audio thread: reads the time (resolving a note value against this block's tempo),
    /// then delays every channel with its own ring.
    public func process(_ context: inout RenderContext) {
        let ms = parameters.milliseconds(0, transport: context.transport)
        let target = min(max(Float(frames(milliseconds: ms, sampleRate: sampleRate)).rounded(), 1), maxDelayFrames)
        if started { delayFrames.setTarget(target, frames: glideFrames) } else { delayFrames.jump(to: target); started = true }
        feedback.setTarget(Float(parameters.value(1)), frames: rampFrames)
        mix.setTarget(Float(parameters.value(2)), frames: rampFrames)
        let n = context.frameCount, size = mask + 1
        guard let base = lines.pointer else { return }
        var d = delayFrames, fb = feedback, wet = mix
        for c in 0..<min(channelCount, context.output.count) {
            d = delayFrames; fb = feedback; wet = mix
            let line = base + c * size, input = context.input[c], output = context.output[c]
            var w = writeIndex
            if d.isSteady && fb.isSteady && wet.isSteady && d.current == d.current.rounded() {
                // Steady whole-frame delay: no ramps, no interpolation.
                let whole = Int(d.current), f = fb.current, m = wet.current, dry = 1 - m
                var i = 0
                // Runs where neither the read nor the write position wraps, eight frames at a
                // time: a read at least eight frames behind the write never sees this
                // vector's own writes, so the lanes are independent.
                if whole >= 8 {
                    while i < n {
                        let r = (w - whole) & mask
                        let span = min(n - i, size - w, size - r)
                        var k = 0
                        while k + 8 <= span {
                            let y = UnsafeRawPointer(line + r + k).loadUnaligned(as: SIMD8<Float>.self)
                            let x = UnsafeRawPointer(input + i + k).loadUnaligned(as: SIMD8<Float>.self)
                            UnsafeMutableRawPointer(line + w + k).storeBytes(of: x + f * y, as: SIMD8<Float>.self)
                            UnsafeMutableRawPointer(output + i + k).storeBytes(of: x * dry + y * m, as: SIMD8<Float>.self)
                            k += 8
                        }
                        while k < span {
                            let y = line[r + k], x = input[i + k]
                            line[w + k] = x + f * y
                            output[i + k] = x * dry + y * m
                            k += 1
                        }
                        i += span
                        w = (w + span) & mask
                    }
                    continue
                }
                for i in 0..<n {
                    let y = line[(w - whole) & mask]
                    let x = input[i]
                    line[w] = x + f * y
                    output[i] = x * dry + y * m
                    w = (w + 1) & mask
                }
                continue
            }
            for i in 0..<n {
                let delay = d.next()
                let whole = Int(delay)
                let fraction = delay - Float(whole)
                let a = line[(w - whole) & mask], b = line[(w - whole - 1) & mask]
                let y = a + (b - a) * fraction
                let x = input[i]
                line[w] = x + fb.next() * y
                let m = wet.next()
                output[i] = x * (1 - m) + y * m
                w = (w + 1) & mask
            }
        }
        delayFrames = d; feedback = fb; mix = wet
        writeIndex = (writeIndex + n) & mask
        writtenFrames = min(writtenFrames + n, mask + 1)
    }

    /// Audio thread: silences the delay lines.
    public func reset() {
        if let base = lines.pointer, writtenFrames > 0 {
            let size = mask + 1
            for c in 0..<channelCount { (base + c * size).update(repeating: 0, count: writtenFrames) }
        }
        writtenFrames = 0
        writeIndex = 0
    }

    /// Off the audio thread.
    public func release() { lines.free() }
}
