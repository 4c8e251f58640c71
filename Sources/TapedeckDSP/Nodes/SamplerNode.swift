import Foundation

/// Sampler: plays one mono sample, repitched by MIDI note (relative to its root note) with
/// velocity, 16 voices, starting on the exact frame of each note-on.
///
/// The sample comes from its `file` setting (`sampler:file=samples/kick.wav:root=36`), read
/// through the host's ``NodeFiles`` while the chain is built, or from
/// ``setSample(_:sampleRate:rootNote:)``; either way before `prepare`, never on the audio
/// thread. `mode` says what a note-off does: `gate` releases the voice, `oneshot` lets the
/// sample play to its end (drums), `loop` repeats the whole sample while the key is held.
public final class SamplerNode: BuiltInNode, TextParameterNode, @unchecked Sendable {
    /// Registration of `sampler`.
    public static let descriptor = NodeDescriptor(
        name: "sampler", displayName: "Sampler", kind: .instrument, subtype: "smpl", tags: ["Instrument", "MIDI"],
        summary: "Plays a sample file pitched by MIDI note and scaled by velocity (16 voices; gate, one-shot or looped).",
        parameters: [
            ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -60, maximum: 12, defaultValue: 0),
            ParameterDefinition(id: "release", name: "Release", unit: .milliseconds, minimum: 1, maximum: 5000, defaultValue: 50, decimals: 0),
            ParameterDefinition(id: "tune", name: "Tune", unit: .semitones, minimum: -24, maximum: 24, defaultValue: 0, decimals: 2),
            ParameterDefinition(id: "root", name: "Root note", unit: .midiNote, minimum: 0, maximum: 127, defaultValue: 60, decimals: 0),
            .choice(id: "mode", name: "Mode", choices: ["gate", "oneshot", "loop"]),
        ],
        textParameters: [
            TextParameterDefinition(id: "file", name: "Sample file",
                                    summary: "the audio file it plays (kept in the session's samples/ folder)", isSessionFile: true),
        ])

    /// Most notes sounding at once; a new note steals the oldest.
    public static let voiceCount = 16

    private struct Voice {
        var active = false
        var releasing = false
        var note: UInt8 = 0
        var position = 0.0
        var increment = 1.0
        var gain: Float = 0
        var releaseGain: Float = 1
        var startOrder: Int64 = 0
    }

    /// The live parameters.
    public let parameters = NodeParameters(SamplerNode.descriptor.parameters)
    private var pendingSample: [Float] = []
    private var pendingSampleRate = 48000.0
    private var sample = UnsafeStorage<Float>()
    private var sampleRateRatio = 1.0
    private var outputRate = 48000.0
    private var voices = UnsafeStorage<Voice>()
    private var scratch = UnsafeStorage<Float>()
    private var order: Int64 = 0
    private var fileProblem: String?

    /// Creates an empty sampler (silent until given a sample).
    public init() {}

    /// Gives the sampler its sound: mono floats at `sampleRate`, sounding at pitch `rootNote`.
    /// Off the audio thread, before `prepare` (which copies it into the node's own storage).
    public func setSample(_ samples: [Float], sampleRate: Double, rootNote: Int = 60) {
        pendingSample = samples
        pendingSampleRate = sampleRate
        parameters.set(3, Double(rootNote))
    }

    /// Reads the `file` setting through the host. Control thread, before `prepare`.
    public func setText(_ id: String, _ value: String, files: (any NodeFiles)?) {
        guard id == "file" else { return }
        guard let files else {
            fileProblem = "sample \(value): this host cannot read files; silent"
            return
        }
        switch files.resolve(value).flatMap({ files.readSample(atPath: $0) }) {
        case .success(let loaded):
            pendingSample = loaded.samples
            pendingSampleRate = loaded.sampleRate
            fileProblem = loaded.samples.isEmpty ? "sample \(value) holds no audio; silent" : nil
        case .failure(let problem):
            fileProblem = "sample \(value): \(problem.description); silent"
        }
    }

    /// Why the sampler is silent (its file could not be read).
    public var problem: String? { fileProblem }

    /// Off the audio thread: copies the sample and allocates voices and scratch.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        outputRate = format.sampleRate
        sample.allocate(pendingSample.count + 1, fill: 0)
        if let p = sample.pointer, !pendingSample.isEmpty { pendingSample.withUnsafeBufferPointer { p.update(from: $0.baseAddress!, count: $0.count) } }
        sampleRateRatio = pendingSampleRate / outputRate
        voices.allocate(Self.voiceCount, fill: Voice())
        scratch.allocate(maxFrames, fill: 0)
    }

    /// `pow` only when a level moved.
    private var levelGain = DecibelGain()

    /// Audio thread: renders voices between MIDI events, applying each event on its frame.
    public func process(_ context: inout RenderContext) {
        let n = min(context.frameCount, scratch.count)
        guard let s = scratch.pointer, let v = voices.pointer else { return }
        s.update(repeating: 0, count: n)
        let level = levelGain.of(parameters.value(0))
        let releaseStep = Float(1 / max(frames(milliseconds: parameters.value(1), sampleRate: outputRate), 1))
        let tune = parameters.value(2)
        let root = Int(parameters.value(3))
        let mode = Int(parameters.value(4))
        let events = context.midiEvents
        var e = 0, frame = 0
        while frame < n {
            while e < events.count && Int(events[e].frameOffset) <= frame {
                handle(events[e], voices: v, tune: tune, root: root, mode: mode)
                e += 1
            }
            let end = e < events.count ? min(max(Int(events[e].frameOffset), frame + 1), n) : n
            render(from: frame, to: end, into: s, voices: v, level: level, releaseStep: releaseStep, loops: mode == 2)
            frame = end
        }
        for c in 0..<context.output.count {
            let input = context.input[c], output = context.output[c]
            for i in 0..<n { output[i] = input[i] + s[i] }
        }
    }

    /// Audio thread: applies one MIDI event (note-on takes a free voice or steals the oldest;
    /// in one-shot mode a note-off is ignored and the sample plays out).
    @inline(__always)
    private func handle(_ event: MIDIEvent, voices v: UnsafeMutablePointer<Voice>, tune: Double, root: Int, mode: Int) {
        if event.isNoteOn {
            var slot = 0
            for k in 0..<Self.voiceCount {
                if !v[k].active { slot = k; break }
                if v[k].startOrder < v[slot].startOrder { slot = k }
            }
            order += 1
            let semitones = Double(Int(event.data1) - root) + tune
            v[slot] = Voice(active: true, releasing: false, note: event.data1, position: 0,
                            increment: pow(2, semitones / 12) * sampleRateRatio,
                            gain: Float(event.data2) / 127, releaseGain: 1, startOrder: order)
        } else if event.isNoteOff {
            guard mode != 1 else { return }
            for k in 0..<Self.voiceCount where v[k].active && v[k].note == event.data1 { v[k].releasing = true }
        } else if event.isAllNotesOff {
            for k in 0..<Self.voiceCount { v[k].releasing = true }
        }
    }

    /// Audio thread: adds every active voice into `s[start..<end]`; a looping voice wraps to
    /// the sample's start instead of ending.
    @inline(__always)
    private func render(from start: Int, to end: Int, into s: UnsafeMutablePointer<Float>,
                        voices v: UnsafeMutablePointer<Voice>, level: Float, releaseStep: Float, loops: Bool) {
        guard let data = sample.pointer else { return }
        let last = Double(sample.count - 1)
        for k in 0..<Self.voiceCount where v[k].active {
            var voice = v[k]
            let g = voice.gain * level
            for i in start..<end {
                if voice.position >= last {
                    guard loops, last >= 1 else { voice.active = false; break }
                    // A step longer than the sample (a short one played high) wraps more than once.
                    voice.position = voice.position.truncatingRemainder(dividingBy: last)
                }
                let whole = Int(voice.position)
                let fraction = Float(voice.position - Double(whole))
                let a = data[whole], b = data[whole + 1]
                if voice.releasing {
                    voice.releaseGain -= releaseStep
                    if voice.releaseGain <= 0 { voice.active = false; break }
                }
                s[i] += (a + (b - a) * fraction) * g * voice.releaseGain
                voice.position += voice.increment
            }
            v[k] = voice
        }
    }

    /// Audio thread: silences every voice.
    public func reset() {
        for k in 0..<voices.count { voices[k].active = false }
    }

    /// Off the audio thread.
    public func release() { sample.free(); voices.free(); scratch.free() }
}
