/// Look-ahead brickwall limiter whose output sample peaks never exceed the ceiling.
///
/// Why it holds: for each input frame the gain it needs is r = min(1, ceiling / peak). The
/// gain applied to the frame leaving the D-frame delay is the mean of D values of a
/// release-smoothed running minimum of r over the last D+1 frames; every one of those values
/// already includes the leaving frame's r, so their mean cannot exceed it. A final clamp
/// absorbs float rounding. Cost: D = 5 ms of latency (``latencyFrames``).
public final class LimiterNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `limiter`.
    public static let descriptor = NodeDescriptor(
        name: "limiter", displayName: "Limiter", kind: .effect, subtype: "limt", tags: ["Dynamics", "Mastering"],
        summary: "Look-ahead (5 ms) brickwall limiter: sample peaks never pass the ceiling.",
        parameters: [
            ParameterDefinition(id: "ceiling", name: "Ceiling", unit: .decibels, minimum: -30, maximum: 0, defaultValue: -1),
            ParameterDefinition(id: "release", name: "Release", unit: .milliseconds, minimum: 1, maximum: 1000, defaultValue: 60, decimals: 0),
            ParameterDefinition(id: "drive", name: "Input gain", unit: .decibels, minimum: 0, maximum: 24, defaultValue: 0),
        ])

    /// Look-ahead time.
    public static let lookAheadMilliseconds = 5.0

    /// The live parameters.
    public let parameters = NodeParameters(LimiterNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var lookAhead = 1
    private var channelCount = 0
    private var delay = UnsafeStorage<Float>()       // channelCount × lookAhead, per-channel rings
    private var boxValues = UnsafeStorage<Double>()  // last lookAhead smoothed gains
    private var boxSum = 0.0
    private var minValues = UnsafeStorage<Double>()  // monotonic deque of (value, frame)
    private var minFrames = UnsafeStorage<Int64>()
    private var dequeHead = 0, dequeCount = 0
    private var smoothed = 1.0
    private var frame: Int64 = 0
    private var position = 0
    private var drive = LinearRamp(1)

    /// Creates a limiter with a -1 dB ceiling.
    public init() {}

    /// Frames of look-ahead delay the limiter adds.
    public var latencyFrames: Int { lookAhead }

    /// Off the audio thread: allocates the delay lines and the running-minimum deque.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        channelCount = format.channelCount
        lookAhead = max(1, Int(frames(milliseconds: Self.lookAheadMilliseconds, sampleRate: sampleRate)))
        delay.allocate(channelCount * lookAhead, fill: 0)
        boxValues.allocate(lookAhead, fill: 1)
        minValues.allocate(lookAhead + 2, fill: 1)
        minFrames.allocate(lookAhead + 2, fill: 0)
        drive.jump(to: gainOf(decibels: parameters.value(2)))
        reset()
    }

    private var ceilingGain = DecibelGain(), driveGain = DecibelGain()
    private var releaseCache = OnePoleCoefficient()

    /// Audio thread: limits every frame; all channels share one gain so the image holds.
    public func process(_ context: inout RenderContext) {
        // The library calls only when a setting moved.
        let ceiling = ceilingGain.of(parameters.value(0))
        let ceilingD = Double(ceiling)
        let releaseCoefficient = releaseCache.of(parameters.value(1), sampleRate: sampleRate)
        drive.setTarget(driveGain.of(parameters.value(2)), frames: Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate)))
        let channels = min(channelCount, context.output.count)
        let d = lookAhead, capacity = d + 2
        guard let ring = delay.pointer, let box = boxValues.pointer,
              let mins = minValues.pointer, let minAt = minFrames.pointer else { return }
        for i in 0..<context.frameCount {
            let g = drive.next()
            var peak: Float = 0
            for c in 0..<channels { peak = max(peak, abs(context.input[c][i] * g)) }
            let needed = peak > ceiling ? ceilingD / Double(peak) : 1
            // Running minimum of `needed` over the last d+1 frames (monotonic deque).
            while dequeCount > 0 && mins[(dequeHead + dequeCount - 1) % capacity] >= needed { dequeCount -= 1 }
            let tail = (dequeHead + dequeCount) % capacity
            mins[tail] = needed
            minAt[tail] = frame
            dequeCount += 1
            while minAt[dequeHead] < frame - Int64(d) { dequeHead = (dequeHead + 1) % capacity; dequeCount -= 1 }
            let held = mins[dequeHead]
            // Instant attack, exponential release back towards unity.
            smoothed = min(held, 1 - (1 - smoothed) * releaseCoefficient)
            boxSum += smoothed - box[position]
            box[position] = smoothed
            let gain = Float(min(boxSum / Double(d), 1))
            for c in 0..<channels {
                let slot = ring + c * d + position
                let delayed = slot.pointee
                slot.pointee = context.input[c][i] * g
                context.output[c][i] = min(max(delayed * gain, -ceiling), ceiling)
            }
            position = position + 1 == d ? 0 : position + 1
            frame += 1
        }
        // Re-sum once per block so rounding in the running sum cannot build up over hours.
        var exact = 0.0
        for k in 0..<d { exact += box[k] }
        boxSum = exact
    }

    /// Audio thread: empties the delay line and returns to unity gain.
    public func reset() {
        delay.fill(0)
        boxValues.fill(1)
        boxSum = Double(lookAhead)
        dequeHead = 0
        dequeCount = 0
        smoothed = 1
        frame = 0
        position = 0
    }

    /// Off the audio thread.
    public func release() {
        delay.free(); boxValues.free(); minValues.free(); minFrames.free()
    }
}
