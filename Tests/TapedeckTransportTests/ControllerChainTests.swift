import XCTest
import Synchronization
import TapedeckCore
import TapedeckDSP
@testable import TapedeckTransport

/// Counts the parses of chain text naming its types (one resolve per reference parsed).
private final class CountingProvider: NodeTypeProvider {
    let prefix = "knobbed"
    let resolves = Atomic<Int>(0)

    func resolve(_ reference: String, isURI: Bool) -> NodeResolution {
        resolves.add(1, ordering: .relaxed)
        return .found(identifier: reference)
    }

    func descriptor(identifier: String) -> NodeDescriptor? {
        NodeDescriptor(name: "knobbed:" + identifier, displayName: identifier, kind: .effect, subtype: "knb1", tags: [], summary: "counts",
                       parameters: [ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -24, maximum: 24, defaultValue: 0)])
    }

    func resolvePreset(_ name: String, identifier: String) throws(NodeTypeError) -> String { throw NodeTypeError("no presets") }
    func makeNode(identifier: String, entry: Chain.Entry, stateFolder: String?) -> (any Node)? { nil }
    func detailText(identifier: String) -> String { identifier }
}

/// A bound controller turning a node's parameter, as the transport follows it: the chain it
/// changes is the kept one (issue 42, item 3), so a stream of moves parses nothing.
final class ControllerChainTests: XCTestCase {
    private static let provider = CountingProvider()

    func testControllerMovesOnANodeParameterParseNothingOnceTheChainsAreKept() throws {
        // Installed for this test only: it claims every name it is asked for.
        NodeRegistry.install(Self.provider)
        defer { NodeRegistry.uninstall(prefix: Self.provider.prefix) }
        var session = Session()
        session.tracks = [Track(name: "Keys", playbackChain: "knobbed:amp:level=0,hpf:80")]
        session.midiBindings = [MIDIBinding(controller: 7, kind: .parameter, track: "Keys", node: 1, parameter: "level")]
        var chains = SessionChains(session)
        let read = Self.provider.resolves.load(ordering: .relaxed)
        for value in [0, 32, 64, 96, 127] {
            XCTAssertTrue(session.apply(session.midiBindings[0], value: value, chains: &chains))
        }
        XCTAssertEqual(session.tracks[0].playbackChain, "knobbed:<amp>:level=24,hpf:cutoff=80", "the last move, at the top of the range")
        chains.update(to: session)
        XCTAssertEqual(chains.slot(0).value?.entries.first?.settings.first?.value, .number(24))
        XCTAssertEqual(Self.provider.resolves.load(ordering: .relaxed), read, "five moves, no parse")
    }

    func testAFrozenTracksChainTakesNoMove() throws {
        var session = Session()
        session.tracks = [Track(name: "Keys", inputChain: "gain:gain=0", playbackChain: "gain:gain=0")]
        session.midiBindings = [MIDIBinding(controller: 7, kind: .parameter, track: "Keys", node: 1, parameter: "gain"),
                                MIDIBinding(controller: 8, kind: .fader, track: "Keys")]
        var chains = SessionChains(session)
        XCTAssertNotNil(session.change(for: session.midiBindings[0], value: 0, chains: chains), "bound while it runs")
        session.tracks[0].frozen = FrozenAudio(file: "audio/keys-frozen.wav", lengthFrames: 48000)
        // The engine binds nothing to a chain that does not run (MIDIEngineTests); the one
        // translation says the same, so no front-end changes a chain the user cannot change.
        XCTAssertNil(session.change(for: session.midiBindings[0], value: 0, chains: chains))
        XCTAssertFalse(session.apply(session.midiBindings[0], value: 0, chains: &chains))
        XCTAssertEqual(session.tracks[0].playbackChain, "gain:gain=0")
        XCTAssertEqual(session.change(for: session.midiBindings[1], value: 100, chains: chains),
                       .mixer(.gain(strip: 0, decibels: Fader.stored(MIDIBinding.faderDecibels(controllerValue: 100)))),
                       "its fader still moves: the render plays through it")
    }
}
