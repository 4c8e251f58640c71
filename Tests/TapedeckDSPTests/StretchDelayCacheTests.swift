import XCTest
@testable import TapedeckDSP

private final class SilentSource: TimePitchSource {
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int { 0 }
}

/// A steady 440 Hz tone, from its start.
private final class ToneSource: TimePitchSource {
    private var position = 0
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int {
        for i in 0..<frameCount { channels[0][i] = Float(0.5 * sin(2 * Double.pi * 440 * Double(position + i) / 22050)) }
        position += frameCount
        return frameCount
    }
}

/// A stretcher's measured start delays are kept on disk: the next process builds one without
/// measuring (most of a build's time), with the same table; a damaged file is measured again.
/// On a machine's first run only the start speed's delay is measured before the stretcher is
/// ready; the other speeds' on a thread of their own (the "warm-up off the start path").
final class StretchDelayCacheTests: XCTestCase {
    private let source = SilentSource()
    // A rate nothing else in the suite measures, so the table is not in memory already.
    private let rate = 22050
    private var folder = ""
    private var savedCache: StretchDelayCache?

    override func setUp() {
        folder = NSTemporaryDirectory() + "stretch-cache-\(getpid())-\(UUID().uuidString)"
        savedCache = LiveStretcher.delayCache.withLock { $0 }
        LiveStretcher.delayCache.withLock { $0 = StretchDelayCache(folder: folder) }
    }

