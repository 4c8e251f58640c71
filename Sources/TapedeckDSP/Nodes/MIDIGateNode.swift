/// MIDI gate: lets audio through only while at least one MIDI note is held, opening and
/// closing on the exact frames of the note events (with short ramps against clicks). It shows
/// MIDI reaching an effect: a rhythmic gate played from a keyboard or a MIDI region.
public final class MIDIGateNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `midigate`.
    public static let descriptor = NodeDescriptor(
        name: "midigate", displayName: "MIDI gate", kind: .musicEffect, subtype: "mgat", tags: ["Dynamics", "MIDI"],
        summary: "Passes audio only while a MIDI note is held.",
        parameters: [
            ParameterDefinition(id: "attack", name: "Attack", unit: .milliseconds, minimum: 0.1, maximum: 100, defaultValue: 1, decimals: 1),
            ParameterDefinition(id: "release", name: "Release", unit: .milliseconds, minimum: 0.1, maximum: 2000, defaultValue: 20, decimals: 1),
        ])

    /// The live parameters.
    public let parameters = NodeParameters(MIDIGateNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var held = UnsafeStorage<UInt8>()
    private var heldCount = 0
    private var gain: Float = 0
    private var gains = UnsafeStorage<Float>()

    /// Creates a closed gate.
    public init() {}

    /// Off the audio thread: allocates note flags and the per-frame gain buffer.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        held.allocate(128, fill: 0)
        gains.allocate(maxFrames, fill: 0)
        reset()
    }

    /// Audio thread: tracks held notes frame by frame and applies the gate to every channel.
    public func process(_ context: inout RenderContext) {
        let n = min(context.frameCount, gains.count)
        guard let g = gains.pointer, let h = held.pointer else { return }
        let attack = Float(onePoleCoefficient(milliseconds: parameters.value(0), sampleRate: sampleRate))
        let release = Float(onePoleCoefficient(milliseconds: parameters.value(1), sampleRate: sampleRate))
        let events = context.midiEvents
        var e = 0
        var level = gain
        for i in 0..<n {
            while e < events.count && Int(events[e].frameOffset) <= i {
                let event = events[e]
                let note = Int(event.data1 & 0x7F)
                if event.isNoteOn && h[note] == 0 { h[note] = 1; heldCount += 1 }
                else if event.isNoteOff && h[note] != 0 { h[note] = 0; heldCount -= 1 }
                else if event.isAllNotesOff { held.fill(0); heldCount = 0 }
                e += 1
            }
            let target: Float = heldCount > 0 ? 1 : 0
            level = target + (level - target) * (target > level ? attack : release)
            g[i] = level
        }
        gain = level < 1e-9 ? 0 : level
        for c in 0..<context.output.count {
            let input = context.input[c], output = context.output[c]
            for i in 0..<n { output[i] = input[i] * g[i] }
        }
    }

    /// Audio thread: releases every note and closes the gate.
    public func reset() { held.fill(0); heldCount = 0; gain = 0 }

    /// Off the audio thread.
    public func release() { held.free(); gains.free() }
}
