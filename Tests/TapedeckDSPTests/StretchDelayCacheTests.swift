import XCTest
@testable import TapedeckDSP

private final class SilentSource: TimePitchSource {
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int { 0 }
}

/// A stretcher's measured start delays are kept on disk: the next process builds one without
/// measuring (most of a build's time), with the same table; a damaged file is measured again.
final class StretchDelayCacheTests: XCTestCase {
    private let source = SilentSource()
    // A rate nothing else in the suite measures, so the table is not in memory already.
    private let rate = 22050

    private func build(_ quality: StretchQuality) -> (seconds: Double, latency: Int) {
        // Forget what this process measured, as a new process would have.
        LiveStretcher.delayTables.withLock { $0[LiveStretcher.DelayTableKey(sampleRate: rate, channelCount: 1, quality: quality)] = nil }
        let start = Date()
        let s = LiveStretcher(sampleRate: rate, channelCount: 1, maxFrames: 256, source: source, quality: quality)
        let seconds = Date().timeIntervalSince(start)
        s.set(speed: 2, pitchScale: 1)
        return (seconds, s.latencyFrames)
    }

    func testTheDelaysAreMeasuredOnceAndReadBackWhole() throws {
        let folder = NSTemporaryDirectory() + "stretch-cache-\(getpid())-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let saved = LiveStretcher.delayCache.withLock { $0 }
        defer { LiveStretcher.delayCache.withLock { $0 = saved } }
        let cache = StretchDelayCache(folder: folder)
        LiveStretcher.delayCache.withLock { $0 = cache }
        let count = LiveStretcher.delayTableSteps.count

        let measured = build(.fast)
        let table = cache.load(sampleRate: rate, channelCount: 1, quality: .fast, count: count)
        XCTAssertEqual(table?.count, count, "the measured table is kept")
        let kept = build(.fast)
        XCTAssertEqual(kept.latency, measured.latency, "the kept table gives the delays measured")
        print("R2 build: measured \(measured.seconds) s, from the cache \(kept.seconds) s")
        XCTAssertLessThan(kept.seconds, measured.seconds / 2, "the kept table spares the measurement")

        // A damaged file (cut short, or a value no measurement gives) is measured again and replaced.
        let path = cache.path(sampleRate: rate, channelCount: 1, quality: .fast)
        for damage in ["12.5 13", String(repeating: "nan ", count: count), String(repeating: "1e300 ", count: count), ""] {
            try damage.write(toFile: path, atomically: true, encoding: .utf8)
            XCTAssertNil(cache.load(sampleRate: rate, channelCount: 1, quality: .fast, count: count), damage)
            XCTAssertEqual(build(.fast).latency, measured.latency, "measured again over '\(damage.prefix(12))'")
            XCTAssertEqual(cache.load(sampleRate: rate, channelCount: 1, quality: .fast, count: count), table, "and kept again")
        }
        // A folder that cannot be written costs only the time.
        let blocked = StretchDelayCache(folder: "/proc/tapedeck-cannot-write")
        LiveStretcher.delayCache.withLock { $0 = blocked }
        XCTAssertEqual(build(.fast).latency, measured.latency)
    }
}
