import XCTest
@testable import TapedeckDSP

final class FilterTests: XCTestCase {
    private let testFrequencies = [50.0, 100, 200, 440, 1000, 3000, 8000, 15000]

    private func prepared(_ node: any Node) -> any Node {
        node.prepare(format: NodeFormat(sampleRate: Offline.sampleRate, channelCount: 1), maxFrames: 1024)
        return node
    }

    func testHighPassFollowsTheCookbookResponseWithinATenthOfADecibel() {
        for (cutoff, q) in [(80.0, 0.707), (1000, 2.0)] {
            let node = HighPassNode()
            node.parameters.set("cutoff", cutoff)
            node.parameters.set("resonance", q)
            _ = prepared(node)
            for f in testFrequencies {
                let expected = Cookbook.magnitudeDecibels(.highPass, f0: cutoff, q: q, at: f)
                let measured = Offline.measuredGainDecibels(node, frequency: f)
                XCTAssertEqual(measured, expected, accuracy: 0.1, "hpf \(cutoff) Hz Q \(q) at \(f) Hz")
            }
        }
    }

    func testLowPassFollowsTheCookbookResponseWithinATenthOfADecibel() {
        for (cutoff, q) in [(2000.0, 0.707), (500, 4.0)] {
            let node = LowPassNode()
            node.parameters.set("cutoff", cutoff)
            node.parameters.set("resonance", q)
            _ = prepared(node)
            for f in testFrequencies {
                let expected = Cookbook.magnitudeDecibels(.lowPass, f0: cutoff, q: q, at: f)
                guard expected > -60 else { continue }  // below that the float noise floor decides
                let measured = Offline.measuredGainDecibels(node, frequency: f)
                XCTAssertEqual(measured, expected, accuracy: 0.1, "lpf \(cutoff) Hz Q \(q) at \(f) Hz")
            }
        }
    }

    func testParametricEQFollowsTheCookbookShelvesAndPeakWithinATenthOfADecibel() {
        let node = EQNode()
        let p = node.parameters
        p.set("lowFreq", 150); p.set("lowGain", 6)
        p.set("midFreq", 1200); p.set("midGain", -9); p.set("midQ", 1.5)
        p.set("highFreq", 6000); p.set("highGain", 4)
        _ = prepared(node)
        let q = 0.5.squareRoot()
        for f in testFrequencies {
            let expected = Cookbook.magnitudeDecibels(.lowShelf, f0: 150, q: q, gainDecibels: 6, at: f)
                + Cookbook.magnitudeDecibels(.peak, f0: 1200, q: 1.5, gainDecibels: -9, at: f)
                + Cookbook.magnitudeDecibels(.highShelf, f0: 6000, q: q, gainDecibels: 4, at: f)
            XCTAssertEqual(Offline.measuredGainDecibels(node, frequency: f), expected, accuracy: 0.1, "eq at \(f) Hz")
        }
    }

    /// A mono EQ runs its three bands in one pass (the steady cascade); a stereo one band
    /// after band. Both are the same arithmetic: the mono output equals the stereo one's left
    /// channel bit for bit, before, during and after a glide (which leaves the cascade).
    func testMonoEQCascadeGivesTheSameSamplesAsBandAfterBand() {
        func eq() -> EQNode {
            let node = EQNode()
            let p = node.parameters
            p.set("lowFreq", 150); p.set("lowGain", 6)
            p.set("midFreq", 1200); p.set("midGain", -9); p.set("midQ", 1.5)
            p.set("highFreq", 6000); p.set("highGain", 4)
            return node
        }
        var noise = NoiseSource(seed: 7)
        let input = (0..<12000).map { _ in noise.nextBipolar() * 0.5 }
        let mono = eq(), stereo = eq()
        var monoOut: [Float] = [], leftOut: [Float] = []
        for (part, midGain) in [(0..<4000, -9.0), (4000..<8000, 3.0), (8000..<12000, 3.0)] {
            mono.parameters.set("midGain", midGain)
            stereo.parameters.set("midGain", midGain)
            let slice = Array(input[part])
            monoOut += Offline.render(mono, input: [slice], blockSize: 100, prepare: part.lowerBound == 0)[0]
            leftOut += Offline.render(stereo, input: [slice, slice.reversed()], blockSize: 100,
                                      prepare: part.lowerBound == 0)[0]
        }
        XCTAssertEqual(monoOut, leftOut)
        XCTAssertNotEqual(monoOut, input, "the EQ changed the signal")
    }

