import CMixKernels
import XCTest
@testable import TapedeckDSP

/// The per-strip hot spots of issue 41 against the code they replaced: the compressor's C
/// kernel against the Swift passes (bit for bit), the mono biquad two frames a step against
/// the transposed form (within rounding), and the EQ's skipped flat bands against bands run.
final class StripKernelTests: XCTestCase {
    /// Loud and quiet stretches, so the detector attacks, releases and turns inside groups of eight.
    private func material(count: Int, seed: UInt32) -> [Float] {
        var noise = NoiseSource(seed: seed)
        return (0..<count).map { i in
            let envelope = 0.02 + 0.9 * Float(0.5 + 0.5 * sin(Double(i) * 2 * .pi / 1900))
            let burst: Float = (i / 700) % 3 == 0 ? 1 : 0.1
            return envelope * burst * noise.nextBipolar()
        }
    }

    /// `td_comp_gains` gives the Swift reference's gains and detector state bit for bit: mono
    /// and stereo, at the engine's block sizes and at odd ones (short groups of eight), for
    /// soft and hard knees and fast and slow time constants, the state carried block to block.
    func testCompressorKernelMatchesTheSwiftPassesBitForBit() {
        let left = material(count: 9000, seed: 3), right = material(count: 9000, seed: 5)
        let settings: [(threshold: Float, ratio: Float, knee: Float, attackMs: Double, releaseMs: Double)] = [
            (-18, 4, 6, 10, 100), (-30, 20, 0, 0.05, 5), (-6, 1.5, 24, 200, 2000),
        ]
        var turned = 0
        for s in settings {
            let attackC = Float(onePoleCoefficient(milliseconds: s.attackMs, sampleRate: 48000))
            let releaseC = Float(onePoleCoefficient(milliseconds: s.releaseMs, sampleRate: 48000))
            let attack = DetectorStep(coefficient: attackC), release = DetectorStep(coefficient: releaseC)
            let steps = UnsafeMutablePointer<td_detector_step>.allocate(capacity: 2)
            defer { steps.deallocate() }
            td_detector_step_init(steps, attackC)
            td_detector_step_init(steps + 1, releaseC)
            let slope = 1 - 1 / s.ratio, kneeScale = s.knee > 0 ? (1 - 1 / s.ratio) / (2 * s.knee) : 0
            for channels in [1, 2] {
                for block in [256, 64, 37, 9, 8, 1] {
                    var yReference: Float = 0, yKernel: Float = 0
                    var start = 0
                    while start < left.count {
                        let n = min(block, left.count - start)
                        let sources = [Array(left[start..<(start + n)]), Array(right[start..<(start + n)])].prefix(channels)
                        let buffers = sources.map { source -> UnsafeMutablePointer<Float> in
                            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
                            p.initialize(from: source, count: n)
                            return p
                        }
                        defer { buffers.forEach { $0.deallocate() } }
                        var reference = [Float](repeating: 0, count: n), kernel = [Float](repeating: 0, count: n)
                        buffers.withUnsafeBufferPointer { inputs in
                            yReference = CompressorNode.referenceGains(
                                inputs: inputs, channels: channels, frameCount: n, into: &reference, from: yReference,
                                threshold: s.threshold, knee: s.knee, slope: slope, kneeScale: kneeScale, attack: attack, release: release)
                            let table = UnsafeRawPointer(inputs.baseAddress!).assumingMemoryBound(to: UnsafePointer<Float>?.self)
                            yKernel = td_comp_gains(table, Int32(channels), n, &kernel, yKernel, s.threshold, s.knee, slope, kneeScale,
                                                    steps, steps + 1)
                        }
                        XCTAssertEqual(kernel.map(\.bitPattern), reference.map(\.bitPattern),
                                       "gains at \(start), blocks of \(block), \(channels) ch, \(s)")
                        XCTAssertEqual(yKernel.bitPattern, yReference.bitPattern, "detector state at \(start)")
                        if reference.contains(where: { $0 < 0.9 }) { turned += 1 }
                        start += n
                        if kernel.map(\.bitPattern) != reference.map(\.bitPattern) { return }
                    }
                }
            }
        }
        XCTAssertGreaterThan(turned, 100, "the material drove the compressor")
    }

