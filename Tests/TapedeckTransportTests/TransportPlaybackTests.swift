import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport

final class TransportPlaybackTests: XCTestCase {
    func testAPlayAfterStandingIdleSendsTheWholeMaterial() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let signal = TransportFixture.noise(96_000)
        var (session, folder) = try TransportFixture.session(in: dir, signals: [signal])
        session.tracks[0].pan = -1
        try folder.save(session)
        let out = dir + "/out.raw"
        let transport = try Transport(session: session, folder: folder, device: try TransportFixture.device("filetap:OUT=\(out)"))
        usleep(200_000)
        let before = (try? TransportFixture.stereo(out).left.count) ?? 0
        transport.play(from: 0)
        let snap = TransportFixture.waitFor(transport) { $0.state == .stopped }
        XCTAssertEqual(snap.positionFrame, 96_000)
        transport.close()
        let left = Array(try TransportFixture.stereo(out).left.dropFirst(before))
        XCTAssertGreaterThanOrEqual(left.count, 768 + 96_000)
        // After the prefill (one buffer of silence), frame for frame.
        let played = Array(left.dropFirst(768))
        XCTAssertTrue(left.prefix(768).allSatisfy { $0 == 0 })
        let mismatches = zip(played, signal).filter { abs($0 - $1) > 1e-6 }.count
        XCTAssertEqual(mismatches, 0, "what was played is the track, from its first frame")
    }
}
