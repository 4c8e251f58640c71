/// Tremolo: a sine LFO on the level. Its rate is in hertz or a note value per cycle; when
/// synced and the transport rolls, the LFO's phase is locked to the beat position, so the
/// dips land on the grid even after a locate.
public final class TremoloNode: BuiltInNode, @unchecked Sendable {
    /// Registration of `tremolo`.
    public static let descriptor = NodeDescriptor(
        name: "tremolo", displayName: "Tremolo", kind: .effect, subtype: "trem", tags: ["Modulation", "Tempo"],
        summary: "Sine level modulation; rate in Hz or a note value per cycle (tempo-locked).",
        parameters: [
            ParameterDefinition(id: "rate", name: "Rate", unit: .hertz, minimum: 0.05, maximum: 20,
                                defaultValue: 4, decimals: 2, tempoSyncable: true),
            ParameterDefinition(id: "depth", name: "Depth", unit: .fraction, minimum: 0, maximum: 1, defaultValue: 0.5, decimals: 2),
        ])

    /// The live parameters.
    public let parameters = NodeParameters(TremoloNode.descriptor.parameters)
    private var sampleRate = 48000.0
    private var phase = 0.0
    private var depth = LinearRamp(0)
    private var rampFrames = 960

    /// Creates a 4 Hz tremolo.
    public init() {}

    /// Off the audio thread.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        sampleRate = format.sampleRate
        rampFrames = Int(frames(milliseconds: parameterRampMilliseconds, sampleRate: sampleRate))
        depth.jump(to: Float(parameters.value(1)))
        phase = 0
    }

    /// Audio thread: gain = 1 - depth × (1 - cos)/2, so the peak is unity and the dip 1 - depth.
    public func process(_ context: inout RenderContext) {
        let transport = context.transport
        let whole = parameters.syncedWholeNotes(0)
        let hertz = parameters.hertz(0, transport: transport)
        if whole > 0 && (transport.isPlaying || transport.isRecording) {
            phase = wrapTurns(transport.beatPosition / (whole * Double(transport.beatUnit)))
        }
        let increment = Float(hertz / sampleRate)
        depth.setTarget(Float(parameters.value(1)), frames: rampFrames)
        var d = depth
        for c in 0..<context.output.count {
            d = depth
            let input = context.input[c], output = context.output[c]
            var t = Float(phase)
            for i in 0..<context.frameCount {
                // cos(2πt) = sin(2π(t + 1/4))
                let lfo = 0.5 - 0.5 * fastSine(turns: t + 0.25)
                output[i] = input[i] * (1 - d.next() * lfo)
                t += increment
            }
        }
        depth = d
        phase = wrapTurns(phase + Double(context.frameCount) * hertz / sampleRate)
    }

    /// Audio thread: restarts the LFO at its peak.
    public func reset() { phase = 0 }

    /// Nothing to free.
    public func release() {}
}