    /// The mono biquad two frames a step (`processPairs`) gives the transposed form's output
    /// (`process`, one frame a step) to within Float rounding, at every block size (one
    /// frame, two, odd tails), for a 10 Hz high-pass (poles nearest 1, where a direct form
    /// loses precision first) and a resonant peak, its state handed on between blocks.
    func testMonoBiquadInPairsMatchesTheTransposedForm() {
        let input = material(count: 12000, seed: 9)
        let filters = [
            BiquadCoefficients.rbj(.highPass, frequencyHertz: 10, q: 0.707, sampleRate: 48000),
            BiquadCoefficients.rbj(.highPass, frequencyHertz: 80, q: 0.707, sampleRate: 48000),
            BiquadCoefficients.rbj(.peak, frequencyHertz: 3000, q: 8, gainDecibels: 12, sampleRate: 48000),
        ]
        for coefficients in filters {
            for block in [1, 2, 3, 5, 7, 64, 256, 511] {
                var pairs = input, reference = [Float](repeating: 0, count: input.count)
                var state: [Double] = [0, 0]
                var z1 = 0.0, z2 = 0.0
                var start = 0
                while start < input.count {
                    let n = min(block, input.count - start)
                    pairs.withUnsafeMutableBufferPointer { p in
                        state.withUnsafeMutableBufferPointer { s in
                            coefficients.processPairs(UnsafePointer(p.baseAddress! + start), p.baseAddress! + start, count: n,
                                                      state: s.baseAddress!)
                        }
                    }
                    input.withUnsafeBufferPointer { x in
                        reference.withUnsafeMutableBufferPointer { y in
                            coefficients.process(x.baseAddress! + start, y.baseAddress! + start, count: n, z1: &z1, z2: &z2)
                        }
                    }
                    start += n
                }
                let worst = zip(pairs, reference).map { abs($0 - $1) }.max() ?? 1
                XCTAssertLessThan(worst, 1e-6, "\(coefficients) at blocks of \(block)")
                XCTAssertGreaterThan(zip(reference, input).map { abs($0 - $1) }.max() ?? 0, 0.01, "the filter changed the signal")
            }
        }
    }

    /// A flat EQ hands its input on bit for bit (its three 0 dB bands are skipped). A band
    /// brought back to 0 dB rings out first and is skipped only once its memory is empty:
    /// the output matches the three bands run every frame, within rounding, before, through
    /// and after the change.
    func testFlatBandsAreSkippedOnlyOnceTheyHaveRungOut() {
        let input = material(count: 48000, seed: 13)
        let flat = EQNode()
        XCTAssertEqual(Offline.render(flat, input: [input], blockSize: 256)[0].map(\.bitPattern), input.map(\.bitPattern))

        let node = EQNode()
        node.parameters.set("lowGain", 9)
        var bands = [SmoothedBiquad(shape: .lowShelf), SmoothedBiquad(shape: .peak), SmoothedBiquad(shape: .highShelf)]
        let settings = [(100.0, EQNode.shelfQ), (1000.0, 1.0), (8000.0, EQNode.shelfQ)]
        for (i, (f, q)) in settings.enumerated() {
            bands[i].prepare(channelCount: 1, sampleRate: 48000, frequencyHertz: f, q: q, gainDecibels: i == 0 ? 9 : 0)
        }
        var out: [Float] = [], reference: [Float] = []
        for (part, lowGain) in [(0..<4000, 9.0), (4000..<48000, 0.0)] {
            node.parameters.set("lowGain", lowGain)
            out += Offline.render(node, input: [Array(input[part])], blockSize: 256, prepare: part.lowerBound == 0)[0]
            var chunk = Array(input[part])
            var start = 0
            while start < chunk.count {
                let n = min(256, chunk.count - start)
                chunk.withUnsafeMutableBufferPointer { p in
                    var channel = p.baseAddress! + start
                    withUnsafePointer(to: &channel) { table in
                        let channels = UnsafeBufferPointer(start: table, count: 1)
                        for i in 0..<3 {
                            bands[i].setTargets(frequencyHertz: settings[i].0, q: settings[i].1, gainDecibels: i == 0 ? lowGain : 0)
                            bands[i].process(input: channels, output: channels, frameCount: n)
                        }
                    }
                }
                start += n
            }
            reference += chunk
        }
        XCTAssertLessThan(zip(out, reference).map { abs($0 - $1) }.max() ?? 1, 1e-6, "skipping never jumps")
        XCTAssertGreaterThan(zip(out.prefix(4000), input.prefix(4000)).map { abs($0 - $1) }.max() ?? 0, 0.05, "the shelf boosted")
        XCTAssertEqual(out.suffix(8000).map(\.bitPattern), input.suffix(8000).map(\.bitPattern), "rung out, the flat EQ passes audio on")
    }
}
