import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// A count-in whose shared transport does not roll on the bar: another JACK client that takes
/// part in the slow sync has not said it is ready, so the server rolls only at its sync
/// timeout. Tapedeck waits at the record point (the take must start where the transport rolls
/// from) and says why its clock stands still, once; without such a client it says nothing.
/// Seen on PipeWire's JACK 0.3.65 at 64-frame quanta with a client that has no sync callback
/// at all: the transport rolled at PipeWire's 5 s timeout, and the screen's count-in stood at
/// 0:00:00.000 that long with no word.
final class JACKSlowSyncTests: XCTestCase {
    static let waiting = "waiting for JACK's transport: another client is not ready"

    func testACountInThatWaitsForAnotherClientSaysSoOnJackd2() throws { try slowSync(.jackd2) }

    func testACountInThatWaitsForAnotherClientSaysSoOnPipeWiresJACK() throws { try slowSync(.pipewire) }

    private func slowSync(_ kind: LoopbackServer.Kind) throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(kind, period: 256, folder: dir, test: self)
        try server.startLoop("tdready", delayFrames: 0)
        var env = server.environment
        env["XDG_CONFIG_HOME"] = dir + "/config"
        if kind == .jackd2 { env["XDG_RUNTIME_DIR"] = dir }

        // Every client ready: the count-in hands over on the bar, nothing said.
        let quiet = try take(in: dir, name: "quiet", connect: "tdready:", environment: env)
        XCTAssertFalse(quiet.out.contains(Self.waiting), "nothing to wait for: \(quiet.out)")
        // (How long it took is the machine's; the slow take below is judged against this one.)

        // A client never ready (any client on the server takes part, connected or not): the
        // transport rolls at the server's timeout; said once.
        try server.startLoop("tdslow", delayFrames: 0, neverReady: true)
        let slow = try take(in: dir, name: "slow", connect: "tdready:", environment: env)
        let said = slow.out.components(separatedBy: "\n").filter { $0.contains(Self.waiting) }
        XCTAssertEqual(said.count, 1, "said once, as a notice: \(slow.out)")
        XCTAssertTrue(said.first?.contains("\"event\":\"notice\"") == true, slow.out)
        XCTAssertGreaterThan(slow.seconds, quiet.seconds + 3, "the server waited for its timeout before rolling")
        // The take is whole and starts where the transport rolled from: the record point.
        XCTAssertTrue(slow.out.contains("\"event\":\"jack_transport\",\"frame\":0,\"what\":\"started\"")
                      || slow.out.contains("\"by\":\"tapedeck\",\"event\":\"jack_transport\",\"frame\":0,\"what\":\"started\""), slow.out)
        let region = try XCTUnwrap(try SessionFolder(path: slow.session).load().tracks[0].regions.first, "a take was placed")
        XCTAssertEqual(region.timelineStartFrame, 0)
        XCTAssertEqual(region.lengthFrames, 48_000, "a whole second recorded after the wait")
    }

    /// `record --count-in 1 --duration 1` of an armed track connected to `connect`: its
    /// JSON lines, how long it took, the session.
    private func take(in dir: String, name: String, connect: String, environment: [String: String]) throws
        -> (out: String, seconds: Double, session: String) {
        let session = dir + "/\(name).tapedeck"
        let folder = SessionFolder(path: session)
        var s = Session(sampleRate: 48000)
        s.tracks = [Track(name: "Vocal", inputChannels: [1], armed: true, monitoring: .off)]
        try folder.create(s)
        let started = Date()
        let r = try Tapedeck.run(["record", session, "--device", "jack", "--connect", connect, "--count-in", "1", "--duration", "1",
                                  "--json"], environment: environment, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        return (r.stdout, Date().timeIntervalSince(started), session)
    }
}
