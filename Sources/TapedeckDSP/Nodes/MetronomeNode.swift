import Foundation

/// Metronome click: a short decaying sine burst on every beat while the transport rolls,
/// higher and louder on each bar's downbeat. Beats are found from the transport's beat
/// position and tempo, so each click starts on the exact frame where its beat falls.
public final class MetronomeNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `click`.
    public static let descriptor = NodeDescriptor(
        name: "click", displayName: "Metronome click", kind: .generator, subtype: "clik", tags: ["Generator", "Tempo"],
        summary: "Clicks on every beat while playing or recording; accented downbeat.",
        parameters: [
            ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -60, maximum: 0, defaultValue: -6),
            ParameterDefinition(id: "accent", name: "Downbeat accent", unit: .decibels, minimum: 0, maximum: 12, defaultValue: 6),
            ParameterDefinition(id: "pitch", name: "Click pitch", unit: .hertz, minimum: 200, maximum: 5000, defaultValue: 1000, decimals: 0),
        ])

    /// Length of one click.
    public static let clickMilliseconds = 25.0
    /// How much higher the downbeat sounds.
    static let downbeatPitchFactor = 1.5

    /// The live parameters.
    public let parameters = NodeParameters(MetronomeNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var scratch = UnsafeStorage<Float>()
    private var clickFrames = 1200
    private var remaining = 0
    private var age = 0
    private var increment = 0.0
    private var amplitude: Float = 0
    private var lastBeat = Int64.min

    /// Creates a click at -6 dBFS.
    public init() {}

    /// Off the audio thread: allocates one block of scratch.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        scratch.allocate(maxFrames, fill: 0)
        clickFrames = Int(frames(milliseconds: Self.clickMilliseconds, sampleRate: sampleRate))
        reset()
    }

    /// The first frame at or after which beat number `beat` falls, given the block's start,
    /// its beats a frame there and how fast that grows a frame (a tempo ramp, linear in time:
    /// beats = start + bpf·x + ½·growth·x²).
    @inline(__always) static func frameOffset(ofBeat beat: Int64, blockStartBeat: Double, beatsPerFrame: Double,
                                              growth: Double = 0) -> Int {
        let d = Double(beat) - blockStartBeat
        // ½·growth·x² + bpf·x − d = 0, in the form that keeps its digits when growth is small.
        let root = (beatsPerFrame * beatsPerFrame + 2 * growth * d)
        let x = growth == 0 || root < 0 ? d / beatsPerFrame : 2 * d / (beatsPerFrame + root.squareRoot())
        // The epsilon keeps a beat that lands exactly on a frame from rounding to the next one.
        return max(0, Int((x - 1e-6).rounded(.up)))
    }

    /// `pow` only when a level moved.
    private var levelGain = DecibelGain(), accentGain = DecibelGain()

    /// Audio thread: starts clicks at the beats inside this block, adds them to every channel.
    public func process(_ context: inout RenderContext) {
        let n = min(context.frameCount, scratch.count)
        guard let s = scratch.pointer else { return }
        let transport = context.transport
        let rolling = transport.isPlaying || transport.isRecording
        let bpf = transport.beatsPerFrame
        let growth = transport.bpmPerFrame / 60 / transport.sampleRate
        let start = transport.beatPosition
        // A locate or cycle jumped backwards: beats may sound again.
        if lastBeat != Int64.min && start < Double(lastBeat) - 1e-6 { lastBeat = Int64.min }
        var nextBeat = Int64((start - 1e-6).rounded(.up))
        if nextBeat <= lastBeat { nextBeat = lastBeat + 1 }
        var nextFrame = rolling && bpf > 0 ? Self.frameOffset(ofBeat: nextBeat, blockStartBeat: start, beatsPerFrame: bpf, growth: growth) : Int.max
        let level = levelGain.of(parameters.value(0))
        let accent = accentGain.of(parameters.value(1))
        let pitch = parameters.value(2)
        let decay = Float(clickFrames) / 5
        for i in 0..<n {
            if i == nextFrame {
                let perBar = Int64(max(transport.beatsPerBar, 1))
                // Bars start where the tempo map's meter puts them (a 7/8 bar after 4/4 ones).
                let fromBar = transport.barStartBeat.isFinite ? nextBeat - Int64(transport.barStartBeat.rounded()) : nextBeat
                let downbeat = ((fromBar % perBar) + perBar) % perBar == 0
                amplitude = downbeat ? level * accent : level
                increment = (downbeat ? pitch * Self.downbeatPitchFactor : pitch) / sampleRate
                remaining = clickFrames
                age = 0
                lastBeat = nextBeat
                nextBeat += 1
                nextFrame = Self.frameOffset(ofBeat: nextBeat, blockStartBeat: start, beatsPerFrame: bpf, growth: growth)
            }
            if remaining > 0 {
                // A quarter-frame phase offset makes the click's first frame non-zero, so its
                // onset is the beat's own frame; the decay ends about 43 dB down.
                let envelope = amplitude * expf(-Float(age) / decay)
                s[i] = envelope * Float(sin(2 * Double.pi * (Double(age) + 0.25) * increment))
                age += 1
                remaining -= 1
            } else {
                s[i] = 0
            }
        }
        for c in 0..<context.output.count {
            let input = context.input[c], output = context.output[c]
            for i in 0..<n { output[i] = input[i] + s[i] }
        }
    }

    /// Audio thread: stops any click and forgets the last beat.
    public func reset() { remaining = 0; age = 0; lastBeat = Int64.min }

    /// Off the audio thread.
    public func release() { scratch.free() }
}
