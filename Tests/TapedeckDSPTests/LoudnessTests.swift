import CTestSupport
import Foundation
import XCTest
import TapedeckCore
@testable import TapedeckDSP

/// EBU R128 loudness through libebur128, checked against the EBU's test signals (Tech 3341,
/// the ones that can be generated: steady and gated sines) and the live meter against the
/// offline measurement, with the live meter's promise of no allocation on the audio thread.
final class LoudnessTests: XCTestCase {
    static let rate = 48000

    /// Stereo, both channels the same `hertz` sine at `dBFS` peak, one segment per entry.
    static func sines(_ segments: [(dBFS: Double, seconds: Double)], hertz: Double = 1000) -> [[Float]] {
        var mono: [Float] = []
        for s in segments {
            let amplitude = pow(10, s.dBFS / 20)
            let start = mono.count
            for i in 0..<Int(s.seconds * Double(rate)) {
                mono.append(Float(amplitude * sin(2 * Double.pi * hertz * Double(start + i) / Double(rate))))
            }
        }
        return [mono, mono]
    }

    /// Feeds planar channels to `add` in blocks of `block` frames.
    static func feed(_ channels: [[Float]], block: Int, _ add: (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Void) {
        let buffers = channels.map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer { buffers.forEach { $0.deallocate() } }
        var done = 0
        let total = channels[0].count
        buffers.withUnsafeBufferPointer { table in
            while done < total {
                let n = min(block, total - done)
                for (c, channel) in channels.enumerated() {
                    channel.withUnsafeBufferPointer { buffers[c].update(from: $0.baseAddress! + done, count: n) }
                }
                add(table.baseAddress!, n)
                done += n
            }
        }
    }

    static func analyse(_ channels: [[Float]]) throws -> LoudnessReport {
        let analysis = try LoudnessAnalysis(channelCount: channels.count, sampleRate: rate)
        feed(channels, block: 4096) { analysis.add($0, frameCount: $1) }
        return analysis.finish()
    }

    func testA1kHzSineAtMinus23dBFSReadsMinus23LUFS() throws {
        // Tech 3341 case 1: 20 s stereo 1 kHz at −23 dBFS → M, S, I = −23.0 ± 0.1.
        let report = try LoudnessTests.analyse(LoudnessTests.sines([(-23, 20)]))
        XCTAssertEqual(report.integratedLUFS, -23.0, accuracy: 0.1)
        let steady = report.momentaryLUFS.dropFirst(5)
        XCTAssertEqual(steady.min() ?? 0, -23.0, accuracy: 0.1)
        XCTAssertEqual(steady.max() ?? 0, -23.0, accuracy: 0.1)
    }

    func testA1kHzSineAtMinus33dBFSReadsMinus33LUFS() throws {
        // Tech 3341 case 2.
        XCTAssertEqual(try LoudnessTests.analyse(LoudnessTests.sines([(-33, 20)])).integratedLUFS, -33.0, accuracy: 0.1)
    }

    func testTheRelativeGateLeavesOutTheQuietPartsOfATone() throws {
        // Tech 3341 case 3: −36, −23, −36 dBFS for 10, 60, 10 s → I = −23.0 ± 0.1.
        let report = try LoudnessTests.analyse(LoudnessTests.sines([(-36, 10), (-23, 60), (-36, 10)]))
        XCTAssertEqual(report.integratedLUFS, -23.0, accuracy: 0.1)
    }

    func testTheAbsoluteGateLeavesOutNearSilence() throws {
        // Tech 3341 case 4: −72, −36, −23, −36, −72 dBFS for 10, 10, 60, 10, 10 s → −23.0 ± 0.1.
        let report = try LoudnessTests.analyse(LoudnessTests.sines([(-72, 10), (-36, 10), (-23, 60), (-36, 10), (-72, 10)]))
        XCTAssertEqual(report.integratedLUFS, -23.0, accuracy: 0.1)
    }

    func testLoudnessRangeOfTwoLevelsIsTheirDifference() throws {
        // Tech 3342 case 1: 20 s at −20 dBFS then 20 s at −30 dBFS → LRA 10 ± 1 LU.
        let report = try LoudnessTests.analyse(LoudnessTests.sines([(-20, 20), (-30, 20)]))
        XCTAssertEqual(report.rangeLU, 10, accuracy: 1)
    }

    func testTruePeakFindsThePeakBetweenSamples() throws {
        // A quarter-rate sine 45° off the sample grid: every sample is 3.01 dB under the peak.
        let amplitude = 0.5
        let mono = (0..<Self.rate).map { Float(amplitude * sin(Double.pi / 2 * Double($0) + Double.pi / 4)) }
        let report = try LoudnessTests.analyse([mono, mono])
        XCTAssertEqual(report.samplePeakDecibels, 20 * log10(amplitude) - 3.01, accuracy: 0.02)
        XCTAssertEqual(report.truePeakDecibels, 20 * log10(amplitude), accuracy: 0.3)
        XCTAssertGreaterThan(report.truePeakDecibels, report.samplePeakDecibels + 2.5)
    }

    func testTheLiveMeterAgreesWithTheOfflineMeasurement() throws {
        let signal = LoudnessTests.sines([(-30, 4), (-18, 6), (-26, 5)])
        let offline = try LoudnessTests.analyse(signal)
        let meter = try LoudnessMeter(channelCount: 2, sampleRate: Self.rate, maxFrames: 256)
        LoudnessTests.feed(signal, block: 256) { meter.add($0, frameCount: $1) }
        let live = meter.reading()
        // The histogram the live meter keeps quantises integrated loudness to 0.1 LU.
        XCTAssertEqual(live.integratedLUFS, offline.integratedLUFS, accuracy: 0.1)
        XCTAssertEqual(live.momentaryLUFS, offline.momentaryLUFS.last!, accuracy: 0.05)
        XCTAssertEqual(live.shortTermLUFS, -26, accuracy: 0.1, "the last 3 s are all a 1 kHz sine at −26 dBFS")
        XCTAssertEqual(live.truePeakDecibels, -18, accuracy: 0.2)
    }

    func testTheLiveMeterReadsSilenceBeforeItHearsAnything() throws {
        let meter = try LoudnessMeter(channelCount: 2, sampleRate: Self.rate, maxFrames: 64)
        XCTAssertEqual(meter.reading(), .silent)
    }

    func testTheLiveMeterDoesNotAllocateWhileMeasuring() throws {
        let signal = LoudnessTests.sines([(-20, 10)])
        let meter = try LoudnessMeter(channelCount: 2, sampleRate: Self.rate, maxFrames: 64)
        var allocations: Int64 = 0
        // 64-frame blocks (the audio thread's size), longer than the 3 s window and many
        // 400 ms gating blocks, with readings published every 100 ms.
        LoudnessTests.feed(signal, block: 64) { channels, n in
            td_alloc_count_begin()
            meter.add(channels, frameCount: n)
            allocations += td_alloc_count_end()
        }
        XCTAssertEqual(allocations, 0, "LoudnessMeter.add allocated")
        XCTAssertEqual(meter.reading().integratedLUFS, -20, accuracy: 0.1)
    }

    func testTheCounterSeesLibebur128AllocateOutsideHistogramMode() throws {
        // The control for the test above: the exact (list) mode mallocs a block per 400 ms,
        // and the counter sees allocations made inside libebur128.
        let signal = LoudnessTests.sines([(-20, 2)])
        let analysis = try LoudnessAnalysis(channelCount: 2, sampleRate: Self.rate)
        var allocations: Int64 = 0
        LoudnessTests.feed(signal, block: 4800) { channels, n in
            let state = analysis
            td_alloc_count_begin()
            state.add(channels, frameCount: n)
            allocations += td_alloc_count_end()
        }
        XCTAssertGreaterThan(allocations, 0)
    }

    func testAChannelCountOrRateLibebur128CannotTakeIsRefused() {
        XCTAssertThrowsError(try LoudnessMeter(channelCount: 0, sampleRate: 48000, maxFrames: 64))
        XCTAssertThrowsError(try LoudnessAnalysis(channelCount: 2, sampleRate: 0))
    }
}
