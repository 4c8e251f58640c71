import XCTest
import CTestSupport
import TapedeckCore
import TapedeckIO
import TapedeckDSP
@testable import TapedeckEngine
@testable import TapedeckTransport
@testable import TapedeckDevices

/// Chain edits while playing: what the screen changes is heard, and what an edit replaces is
/// freed.
final class LiveChainTests: XCTestCase {
    private func playing(_ chain: String, in dir: String) throws -> (Transport, Session) {
        let tone = (0..<480_000).map { Float(0.5 * sin(2 * Double.pi * 441 * Double($0) / 48000)) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [tone])
        session.tracks[0].playbackChain = chain
        try folder.save(session)
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0, paced: true)
        let transport = try Transport(session: session, folder: folder, device: device)
        transport.setLoop(FrameRange(startFrame: 0, endFrame: 480_000), enabled: true)
        transport.play(from: 0)
        TransportFixture.waitFor(transport) { $0.positionFrame > 24_000 }
        return (transport, session)
    }

    /// The master's RMS after the meters have seen only what plays now.
    private func masterRMS(_ transport: Transport) -> Double {
        usleep(400_000)
        return transport.snapshot().masterLevels.first?.rmsDecibels ?? -.infinity
    }

    /// `!gain` on the screen bypasses the node in the chain that plays: heard at once (it
    /// was heard only in an export before), and un-bypassing brings it back.
    func testABypassToggledWhilePlayingIsHeard() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (transport, session) = try playing("gain:-20", in: dir)
        defer { transport.close() }
        let cut = masterRMS(transport)
        session.tracks[0].playbackChain = "!gain:-20"
        XCTAssertNil(transport.follow(session: session))
        let bypassed = masterRMS(transport)
        XCTAssertEqual(bypassed - cut, 20, accuracy: 0.5, "bypassing a -20 dB gain raises the mix 20 dB")
        session.tracks[0].playbackChain = "gain:-20"
        XCTAssertNil(transport.follow(session: session))
        XCTAssertEqual(masterRMS(transport), cut, accuracy: 0.5, "and it comes back")
    }

    /// Five hundred chain edits while playing, each replacing a strip with a delay (whose
    /// lines, two seconds of stereo, are touched as they are made): resident memory stays
    /// flat once the first edits have settled.
    func testFiveHundredChainEditsWhilePlayingLeaveMemoryFlat() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (transport, session) = try playing("delay:250ms", in: dir)
        defer { transport.close() }
        final class WeakChain {
            weak var chain: ChainInstance?
            init(_ c: ChainInstance?) { chain = c }
        }
        var weakChains: [WeakChain] = []
        func edit(_ k: Int) {
            weakChains.append(WeakChain(transport.engine.graphs.last?.strips.first?.chain))
            // Another node count: a new strip and a new chain, not new values in the old one.
            session.tracks[0].playbackChain = k % 2 == 0 ? "delay:250ms,gain:0" : "delay:250ms"
            XCTAssertNil(transport.follow(session: session))
        }
        // Each new strip plays its predecessor until its own material is read (a few ms), and
        // what it replaced is freed once it has taken over: so memory is read once the last
        // edit of a window has.
        func settled() -> Int {
            usleep(300_000)
            _ = transport.snapshot()
            XCTAssertEqual(weakChains.filter { $0.chain != nil }.count, 0, "every replaced chain is freed")
            // What malloc keeps for reuse is handed back first: what stays is what is live.
            td_malloc_trim()
            return LifetimeTests.residentBytes()
        }
        for k in 0..<100 { edit(k) }
        let first = settled()
        for k in 100..<300 { edit(k) }
        let middle = settled()
        for k in 300..<500 { edit(k) }
        let last = settled()
        XCTAssertGreaterThan(transport.snapshot().positionFrame, 0)
        let windows = [middle - first, last - middle]
        // A delay's lines kept per edit would be about 200 MB a window.
        XCTAssertLessThan(windows.min() ?? 0, 8 << 20, "resident memory grew \(windows.map { $0 >> 10 }) KB over two windows of 200 edits")
    }
}
