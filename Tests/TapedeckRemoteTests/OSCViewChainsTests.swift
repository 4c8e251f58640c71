import XCTest
import TapedeckCore
import TapedeckDSP
@testable import TapedeckRemote

/// What a surface is shown of a track's chain comes from the host's kept chains
/// (``SessionChains``, issue 42 item 3), never from the session's text read again.
final class OSCViewChainsTests: XCTestCase {
    private func view(_ session: Session, chains: SessionChains? = nil) -> OSCView {
        OSCView(session: session, transport: OSCTransport(rolling: false, recording: false, loop: false, frame: 0, sampleRate: 48000),
                meters: [], endFrame: 0, stopEnds: false, chains: chains)
    }

    func testTheChainShownIsTheHostsAsItReadIt() throws {
        var session = Session()
        session.tracks = [Track(name: "Keys", playbackChain: "hpf:cutoff=80")]
        // A host whose registry knows no hpf: its chains hold the refusal. Parsing the
        // text again (the standard registry) would find the node; the view must not.
        let host = SessionChains(session, registry: NodeRegistry(types: []))
        XCTAssertNil(host.slot(0).value)
        XCTAssertNil(view(session, chains: host).playbackChain(0), "the host's reading, not a new parse")
        // Without a host's chains the view reads the session's, once, with the standard registry.
        XCTAssertEqual(view(session).playbackChain(0)?.text, "hpf:cutoff=80")
        XCTAssertNil(view(session).playbackChain(1), "no such track")
    }

    func testAViewsChainsFollowItsSession() throws {
        var session = Session()
        session.tracks = [Track(name: "Keys", playbackChain: "hpf:cutoff=80")]
        var v = view(session, chains: SessionChains(session))
        v.session.tracks[0].playbackChain = "lpf:cutoff=2000"
        v.session.tracks.append(Track(name: "Bass", playbackChain: "hpf:cutoff=40"))
        XCTAssertTrue(v.chains.matches(v.session), "brought up to the session when it changed")
        XCTAssertEqual(v.playbackChain(0)?.entries.map(\.node), ["lpf"])
        XCTAssertEqual(v.playbackChain(1)?.text, "hpf:cutoff=40")
    }
}
