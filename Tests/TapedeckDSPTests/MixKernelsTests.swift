import XCTest
@testable import TapedeckDSP

/// The mix kernels against the plain loops they replace.
final class MixKernelsTests: XCTestCase {
    /// The meters' peak works on the samples' bits eight at a time: it must equal the largest
    /// absolute sample found one by one, NaNs passed over, infinities and negative peaks
    /// included, at every length (the tail is done one by one).
    func testPeakIsTheLargestAbsoluteSamplePassingOverNaN() {
        var noise = NoiseSource(seed: 3)
        for length in [0, 1, 7, 8, 9, 31, 32, 33, 100, 1000] {
            var samples = (0..<length).map { _ in noise.nextBipolar() }
            if length > 5 {
                samples[length / 2] = -1.5          // a negative peak
                samples[length / 3] = .nan          // passed over
                samples[length - 1] = -.nan
            }
            let expected = samples.reduce(Float(0)) { $1.isNaN ? $0 : max($0, abs($1)) }
            let measured = samples.withUnsafeBufferPointer { MixKernels.peak($0.baseAddress ?? UnsafePointer(bitPattern: 8)!, frameCount: length) }
            XCTAssertEqual(measured, expected, "length \(length)")
        }
        let loud: [Float] = [0.5, -.infinity, 0.25, 0, 0, 0, 0, 0, 0.1]
        XCTAssertEqual(loud.withUnsafeBufferPointer { MixKernels.peak($0.baseAddress!, frameCount: 9) }, .infinity)
        let quiet = [Float](repeating: -0.0, count: 16)
        XCTAssertEqual(quiet.withUnsafeBufferPointer { MixKernels.peak($0.baseAddress!, frameCount: 16) }, 0)
    }

    /// Automation's stepping kernels give frame i the gain `start + step × i` (stepped eight
    /// frames at a time, the tail one by one) within Float rounding, at every length a piece
    /// can have, in place and added into a buffer.
    func testSteppingRampAndAccumulateGiveEachFrameStartPlusStepTimesItsIndex() {
        var noise = NoiseSource(seed: 5)
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33] {
            let source = (0..<length).map { _ in noise.nextBipolar() }
            let base = (0..<length).map { _ in noise.nextBipolar() }
            let start: Float = 0.25, step: Float = -0.0123
            var ramped = source
            ramped.withUnsafeMutableBufferPointer { MixKernels.ramp($0.baseAddress ?? UnsafeMutablePointer(bitPattern: 8)!, frameCount: length,
                                                                   start: start, step: step) }
            var summed = base
            source.withUnsafeBufferPointer { s in
                summed.withUnsafeMutableBufferPointer { d in
                    MixKernels.accumulate(s.baseAddress ?? UnsafePointer(bitPattern: 8)!, into: d.baseAddress ?? UnsafeMutablePointer(bitPattern: 8)!,
                                          frameCount: length, start: start, step: step)
                }
            }
            for i in 0..<length {
                let gain = Double(start) + Double(step) * Double(i)
                XCTAssertEqual(Double(ramped[i]), Double(source[i]) * gain, accuracy: 1e-6, "ramp, length \(length), frame \(i)")
                XCTAssertEqual(Double(summed[i]), Double(base[i]) + Double(source[i]) * gain, accuracy: 1e-6, "accumulate, length \(length), frame \(i)")
            }
        }
    }
}
