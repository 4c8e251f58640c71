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
}
