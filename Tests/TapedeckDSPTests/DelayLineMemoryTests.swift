import XCTest
@testable import TapedeckDSP

/// The delay's line offline is zeroed lazily, its pages mapped as the write head first reaches
/// them (``UnsafeStorage/allocateLazilyZeroed(_:)``: a 4 s line at 48 kHz is 1 MiB a channel);
/// live it is allocated and touched up front. Both must delay the same: the same samples, bit
/// for bit, through the ring's wraps.
final class DelayLineMemoryTests: XCTestCase {
    private func render(realtime: Bool, input: [[Float]]) -> [[Float]] {
        let node = DelayNode()
        node.parameters.set("time", 4000)
        node.parameters.set("feedback", 0.5)
        node.parameters.set("mix", 0.5)
        node.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 2, isRealtime: realtime), maxFrames: 512)
        return Offline.render(node, input: input, prepare: false)
    }

    func testOfflineAndLiveLinesDelayAlikeThroughTheRingsWraps() {
        // 12 s: the 262,144-frame ring wraps twice.
        let frames = 12 * 48000
        let left = Offline.sine(440, amplitude: 0.5, count: frames)
        var right = [Float](repeating: 0, count: frames)
        right[100] = 1
        let live = render(realtime: true, input: [left, right])
        let offline = render(realtime: false, input: [left, right])
        XCTAssertEqual(live[0], offline[0], "left: the same samples")
        XCTAssertEqual(live[1], offline[1], "right: the same samples")
        // The impulse comes back 4 s later at half level (mix), then again at a quarter (feedback).
        XCTAssertEqual(offline[1][100], 0.5, accuracy: 1e-6)
        XCTAssertEqual(offline[1][100 + 192_000], 0.5, accuracy: 1e-6)
        XCTAssertEqual(offline[1][100 + 384_000], 0.25, accuracy: 1e-6)
        XCTAssertEqual(Offline.peak(offline[1], 101..<(100 + 192_000)), 0, "silence between the echoes")
    }

    func testALineIsMadeAgainForEveryRateItIsPreparedAt() {
        let node = DelayNode()
        for rate in [48000.0, 96000.0, 44100.0, 48000.0] {
            node.prepare(format: NodeFormat(sampleRate: rate, channelCount: 2, isRealtime: false), maxFrames: 1024)
            var impulse = [Float](repeating: 0, count: Int(rate / 2))
            impulse[0] = 1
            let out = Offline.render(node, input: [impulse, impulse], blockSize: 1024, prepare: false,
                                     transport: TransportInfo(sampleRate: rate))
            let echo = Int((0.25 * rate).rounded())
            XCTAssertEqual(out[0][echo], 0.35, accuracy: 1e-6, "the default 250 ms, 35 % wet at \(rate) Hz")
        }
    }

    /// Lines of 2 MiB or more are mapped on their own, on a 2 MiB boundary (where huge pages
    /// can back them), zero until written, and given back whole; smaller ones come from calloc.
    func testALargeLazyLineIsAlignedForHugePagesAndZero() {
        for count in [1 << 19, (1 << 19) + 3, 3 << 19, 1000] {
            var line = UnsafeStorage<Float>()
            line.allocateLazilyZeroed(count)
            guard let p = line.pointer else { return XCTFail("no storage for \(count)") }
            if count * 4 >= 2 << 20 {
                XCTAssertEqual(UInt(bitPattern: p) % UInt(2 << 20), 0, "\(count) samples start on a 2 MiB boundary")
            }
            XCTAssertEqual(line.count, count)
            XCTAssertEqual(p[0], 0); XCTAssertEqual(p[count / 2], 0); XCTAssertEqual(p[count - 1], 0)
            p[count - 1] = 1
            XCTAssertEqual(p[count - 1], 1, "the last sample is writable")
            line.free()
            XCTAssertNil(line.pointer)
        }
    }
}