    func testAFlatEQPassesAudioUnchanged() {
        let node = prepared(EQNode())
        XCTAssertEqual(Offline.measuredGainDecibels(node, frequency: 1000), 0, accuracy: 0.01)
    }

    func testACutoffChangeGlidesToTheNewResponse() {
        let node = LowPassNode()
        node.parameters.set("cutoff", 500)
        _ = prepared(node)
        node.parameters.set("cutoff", 5000)
        // After a second the glide has long finished: 2 kHz passes almost untouched.
        let expected = Cookbook.magnitudeDecibels(.lowPass, f0: 5000, q: 0.707, at: 2000)
        XCTAssertEqual(Offline.measuredGainDecibels(node, frequency: 2000), expected, accuracy: 0.1)
    }

    /// The stereo path runs two frames per step (direct form I) after two in the transposed
    /// form, and hands its state back in that form: whatever the block sizes (one frame, two,
    /// odd tails), in place, each channel is the mono filter's output (the same two-frame
    /// steps, lane for lane) to within rounding, and a glide mid-way is followed the same.
    func testStereoFilterMatchesMonoAtEveryBlockSize() {
        var noise = NoiseSource(seed: 11)
        let left = (0..<6000).map { _ in noise.nextBipolar() * 0.5 }
        let right = (0..<6000).map { _ in noise.nextBipolar() * 0.25 }
        for blockSize in [1, 2, 3, 7, 64, 511] {
            let stereo = LowPassNode(), monoLeft = LowPassNode(), monoRight = LowPassNode()
            for node in [stereo, monoLeft, monoRight] { node.parameters.set("cutoff", 1500); node.parameters.set("resonance", 2) }
            var out: [[Float]] = [[], []], refL: [Float] = [], refR: [Float] = []
            for (part, cutoff) in [(0..<2000, 1500.0), (2000..<6000, 6000.0)] {
                for node in [stereo, monoLeft, monoRight] { node.parameters.set("cutoff", cutoff) }
                let first = part.lowerBound == 0
                let y = Offline.render(stereo, input: [Array(left[part]), Array(right[part])], blockSize: blockSize, prepare: first)
                out[0] += y[0]; out[1] += y[1]
                refL += Offline.render(monoLeft, input: [Array(left[part])], blockSize: blockSize, prepare: first)[0]
                refR += Offline.render(monoRight, input: [Array(right[part])], blockSize: blockSize, prepare: first)[0]
            }
            XCTAssertLessThan(zip(out[0], refL).map { abs($0 - $1) }.max() ?? 1, 1e-6, "left at blocks of \(blockSize)")
            XCTAssertLessThan(zip(out[1], refR).map { abs($0 - $1) }.max() ?? 1, 1e-6, "right at blocks of \(blockSize)")
            XCTAssertGreaterThan(zip(out[0], left).map { abs($0 - $1) }.max() ?? 0, 0.01, "the filter changed the signal")
        }
    }

    func testEachChannelIsFilteredWithItsOwnState() throws {
        let instance = try Chain(parsing: "hpf:200,lpf:2000").instantiate()
        let node = instance.nodes[0]
        let left = Offline.sine(1000, count: 4800), right = [Float](repeating: 0, count: 4800)
        let y = Offline.render(node, input: [left, right])
        XCTAssertEqual(Offline.peak(y[1]), 0, "silence on the right stays silent")
        let reference = HighPassNode()
        reference.parameters.set("cutoff", 200)
        let mono = Offline.render(reference, input: [left])[0]
        XCTAssertEqual(zip(y[0], mono).map { abs($0 - $1) }.max(), 0, "the left channel matches the same filter run in mono")
    }
}
