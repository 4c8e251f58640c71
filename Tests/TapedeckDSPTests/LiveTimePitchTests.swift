import XCTest
import CTestSupport
@testable import TapedeckDSP

/// A test source: a signal in memory, read block by block like a track's playback stream.
private final class ArraySource: TimePitchSource {
    let samples: [Float]
    var position = 0
    init(_ samples: [Float]) { self.samples = samples }
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int {
        let n = min(frameCount, samples.count - position)
        guard n > 0 else { return 0 }
        samples.withUnsafeBufferPointer { channels[0].update(from: $0.baseAddress! + position, count: n) }
        position += n
        return n
    }
}

final class LiveTimePitchTests: XCTestCase {
    /// Sources the stretchers pull from; a stretcher does not keep its source alive.
    private var sources: [ArraySource] = []

    /// A stretcher that will start at `speed`, as the engine builds them (on a machine's
    /// first run only that speed's start delay is measured at once: see StretchDelayCacheTests).
    private func stretcher(_ signal: [Float], channels: Int, speed: Double = 1) -> LiveStretcher {
        let source = ArraySource(signal)
        sources.append(source)
        return LiveStretcher(sampleRate: rate, channelCount: channels, maxFrames: block, source: source, startSpeed: speed)
    }

    let rate = 48000
    let block = 256

    private func sine(_ hz: Double, seconds: Double) -> [Float] {
        (0..<Int(seconds * Double(rate))).map { Float(0.5 * sin(2 * .pi * hz * Double($0) / Double(rate))) }
    }

