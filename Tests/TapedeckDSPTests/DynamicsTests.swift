import XCTest
@testable import TapedeckDSP

final class DynamicsTests: XCTestCase {
    func testCompressorOutputFollowsItsStaticCurveWithinTwoTenthsOfADecibel() {
        let threshold = -20.0, ratio = 4.0, knee = 6.0, makeup = 3.0
        for inputPeak in [-40.0, -26, -22, -20, -18, -12, -6, 0] {
            let node = CompressorNode()
            node.parameters.set("threshold", threshold)
            node.parameters.set("ratio", ratio)
            node.parameters.set("knee", knee)
            node.parameters.set("makeup", makeup)
            node.parameters.set("attack", 0.1)
            node.parameters.set("release", 500)
            let x = Offline.sine(1000, amplitude: pow(10, inputPeak / 20), count: 48000)
            let y = Offline.render(node, input: [x])[0]
            let window = 36000..<48000
            let outputPeak = inputPeak + Offline.db(Offline.rms(y, window) / Offline.rms(x, window))
            let expected = CompressorNode.staticCurve(inputDecibels: inputPeak, thresholdDecibels: threshold,
                                                      ratio: ratio, kneeDecibels: knee) + makeup
            XCTAssertEqual(outputPeak, expected, accuracy: 0.2, "input \(inputPeak) dB")
        }
    }

    /// The compressor works eight frames at a time in Float (curve and gain) around a Double
    /// detector: frame by frame it must match the tutorial's compressor written plainly in
    /// Double — below, in and above the knee, both channels linked by their peak, blocks that
    /// are not a multiple of eight — to a thousandth of a decibel.
    func testCompressorMatchesTheTextbookFrameByFrame() {
        let threshold = -20.0, ratio = 4.0, knee = 6.0, attackMs = 2.0, releaseMs = 50.0, rate = 48000.0
        let node = CompressorNode()
        node.parameters.set("threshold", threshold)
        node.parameters.set("ratio", ratio)
        node.parameters.set("knee", knee)
        node.parameters.set("attack", attackMs)
        node.parameters.set("release", releaseMs)
        let count = 24000
        // A 440 Hz tone on the left and 700 Hz on the right whose levels sweep -46 → +2 dB
        // and back, so the louder side changes and every part of the curve is crossed.
        var left = [Float](repeating: 0, count: count), right = left
        for i in 0..<count {
            let sweep = 1 - abs(Double(i) / Double(count) * 2 - 1)
            let level = pow(10, (-46 + 48 * sweep) / 20)
            left[i] = Float(level * sin(2 * .pi * 440 * Double(i) / rate))
            right[i] = Float(0.7 * level * sin(2 * .pi * 700 * Double(i) / rate + 1))
        }
        let out = Offline.render(node, input: [left, right], blockSize: 37)
        let attack = exp(-1 / (attackMs * 0.001 * rate)), release = exp(-1 / (releaseMs * 0.001 * rate))
        var y = 0.0, worst = 0.0
        for i in 0..<count {
            let peak = Double(max(abs(left[i]), abs(right[i])))
            var x = 0.0
            if peak > 0 {
                let level = 20 * log10(peak)
                x = level - CompressorNode.staticCurve(inputDecibels: level, thresholdDecibels: threshold, ratio: ratio, kneeDecibels: knee)
            }
            let c = x > y ? attack : release
            y = c * y + (1 - c) * x
            let gain = pow(10, -y / 20)
            for (input, output) in [(left, out[0]), (right, out[1])] where abs(input[i]) > 1e-4 {
                worst = max(worst, abs(Offline.db(Double(output[i]) / (Double(input[i]) * gain))))
            }
        }
        XCTAssertLessThan(worst, 0.001, "largest gain difference from the textbook, dB")
        XCTAssertGreaterThan(y, 0, "the sweep ends compressed, so the test saw compression")
    }

    func testCompressorStaticCurveHasTheTextbookShape() {
        // Well below: unchanged. Well above: threshold + excess / ratio. Knee centre: halfway.
        XCTAssertEqual(CompressorNode.staticCurve(inputDecibels: -40, thresholdDecibels: -20, ratio: 4, kneeDecibels: 6), -40)
        XCTAssertEqual(CompressorNode.staticCurve(inputDecibels: 0, thresholdDecibels: -20, ratio: 4, kneeDecibels: 6), -15)
        XCTAssertEqual(CompressorNode.staticCurve(inputDecibels: -20, thresholdDecibels: -20, ratio: 4, kneeDecibels: 6),
                       -20 + (0.25 - 1) * 9 / 12, accuracy: 1e-12)
    }

    func testGateClosesBelowItsThresholdAndOpensAboveIt() {
        let node = GateNode()
        node.parameters.set("threshold", -40)
        node.parameters.set("range", -80)
        let quiet = Offline.sine(200, amplitude: pow(10, -50.0 / 20), count: 24000)
        let loud = Offline.sine(200, amplitude: pow(10, -20.0 / 20), count: 24000)
        let y = Offline.render(node, input: [quiet + loud + quiet + quiet])[0]
        // Quiet input: attenuated by the 80 dB range (-50 → about -133 dBFS peak).
        XCTAssertLessThan(Offline.db(Double(Offline.peak(y, 4800..<24000))), -120)
        // Loud input: passes at unity once open.
        XCTAssertEqual(Offline.db(Offline.rms(y, 28800..<48000) / Offline.rms(loud, 4800..<24000)), 0, accuracy: 0.05)
        // After hold and release the gate has closed again.
        XCTAssertLessThan(Offline.db(Double(Offline.peak(y, 84000..<96000))), -100)
    }

    func testLimiterNeverExceedsItsCeilingOnHotRandomInput() {
        let node = LimiterNode()
        node.parameters.set("ceiling", -1)
        node.parameters.set("drive", 12)
        var noise = NoiseSource(seed: 42)
        let left = (0..<96000).map { _ in noise.nextBipolar() * 2 }
        let right = (0..<96000).map { _ in noise.nextBipolar() * 3 }
        let y = Offline.render(node, input: [left, right], blockSize: 333)
        let ceiling = Float(pow(10, -1.0 / 20))
        XCTAssertLessThanOrEqual(Offline.peak(y[0]), ceiling)
        XCTAssertLessThanOrEqual(Offline.peak(y[1]), ceiling)
        // And it is a limiter, not a mute: the loudest output comes near the ceiling.
        XCTAssertGreaterThan(Offline.peak(y[0]), ceiling * 0.5)
    }

    func testLimiterNeverExceedsItsCeilingOnImpulsesAndCatchesThemAhead() {
        let node = LimiterNode()
        node.parameters.set("ceiling", -6)
        node.parameters.set("release", 5)
        var x = [Float](repeating: 0.01, count: 48000)
        for (k, at) in [1000, 1001, 5003, 20000, 20240, 47990].enumerated() { x[at] = k % 2 == 0 ? 40 : -25 }
        let y = Offline.render(node, input: [x], blockSize: 64)[0]
        let ceiling = Float(pow(10, -6.0 / 20))
        XCTAssertLessThanOrEqual(Offline.peak(y), ceiling)
        // The impulse comes out exactly `latencyFrames` later, at the ceiling.
        XCTAssertEqual(abs(y[1000 + node.latencyFrames]), ceiling, accuracy: 1e-4)
        // Quiet material far from any peak passes at unity (delayed by the look-ahead).
        XCTAssertEqual(y[12000 + node.latencyFrames], 0.01, accuracy: 1e-6)
    }
}
