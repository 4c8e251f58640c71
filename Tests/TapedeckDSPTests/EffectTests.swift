import XCTest
@testable import TapedeckDSP

final class EffectTests: XCTestCase {
    func testGainScalesByItsDecibels() {
        let node = GainNode()
        node.parameters.set(0, -6)
        let y = Offline.render(node, input: [Offline.sine(1000, count: 4800)])[0]
        XCTAssertEqual(Offline.db(Offline.rms(y) / Offline.rms(Offline.sine(1000, count: 4800))), -6, accuracy: 1e-4)
    }

    func testPanTurnsAStereoBalanceAndLeavesMonoAlone() {
        let node = PanNode()
        node.parameters.set(0, 0.5)
        let one = [Float](repeating: 1, count: 100)
        let y = Offline.render(node, input: [one, one])
        XCTAssertEqual(y[0][50], 0.5, accuracy: 1e-6)
        XCTAssertEqual(y[1][50], 1, accuracy: 1e-6)
        let mono = Offline.render(PanNode(), input: [one])
        XCTAssertEqual(mono[0][50], 1)
    }

    func testReverbTailIsLongStableAndDecays() {
        var x = [Float](repeating: 0, count: 48000 * 3)
        x[0] = 1
        let node = ReverbNode()
        node.parameters.set("mix", 1)
        let y = Offline.render(node, input: [x, x])
        let early = Offline.rms(y[0], 2400..<24000), late = Offline.rms(y[0], 96000..<120000)
        XCTAssertGreaterThan(early, 1e-4, "there is a tail")
        XCTAssertLessThan(late, early / 10, "and it decays")
        XCTAssertTrue(y[0].allSatisfy(\.isFinite))
        XCTAssertNotEqual(y[0][3000], y[1][3000], "the stereo spread decorrelates the channels")
    }

    func testChorusAtZeroMixIsTransparentAndAtFullMixIsDelayedByItsCentreDelay() {
        let dry = ChorusNode()
        dry.parameters.set("mix", 0)
        let x = Offline.sine(300, count: 9600)
        XCTAssertEqual(Offline.render(dry, input: [x])[0], x)
        let wet = ChorusNode()
        wet.parameters.set("mix", 1)
        wet.parameters.set("depth", 0)
        wet.parameters.set("delay", 10)
        var impulse = [Float](repeating: 0, count: 1000)
        impulse[0] = 1
        XCTAssertEqual(Offline.render(wet, input: [impulse])[0][480], 1, accuracy: 1e-6)
    }

    func testPhaserCutsSomeFrequencyWhileSweeping() {
        let node = PhaserNode()
        node.parameters.set("rate", 0.02)
        node.parameters.set("depth", 0)     // parks every stage's corner at 200 Hz
        node.parameters.set("feedback", 0)
        node.parameters.set("mix", 0.5)
        node.prepare(format: NodeFormat(sampleRate: Offline.sampleRate, channelCount: 1), maxFrames: 1024)
        // Each first-order allpass shifts -45° where tan(πf/fs) = tan(πfc/fs)·tan(π/8); four
        // make -180° there, so dry + wet cancel. At the corner (-360°) they add back to unity.
        let fs = Offline.sampleRate
        let notch = fs / Double.pi * atan(tan(Double.pi * 200 / fs) * tan(Double.pi / 8))
        XCTAssertLessThan(Offline.measuredGainDecibels(node, frequency: notch), -30)
        XCTAssertEqual(Offline.measuredGainDecibels(node, frequency: 200), 0, accuracy: 0.1)
    }

    func testSaturationIsLinearForSmallSignalsAndNeverPassesFullScale() {
        let node = SaturationNode()
        node.parameters.set("drive", 12)
        let small = Offline.render(node, input: [Offline.sine(100, amplitude: 0.001, count: 4800)])[0]
        XCTAssertEqual(Offline.db(Offline.rms(small) / Offline.rms(Offline.sine(100, amplitude: 0.001, count: 4800))), 12, accuracy: 0.05)
        let hot = Offline.render(node, input: [Offline.sine(100, amplitude: 8, count: 4800)])[0]
        XCTAssertLessThanOrEqual(Offline.peak(hot), 1)
        XCTAssertGreaterThan(Offline.peak(hot), 0.99)
    }

    func testToneGeneratorPlaysItsFrequencyAtItsLevel() {
        let node = ToneNode()
        node.parameters.set("frequency", 1000)
        node.parameters.set("level", -6)
        let y = Offline.render(node, input: [[Float](repeating: 0, count: 48000)])[0]
        XCTAssertEqual(Offline.db(Double(Offline.peak(y))), -6, accuracy: 0.01)
        // 1000 Hz: 48 frames per cycle, so the wave repeats exactly.
        XCTAssertEqual(y[100], y[148], accuracy: 1e-4)
        let crossings = zip(y, y.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        XCTAssertEqual(crossings, 1000, accuracy: 1)
        node.parameters.set("wave", 2)
        let saw = Offline.render(node, input: [[Float](repeating: 0, count: 4800)])[0]
        XCTAssertEqual(Double(Offline.peak(saw)), 0.5, accuracy: 0.06)
    }

    func testPinkNoiseHasLessHighFrequencyEnergyThanWhite() {
        func highToLow(_ color: Double) -> Double {
            let node = NoiseNode()
            node.parameters.set("color", color)
            let y = Offline.render(node, input: [[Float](repeating: 0, count: 48000)])[0]
            let low = LowPassNode(), high = HighPassNode()
            low.parameters.set(0, 500); high.parameters.set(0, 5000)
            return Offline.rms(Offline.render(high, input: [y])[0]) / Offline.rms(Offline.render(low, input: [y])[0])
        }
        let white = highToLow(0), pink = highToLow(1)
        XCTAssertGreaterThan(white, 2.5)   // white: energy grows with bandwidth
        XCTAssertLessThan(pink, white / 3) // pink: -3 dB per octave
    }
}
