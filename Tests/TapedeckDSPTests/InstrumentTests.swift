import XCTest
@testable import TapedeckDSP

final class InstrumentTests: XCTestCase {
    /// A decaying 0.5-amplitude cosine: non-zero from its very first frame.
    private let sample: [Float] = (0..<9600).map { Float(0.5 * cos(Double($0) * 0.05) * exp(-Double($0) / 4000)) }

    func testSamplerNoteOnAtOffset412SoundsFromFrame412() {
        let node = SamplerNode()
        node.setSample(sample, sampleRate: 48000, rootNote: 60)
        let y = Offline.render(node, input: [[Float](repeating: 0, count: 1024)], blockSize: 1024,
                               midi: [.noteOn(note: 60, velocity: 127, frameOffset: 412)])[0]
        XCTAssertEqual(Offline.peak(y, 0..<412), 0, "silent before the note")
        XCTAssertEqual(y[412], 0.5, accuracy: 1e-6, "the sample's first frame lands on 412")
        XCTAssertEqual(y[413], sample[1], accuracy: 1e-6)
    }

    func testSamplerPitchesByNoteAndScalesByVelocity() {
        let node = SamplerNode()
        let ramp = (0..<4800).map { Float($0) / 4800 }
        node.setSample(ramp, sampleRate: 48000, rootNote: 60)
        let y = Offline.render(node, input: [[Float](repeating: 0, count: 2048)], blockSize: 512,
                               midi: [.noteOn(note: 72, velocity: 64, frameOffset: 0)])[0]
        // An octave up reads the sample twice as fast; velocity 64 scales by 64/127.
        XCTAssertEqual(y[1000], ramp[2000] * 64 / 127, accuracy: 1e-5)
    }

    func testSamplerNoteOffFadesTheVoiceOutOverTheReleaseTime() {
        let node = SamplerNode()
        node.parameters.set("release", 10)
        node.setSample([Float](repeating: 0.5, count: 48000), sampleRate: 48000)
        let y = Offline.render(node, input: [[Float](repeating: 0, count: 4800)], blockSize: 256,
                               midi: [.noteOn(note: 60, velocity: 127, frameOffset: 0), .noteOff(note: 60, frameOffset: 1000)])[0]
        XCTAssertEqual(y[999], 0.5, accuracy: 1e-6)
        XCTAssertLessThan(y[1240], 0.5 * 0.51)       // half-way through the 480-frame release
        XCTAssertEqual(Offline.peak(y, 1480..<4800), 0)
    }

    func testMIDIGatePassesAudioOnlyWhileANoteIsHeld() {
        let node = MIDIGateNode()
        node.parameters.set("attack", 0.1)
        node.parameters.set("release", 0.1)
        let x = [Float](repeating: 0.5, count: 4096)
        let y = Offline.render(node, input: [x], blockSize: 1024,
                               midi: [.noteOn(note: 40, velocity: 100, frameOffset: 1500), .noteOff(note: 40, frameOffset: 3000)])[0]
        XCTAssertEqual(Offline.peak(y, 0..<1500), 0, "closed before the note")
        XCTAssertGreaterThan(y[1500], 0, "opens on the note-on's frame")
        XCTAssertEqual(y[1600], 0.5, accuracy: 1e-4)
        XCTAssertEqual(y[2999], 0.5, accuracy: 1e-4)
        XCTAssertLessThan(Offline.peak(y, 3200..<4096), 1e-5, "closed after the note-off")
    }

    func testSamplerOneShotIgnoresNoteOffsAndLoopRepeatsWhileHeld() {
        let ramp = (0..<1000).map { Float($0) / 1000 }
        let gate = SamplerNode(), oneshot = SamplerNode(), loop = SamplerNode()
        for (node, mode) in [(gate, 0.0), (oneshot, 1.0), (loop, 2.0)] {
            node.setSample(ramp, sampleRate: 48000, rootNote: 60)
            node.parameters.set("mode", mode)
            node.parameters.set("release", 1)
        }
        let events: [MIDIEvent] = [.noteOn(note: 60, velocity: 127, frameOffset: 0), .noteOff(note: 60, frameOffset: 300)]
        let g = Offline.render(gate, input: [[Float](repeating: 0, count: 4000)], blockSize: 512, midi: events)[0]
        let o = Offline.render(oneshot, input: [[Float](repeating: 0, count: 4000)], blockSize: 512, midi: events)[0]
        let l = Offline.render(loop, input: [[Float](repeating: 0, count: 4000)], blockSize: 512,
                               midi: [.noteOn(note: 60, velocity: 127, frameOffset: 0), .noteOff(note: 60, frameOffset: 2500)])[0]
        XCTAssertEqual(Offline.peak(g, 400..<1000), 0, "gate: released at the note-off")
        XCTAssertEqual(o[800], ramp[800], accuracy: 1e-6, "one-shot: plays on past the note-off")
        XCTAssertEqual(Offline.peak(o, 1000..<4000), 0, "and stops at the sample's end")
        XCTAssertEqual(l[1500], ramp[501], accuracy: 1e-3, "loop: wraps to the start while held")
        XCTAssertEqual(Offline.peak(l, 2600..<4000), 0, "and stops after the release")
    }

    func testSamplerLoadsItsFileThroughTheHostAndSaysWhenItCannot() {
        struct Files: NodeFiles {
            func resolve(_ text: String) -> Result<String, NodeFileProblem> {
                text == "kick.wav" ? .success("/session/samples/kick.wav") : .failure(NodeFileProblem("no such file"))
            }
            func readSample(atPath path: String) -> Result<LoadedSample, NodeFileProblem> {
                .success(LoadedSample(samples: [0.25, 0.5, 0.75, 1, 0.5], sampleRate: 24000))
            }
        }
        let chain = try! Chain(parsing: "sampler:file=kick.wav:root=36:mode=oneshot")
        let instance = chain.instantiate(files: Files())
        instance.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: 64)
        XCTAssertEqual(instance.problems, [])
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: 64)
        [MIDIEvent.noteOn(note: 36, velocity: 127, frameOffset: 10)].withUnsafeBufferPointer { midi in
            var context = RenderContext(inPlace: buffers.channels, frameCount: 64, midiEvents: midi)
            instance.process(&context)
        }
        // At 24 kHz into 48 kHz at the root note: every sample lasts two frames, interpolated.
        XCTAssertEqual(buffers[0][10], 0.25, accuracy: 1e-6)
        XCTAssertEqual(buffers[0][11], 0.375, accuracy: 1e-6)
        XCTAssertEqual(buffers[0][12], 0.5, accuracy: 1e-6)
        let missing = try! Chain(parsing: "sampler:file=<snare 1.wav>").instantiate(files: Files())
        missing.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: 64)
        XCTAssertEqual(missing.problems.count, 1)
        XCTAssertTrue(missing.problems[0].contains("snare 1.wav") && missing.problems[0].contains("no such file"), missing.problems[0])
    }
}
