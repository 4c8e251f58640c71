import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckDSP
@testable import TapedeckEngine
@testable import TapedeckTransport

/// Starting at a speed waits only for the processors that speed needs: R2 and varispeed for
/// 0.5× or 2×, R3 (seconds to build) only for a pitch shift or a speed above
/// ``Engine/fineStretchAboveSpeed``, and it is still there, built afterwards, when one is
/// asked for.
final class TimePitchStartTests: XCTestCase {
    private func transport(in dir: String) throws -> Transport {
        let (session, folder) = try TransportFixture.session(in: dir, signals: [TransportFixture.noise(480_000)])
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0)
        return try Transport(session: session, folder: folder, device: device)
    }

    /// Measured on the shared 2-core machine: 2× was ready in 1.4–1.6 s (nearly all of it R2
    /// measuring its start delays), where building R3 as well took 3.0 s.
    func testTwiceTheSpeedIsHeardWithoutWaitingForR3AndAShiftAfterwardsThroughIt() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let transport = try transport(in: dir)
        defer { transport.close() }
        let engine = transport.engine
        let asked = Date()
        transport.setTimePitch(TimePitchSettings(speed: 2, mode: .stretch, pitchSemitones: 0))
        XCTAssertTrue(engine.waitForTimePitch(timeoutSeconds: 60))
        let took = Date().timeIntervalSince(asked)
        print("2x ready after \(took) s")
        XCTAssertEqual(engine.mixTimePitch?.hasFineStretcher, false, "2x did not wait for R3 to be built")
        XCTAssertLessThan(took, 5, "2x is ready within 5 s")
        transport.play(from: 0)
        TransportFixture.waitFor(transport) { $0.positionFrame > 20_000 }
        XCTAssertEqual(engine.mixTimePitch?.stretcher.quality, .fast, "2x plays through R2")

        // A shift needs R3: it waits (the transport goes on at 2× meanwhile), then is heard through it.
        transport.setTimePitch(TimePitchSettings(speed: 2, mode: .stretch, pitchSemitones: 3))
        XCTAssertTrue(transport.isTimePitchPending, "the shift waits for R3")
        XCTAssertTrue(engine.waitForTimePitch(timeoutSeconds: 60))
        XCTAssertEqual(engine.mixTimePitch?.hasFineStretcher, true)
        let now = transport.snapshot().positionFrame
        TransportFixture.waitFor(transport) { $0.positionFrame > now + 20_000 }
        XCTAssertEqual(engine.mixTimePitch?.stretcher.quality, .best, "the shift plays through R3")
        XCTAssertFalse(transport.isTimePitchPending)
    }

    func testAPitchShiftFromTheStartWaitsForR3() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let transport = try transport(in: dir)
        defer { transport.close() }
        let engine = transport.engine
        transport.setTimePitch(TimePitchSettings(speed: 1, mode: .stretch, pitchSemitones: -5))
        XCTAssertTrue(engine.waitForTimePitch(timeoutSeconds: 60))
        XCTAssertEqual(engine.mixTimePitch?.hasFineStretcher, true, "a start with a shift waited for R3")
        transport.play(from: 0)
        TransportFixture.waitFor(transport) { $0.positionFrame > 20_000 }
        XCTAssertEqual(engine.mixTimePitch?.stretcher.quality, .best, "the shift plays through R3, never R2")
    }
}