    override func tearDown() {
        StretchDelayTable.holdsBackground.store(false, ordering: .relaxed)
        LiveStretcher.delayCache.withLock { $0 = savedCache }
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func key(_ quality: StretchQuality) -> StretchDelayTable.Key {
        StretchDelayTable.Key(sampleRate: rate, channelCount: 1, quality: quality)
    }

    /// A stretcher built as a new process would build it (nothing in memory), started at
    /// `speed`, its delay there, and the seconds the build took.
    private func build(_ quality: StretchQuality, speed: Double = 2) -> (stretcher: LiveStretcher, seconds: Double, latency: Int) {
        StretchDelayTable.forget(key(quality))
        let start = Date()
        let s = LiveStretcher(sampleRate: rate, channelCount: 1, maxFrames: 256, source: source, quality: quality, startSpeed: speed)
        let seconds = Date().timeIntervalSince(start)
        s.set(speed: speed, pitchScale: 1)
        return (s, seconds, s.latencyFrames)
    }

    private func load(_ cache: StretchDelayCache, _ quality: StretchQuality) -> [Double?]? {
        cache.load(sampleRate: rate, channelCount: 1, quality: quality, count: StretchDelayTable.steps.count)
    }

    func testTheDelaysAreMeasuredOnceAndReadBackWhole() throws {
        let cache = StretchDelayCache(folder: folder)
        let count = StretchDelayTable.steps.count

        let measured = build(.fast)
        XCTAssertTrue(measured.stretcher.waitUntilDelaysMeasured(), "the other speeds are measured in the background")
        let table = try XCTUnwrap(load(cache, .fast), "the measured table is kept")
        XCTAssertEqual(table.count, count)
        XCTAssertTrue(table.allSatisfy { $0 != nil }, "whole: \(table)")
        let kept = build(.fast)
        XCTAssertEqual(kept.latency, measured.latency, "the kept table gives the delays measured")
        print("R2 build: measuring \(measured.seconds) s, from the cache \(kept.seconds) s")
        for speed in [1.0 / 32, 0.37, 1, 5.5, 32] {
            measured.stretcher.set(speed: speed, pitchScale: 1)
            kept.stretcher.set(speed: speed, pitchScale: 1)
            XCTAssertEqual(kept.stretcher.latencyFrames, measured.stretcher.latencyFrames, "at \(speed)×")
        }

        // A damaged file (cut short, or a value no measurement gives) is measured again and replaced.
        let path = cache.path(sampleRate: rate, channelCount: 1, quality: .fast)
        for damage in ["12.5 13", String(repeating: "nan ", count: count), String(repeating: "1e300 ", count: count), ""] {
            try damage.write(toFile: path, atomically: true, encoding: .utf8)
            XCTAssertNil(load(cache, .fast), damage)
            let again = build(.fast)
            XCTAssertEqual(again.latency, measured.latency, "measured again over '\(damage.prefix(12))'")
            XCTAssertTrue(again.stretcher.waitUntilDelaysMeasured())
            XCTAssertEqual(load(cache, .fast)?.count, count, "and kept again")
        }
        // A folder that cannot be written costs only the time.
        LiveStretcher.delayCache.withLock { $0 = StretchDelayCache(folder: "/proc/tapedeck-cannot-write") }
        let blocked = build(.fast)
        XCTAssertEqual(blocked.latency, measured.latency)
        XCTAssertTrue(blocked.stretcher.waitUntilDelaysMeasured())
    }

    func testOnlyTheStartSpeedIsMeasuredBeforeTheStretcherIsReady() throws {
        // The reference: every step measured.
        let whole = build(.best)
        XCTAssertTrue(whole.stretcher.waitUntilDelaysMeasured())
        let reference = try XCTUnwrap(load(StretchDelayCache(folder: folder), .best))
        try FileManager.default.removeItem(atPath: folder)

        // A first run on a machine, the background held: the stretcher is ready with 2×
        // measured (step 2) and nothing else.
        StretchDelayTable.holdsBackground.store(true, ordering: .relaxed)
        let first = build(.best)
        let cache = StretchDelayCache(folder: folder)
        let early = try XCTUnwrap(load(cache, .best), "what was measured is kept at once")
        XCTAssertEqual(early.compactMap { $0 }.count, 1, "one step measured before the stretcher was ready: \(early)")
        XCTAssertEqual(early[2 - StretchDelayTable.steps.lowerBound], reference[2 - StretchDelayTable.steps.lowerBound])
        XCTAssertEqual(first.latency, whole.latency, "the start speed's delay is the measured one")
        // Between two steps both are measured first (1.5× lies between steps 1 and 2).
        StretchDelayTable.forget(key(.best))
        let between = LiveStretcher(sampleRate: rate, channelCount: 1, maxFrames: 256, source: source, quality: .best, startSpeed: 1.5)
        XCTAssertEqual(load(cache, .best)?.compactMap { $0 }.count, 2)
        // A speed not measured yet has an estimate (Rubber Band's report, corrected by the
        // start speed's measurement), so a change before the thread gets there still plays.
        first.stretcher.set(speed: 1.0 / 32, pitchScale: 1)
        let estimate = first.stretcher.latencyFrames
        XCTAssertGreaterThan(estimate, 0)

        StretchDelayTable.holdsBackground.store(false, ordering: .relaxed)
        XCTAssertTrue(first.stretcher.waitUntilDelaysMeasured(), "the background measures the rest")
        XCTAssertTrue(between.waitUntilDelaysMeasured())
        XCTAssertEqual(load(cache, .best)?.compactMap { $0 }.count, StretchDelayTable.steps.count, "and keeps them")
        whole.stretcher.set(speed: 1.0 / 32, pitchScale: 1)
        XCTAssertEqual(first.stretcher.latencyFrames, whole.stretcher.latencyFrames, "measured, not estimated, once known")
        print("R3 at 1/32×: estimated \(estimate), measured \(first.stretcher.latencyFrames)")
    }

    /// Measuring happens on a stretcher of its own: one built on a machine's first run plays
    /// the same samples as one built from the cache (Rubber Band keeps a little history
    /// through a reset, so a stretcher that had measured played other samples).
    func testAStretcherPlaysTheSameWhetherItMeasuredOrNot() throws {
        func play() -> (output: [Float], stretcher: LiveStretcher) {
            let tone = ToneSource()
            let s = LiveStretcher(sampleRate: rate, channelCount: 1, maxFrames: 256, source: tone, quality: .fast, startSpeed: 2)
            s.set(speed: 2, pitchScale: 1)
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 256)
            defer { buffer.deallocate() }
            var table = [buffer], out: [Float] = []
            for _ in 0..<80 {
                table.withUnsafeBufferPointer { s.render(into: $0.baseAddress!, frameCount: 256) }
                out += UnsafeBufferPointer(start: buffer, count: 256)
            }
            return withExtendedLifetime(tone) { (out, s) }
        }
        StretchDelayTable.forget(key(.fast))
        let first = play()
        XCTAssertTrue(first.stretcher.waitUntilDelaysMeasured())
        let kept = play()
        XCTAssertGreaterThan(first.output.map { abs($0) }.max() ?? 0, 0.1, "the tone is heard")
        XCTAssertEqual(first.output, kept.output, "the same samples from a first run and from the cache")
    }
}
