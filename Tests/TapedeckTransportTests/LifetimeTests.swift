import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckDSP
@testable import TapedeckEngine
@testable import TapedeckTransport

/// Nothing a session of use does keeps memory: engines, graphs, voices and their
/// time-pitch processors are freed when they are done with.
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
            weakStretcher = weakVoice?.stretcher
            XCTAssertNotNil(weakStretcher, "the voices stretch")
            transport.close()
        }
        XCTAssertNil(weakEngine, "a closed engine is freed")
        XCTAssertNil(weakVoice, "with its voices")
        XCTAssertNil(weakReplacedVoice, "and the voices it replaced")
        XCTAssertNil(weakStretcher, "and their stretchers")
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
        for k in 0..<20 { cycle(k) }
        let before = LifetimeTests.residentBytes()
        for k in 20..<200 { cycle(k) }
        let after = LifetimeTests.residentBytes()
        transport.close()
        XCTAssertLessThan(after - before, 8 << 20, "resident memory grew \((after - before) >> 10) KB over 180 cycles")
    }

    /// Resident set size of this process.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