    private func frequency(_ x: [Float]) -> Double {
        var first: Double?, last = 0.0, count = 0
        for i in (x.count / 4 + 1)..<(3 * x.count / 4) where x[i - 1] < 0 && x[i] >= 0 {
            let t = Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1]))
            if first == nil { first = t } else { count += 1; last = t }
        }
        guard let f = first, count > 0 else { return 0 }
        return Double(count) * Double(rate) / (last - f)
    }

    /// Renders `frames` of output in 256-frame blocks.
    private func render(_ stretcher: LiveStretcher, frames: Int, speed: Double, pitch: Double = 1) -> [Float] {
        var out = [Float](repeating: 0, count: frames)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { buffer.deallocate() }
        var table = [buffer]
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            stretcher.set(speed: speed, pitchScale: pitch)
            table.withUnsafeBufferPointer { stretcher.render(into: $0.baseAddress!, frameCount: n) }
            for i in 0..<n { out[done + i] = buffer[i] }
            done += n
        }
        _ = table.removeLast()
        return out
    }

    func testLiveStretchKeepsPitchAtHalfAndDoubleSpeed() {
        for speed in [0.5, 2.0] {
            let source = ArraySource(sine(440, seconds: 4))
            let s = LiveStretcher(sampleRate: rate, channelCount: 1, maxFrames: block, source: source)
            let out = render(s, frames: Int(Double(rate) * 1.5), speed: speed)
            XCTAssertEqual(frequency(out), 440, accuracy: 0.5, "speed \(speed)")
            // The source advanced by speed × the output's length, plus what the stretcher holds
            // (its start pad and its delay, in input frames) and one pull of slack.
            let held = 1024 + Double(s.latencyFrames) * speed + 1024
            XCTAssertEqual(Double(source.position), 1.5 * Double(rate) * speed + held, accuracy: 2048, "speed \(speed)")
        }
    }

    /// A steady tone keeps its level at another speed, with both engines, after the
    /// warm-up's visits to the extreme ratios and pitch scales (an order of visits that left
    /// R2 at pitch 8 cost a 500 Hz tone 3 dB at 0.5× and 10 dB at 2×).
    func testLiveStretchKeepsASteadyTonesLevel() {
        for hz in [440.0, 500.0] {
            for speed in [0.5, 2.0] {
                for quality in [StretchQuality.fast, .best] {
                    let source = ArraySource(sine(hz, seconds: 6))
                    sources.append(source)
                    let s = LiveStretcher(sampleRate: rate, channelCount: 1, maxFrames: block, source: source, quality: quality)
                    let out = render(s, frames: rate * 2, speed: speed)
                    let steady = out[(out.count / 2)...]
                    let rms = (steady.reduce(0) { $0 + Double($1 * $1) } / Double(steady.count)).squareRoot()
                    let decibels = 20 * log10(rms / (0.5 / 2.0.squareRoot()))
                    XCTAssertEqual(decibels, 0, accuracy: 1.5, "\(hz) Hz at \(speed)×, \(quality)")
                }
            }
        }
    }

    func testLivePitchShiftOfAnOctaveDoublesTheFrequency() {
        let s = stretcher(sine(440, seconds: 3), channels: 1)
        let out = render(s, frames: rate, speed: 1, pitch: 2)
        XCTAssertEqual(frequency(out), 880, accuracy: 0.5)
    }

    func testAClickLandsWhereThePlayheadSaysAtEverySpeed() {
        let clickFrame = 24000
        for speed in [0.5, 0.75, 1.0, 1.5, 2.0] {
            var signal = [Float](repeating: 0, count: 3 * rate)
            for i in 0..<48 { signal[clickFrame + i] = 0.8 * Float(sin(Double(i) * .pi / 48)) }
            let s = stretcher(signal, channels: 1, speed: speed)
            let out = render(s, frames: Int(Double(clickFrame) / speed) + rate / 2, speed: speed)
            // Stretching smears a click over a window; its energy centroid is where it "is".
            var weighted = 0.0, energy = 0.0
            for (i, x) in out.enumerated() { weighted += Double(i) * Double(x * x); energy += Double(x * x) }
            let centre = weighted / energy
            let expected = Double(clickFrame) / speed + 24 / speed
            XCTAssertEqual(centre, expected, accuracy: Double(block), "speed \(speed): latency compensated within one block")
        }
    }

    func testTwoStretchersFedTheSameTrackStayIdentical() {
        let signal = sine(220, seconds: 2)
        for speed in [0.5, 0.75, 1.5, 2.0] {
            let a = stretcher(signal, channels: 1)
            let b = stretcher(signal, channels: 1)
            XCTAssertEqual(render(a, frames: rate / 2, speed: speed), render(b, frames: rate / 2, speed: speed))
        }
    }

    func testLiveStretchRenderDoesNotAllocate() {
        let s = stretcher(sine(330, seconds: 10), channels: 2)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        defer { table.deallocate() }
        table[0] = left; table[1] = right
        for _ in 0..<20 { s.render(into: table, frameCount: block) }
        td_alloc_count_begin()
        for _ in 0..<500 { s.render(into: table, frameCount: block) }
        XCTAssertEqual(td_alloc_count_end(), 0, "steady rendering")
        td_alloc_count_begin()
        for i in 0..<500 {
            s.set(speed: i < 250 ? 0.5 : 1.7, pitchScale: 1)
            s.render(into: table, frameCount: block)
        }
        XCTAssertEqual(td_alloc_count_end(), 0, "rendering across speed changes")
    }

    func testVarispeedDoublesPitchAtDoubleSpeed() {
        let source = ArraySource(sine(440, seconds: 4))
        guard let v = Varispeed(channelCount: 1, source: source, maxOutputFrames: block, realtime: true) else {
            return XCTFail("no converter")
        }
        var out = [Float]()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { buffer.deallocate() }
        var table = [buffer]
        for _ in 0..<(rate / block) {
            let n = table.withUnsafeBufferPointer { v.render(into: $0.baseAddress!, frameCount: block, speed: 2) }
            out.append(contentsOf: UnsafeBufferPointer(start: buffer, count: n))
        }
        _ = table.removeLast()
        XCTAssertEqual(frequency(out), 880, accuracy: 0.5)
        XCTAssertEqual(Double(source.position), 2.0 * Double(out.count), accuracy: 2048)
    }
}
