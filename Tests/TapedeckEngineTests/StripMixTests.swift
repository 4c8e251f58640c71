import XCTest
import TapedeckDSP
@testable import TapedeckEngine

/// The fused mixing pass of a strip without a chain (`StripMixSink`, what the mix at speed
/// uses) against the strip's own path (ring → buffers, fader ramp, meter, pan accumulate, in
/// blocks): the bus must get the same bits and the meter the same peaks, through a fader and
/// pan glide, silence, the ring's wrap, odd lengths, a hard pan and mono — with the AVX2 steps
/// (`CMixKernels`) and with the Swift ones.
final class StripMixTests: XCTestCase {
    struct Case {
        var channels = 2
        var frameCount = 10_241
        var blockFrames = 1024
        var fader: (Float, Float) = (0.5, 1.3)
        var left: (Float, Float) = (0.7, 0.2)
        var right: (Float, Float) = (0.9, 0.9)
        /// Frames of silence before the ring's frames (a late disk, a region's start).
        var silence = 13
    }

    private var generator = SystemRandomNumberGenerator()

    private func channelTable(_ count: Int, frames: Int, fill: (Int) -> Float) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
        let t = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: count)
        for c in 0..<count {
            (t + c).initialize(to: .allocate(capacity: frames))
            for i in 0..<frames { t[c][i] = fill(i) }
        }
        return t
    }

    private func free(_ t: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, _ count: Int) {
        for c in 0..<count { t[c].deallocate() }
        t.deallocate()
    }

    /// Runs both paths on the same material and bus; returns (reference bus, fused bus,
    /// reference peaks, fused peaks, reference squares, fused squares).
    private func run(_ k: Case) -> (reference: [[Float]], fused: [[Float]], peaks: ([Float], [Float]), squares: ([Double], [Double])) {
        let n = k.frameCount, ch = k.channels
        let played = n - k.silence
        // The ring's indices start near its end, so the frames wrap round it half way.
        let capacity = played + 37
        let ringStart = capacity - played / 2 - 3
        var rng = generator
        let material = channelTable(ch, frames: played) { _ in Float.random(in: -1.2...1.2, using: &rng) }
        let initialBus = (0..<2).map { _ in (0..<n).map { _ in Float.random(in: -2...2, using: &rng) } }
        defer { free(material, ch) }
        func ring() -> FrameRing {
            let r = FrameRing(channelCount: ch, capacityFrames: capacity)
            // Move the ring's indices on, so the frames wrap round its end.
            r.push(nil, frameCount: ringStart)
            r.pop(into: nil, frameCount: ringStart)
            XCTAssertEqual(r.push(material, frameCount: played), played)
            return r
        }

        // The strip's path: frames into its buffers, then block by block as fadeAndPan does.
        let buffers = channelTable(ch, frames: n) { _ in 0 }
        let bus = channelTable(2, frames: n) { _ in 0 }
        defer { free(buffers, ch); free(bus, 2) }
        for c in 0..<2 { for i in 0..<n { bus[c][i] = initialBus[c][i] } }
        var sink = ChannelSink(channels: buffers, channelCount: ch)
        sink.silence(at: 0, count: k.silence)
        XCTAssertEqual(ring().pop(into: &sink, frameCount: played, destinationOffset: k.silence), played)
        var peaks = [Float](repeating: 0, count: 2), squares = [Double](repeating: 0, count: 2)
        var done = 0
        var fader = k.fader.0, left = k.left.0, right = k.right.0
        while done < n {
            let m = min(k.blockFrames, n - done)
            for c in 0..<ch { MixKernels.ramp(buffers[c] + done, frameCount: m, from: fader, to: k.fader.1) }
            for c in 0..<ch {
                peaks[c] = max(peaks[c], MixKernels.peak(buffers[c] + done, frameCount: m))
                squares[c] += MixKernels.sumOfSquares(buffers[c] + done, frameCount: m)
            }
            MixKernels.accumulate(buffers[0] + done, into: bus[0] + done, frameCount: m, startGain: left, endGain: k.left.1)
            MixKernels.accumulate(buffers[ch - 1] + done, into: bus[1] + done, frameCount: m, startGain: right, endGain: k.right.1)
            fader = k.fader.1; left = k.left.1; right = k.right.1
            done += m
        }
        let reference = (0..<2).map { c in Array(UnsafeBufferPointer(start: bus[c], count: n)) }

        // The fused pass onto the same starting bus.
        for c in 0..<2 { for i in 0..<n { bus[c][i] = initialBus[c][i] } }
        let ramp = min(k.blockFrames, n)
        var fused = StripMixSink(left: bus[0], right: bus[1], channelCount: ch, rampFrames: ramp,
                                 fader: .init(fader: k.fader.0, to: k.fader.1, over: ramp),
                                 panLeft: .init(pan: k.left.0, to: k.left.1, over: ramp),
                                 panRight: .init(pan: k.right.0, to: k.right.1, over: ramp))
        fused.silence(at: 0, count: k.silence)
        XCTAssertEqual(ring().pop(into: &fused, frameCount: played, destinationOffset: k.silence), played)
        let levels = fused.levels()
        let result = (0..<2).map { c in Array(UnsafeBufferPointer(start: bus[c], count: n)) }
        return (reference, result, (Array(peaks.prefix(ch)), Array([levels.peaks.0, levels.peaks.1].prefix(ch))),
                (Array(squares.prefix(ch)), Array([levels.squares.0, levels.squares.1].prefix(ch))))
    }

    /// Both ways the fused pass can run its eight-frame steps (AVX2 where the CPU has it, the
    /// Swift loop always) against the strip's path.
    private func assertSame(_ k: Case, file: StaticString = #filePath, line: UInt = #line) {
        let available = StripMixSink.usesAVX2
        defer { StripMixSink.usesAVX2 = available }
        for avx2 in available ? [true, false] : [false] {
            StripMixSink.usesAVX2 = avx2
            assertSameOnce(k, file: file, line: line)
        }
    }

    private func assertSameOnce(_ k: Case, file: StaticString = #filePath, line: UInt = #line) {
        let r = run(k)
        for c in 0..<2 {
            let differing = zip(r.reference[c], r.fused[c]).enumerated().filter { $0.element.0.bitPattern != $0.element.1.bitPattern }
            XCTAssertEqual(differing.count, 0, "channel \(c): first differing frame \(differing.first.map { "\($0.offset): \($0.element)" } ?? "")",
                           file: file, line: line)
        }
        XCTAssertEqual(r.peaks.0, r.peaks.1, "peaks", file: file, line: line)
        for (a, b) in zip(r.squares.0, r.squares.1) {
            XCTAssertEqual(a, b, accuracy: a * 1e-5, "sum of squares", file: file, line: line)
        }
        XCTAssertGreaterThan(r.peaks.0[0], 0.5, "the material was mixed", file: file, line: line)
    }

    func testStereoThroughAFaderAndPanGlideWrapAndSilenceGetsTheSameBits() {
        assertSame(Case())
    }

    func testAHardPanLeavesTheOtherSideUntouched() {
        assertSame(Case(fader: (1, 1), left: (0, 0), right: (1.41, 1.41)))
        let r = run(Case(fader: (1, 1), left: (0, 0), right: (1.41, 1.41)))
        XCTAssertNotEqual(r.fused[1], r.reference[0], "the right side was mixed")
    }

    func testMonoSpreadToBothSidesWithPanGlidingGetsTheSameBits() {
        assertSame(Case(channels: 1, fader: (1, 1), left: (1, 0.3), right: (0, 0.8)))
    }

    func testARequestShorterThanABlockGlidesOverItAll() {
        assertSame(Case(frameCount: 301, fader: (0, 2), left: (0.5, 1), right: (1, 0.5), silence: 0))
    }

    func testAFaderPulledDownToSilenceGetsTheSameBits() {
        assertSame(Case(fader: (1.2, 0), silence: 1))
    }
}
