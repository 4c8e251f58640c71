import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckDSP
@testable import TapedeckEngine
@testable import TapedeckTransport
@testable import TapedeckDevices

/// Nothing a session of use does keeps memory: engines, graphs, voices and their
/// the mix's time-pitch processors are freed when they are done with.
final class LifetimeTests: XCTestCase {
    func testAClosedEngineIsFreedWithEveryVoiceAndStretcher() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try TransportFixture.session(in: dir, signals: [TransportFixture.noise(96_000), TransportFixture.noise(96_000, seed: 9)])
        weak var weakEngine: Engine?
        weak var weakVoice: TrackVoice?
        weak var weakReplacedVoice: TrackVoice?
        weak var weakStretcher: LiveStretcher?
        do {
            let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0)
            let transport = try Transport(session: session, folder: folder, device: device)
            transport.setTimePitch(TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 0))
            transport.play(from: 0)
            TransportFixture.waitFor(transport) { $0.positionFrame > 10_000 }
            let engine = transport.engine
            weakEngine = engine
            weakReplacedVoice = engine.spec.map { _ in engine.currentVoices()[0] }
            // An edit replaces track 1's strip while it plays.
            var edited = session
            edited.tracks[0].regions[0].timelineStartFrame = 480
            XCTAssertNil(transport.follow(session: edited))
            TransportFixture.waitFor(transport) { $0.positionFrame > 30_000 }
            weakVoice = engine.currentVoices()[0]
            weakStretcher = engine.mixTimePitch?.stretcher
            XCTAssertNotNil(weakStretcher, "the mix stretches")
            transport.close()
        }
        XCTAssertNil(weakEngine, "a closed engine is freed")
        XCTAssertNil(weakVoice, "with its voices")
        XCTAssertNil(weakReplacedVoice, "and the voices it replaced")
        XCTAssertNil(weakStretcher, "and the mix's stretcher")
    }

    func testTwoHundredPlayStopCyclesWithTimePitchLeaveMemoryFlat() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try TransportFixture.session(in: dir, signals: [TransportFixture.noise(480_000), TransportFixture.noise(480_000, seed: 3)])
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0)
        let transport = try Transport(session: session, folder: folder, device: device)
        transport.setTimePitch(TimePitchSettings(speed: 0.75, mode: .stretch, pitchSemitones: 2))
        var edited = session
        func cycle(_ k: Int) {
            transport.play(from: Int64(k % 7) * 9_000)
            TransportFixture.waitFor(transport) { $0.state == .playing }
            usleep(3_000)
            transport.stop()
            // Every tenth cycle an edit builds a new graph (new voices, new stretchers).
            if k % 10 == 0 {
                edited.tracks[1].regions[0].timelineStartFrame = Int64(k)
                XCTAssertNil(transport.follow(session: edited))
            }
        }
        // Rubber Band's real-time buffers are sized at creation for the extreme ratios and
        // their pages are first touched as its rings wrap: bounded (about 17 MB for the mix's
        // stereo stretcher), but only reached after about a minute of audio. The engine keeps
        // nothing per cycle; to see that, the stretcher first runs that minute (looping).
        transport.setLoop(FrameRange(startFrame: 0, endFrame: 480_000), enabled: true)
        transport.play(from: 0)
        let warmUntil = transport.engine.status().deviceFrame + 90 * 48_000
        _ = TransportFixture.waitFor(transport, timeout: 120) { _ in transport.engine.status().deviceFrame > warmUntil }
        transport.stop()
        transport.setLoop(nil, enabled: false)
        for k in 0..<20 { cycle(k) }
        // Two windows of 90 cycles: something kept per cycle grows both alike, while a
        // one-off jump of the whole test process (another test's threads finishing, malloc
        // arenas) lands in one. Seen in full runs only: 11 and 30 MB in one window.
        let first = LifetimeTests.residentBytes()
        for k in 20..<110 { cycle(k) }
        let middle = LifetimeTests.residentBytes()
        for k in 110..<200 { cycle(k) }
        let last = LifetimeTests.residentBytes()
        transport.close()
        let windows = [middle - first, last - middle]
        XCTAssertLessThan(windows.min() ?? 0, 4 << 20,
                          "resident memory grew \(windows.map { $0 >> 10 }) KB over two windows of 90 cycles")
    }

    /// Resident set size of this process.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
