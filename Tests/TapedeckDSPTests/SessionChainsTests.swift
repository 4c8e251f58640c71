import XCTest
import Synchronization
import TapedeckCore
@testable import TapedeckDSP

/// Counts how often chain text naming its types is parsed (one resolve per reference parsed).
private final class CountingProvider: NodeTypeProvider {
    let prefix = "tallied"
    let resolves = Atomic<Int>(0)

    func resolve(_ reference: String, isURI: Bool) -> NodeResolution {
        resolves.add(1, ordering: .relaxed)
        return .found(identifier: reference)
    }

    func descriptor(identifier: String) -> NodeDescriptor? {
        NodeDescriptor(name: "tallied:" + identifier, displayName: identifier, kind: .effect, subtype: "tly1", tags: [], summary: "tallies",
                       parameters: [ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -24, maximum: 24, defaultValue: 0)])
    }

    func resolvePreset(_ name: String, identifier: String) throws(NodeTypeError) -> String { throw NodeTypeError("no presets") }
    func makeNode(identifier: String, entry: Chain.Entry, stateFolder: String?) -> (any Node)? { nil }
    func detailText(identifier: String) -> String { identifier }
}

/// A session's chains read once (issue 42, item 3): each text when it first appears, a refused
/// one kept as its error, a chain made at an edge taken as it is.
final class SessionChainsTests: XCTestCase {
    private let provider = CountingProvider()
    private var registry: NodeRegistry { NodeRegistry(types: NodeRegistry.builtIn.types, providers: [provider]) }
    private var parses: Int { provider.resolves.load(ordering: .relaxed) }

    private func session(_ chains: [String], master: String = "") -> Session {
        var s = Session()
        s.tracks = chains.enumerated().map { Track(name: "T\($0.offset)", playbackChain: $0.element) }
        s.masterChain = master
        return s
    }

    func testEachTextIsReadOnceAndARefusedOneKeepsItsError() throws {
        var s = session(["tallied:a:level=3", "hpf:80", "lpf:cutoff=banana"], master: "tallied:m")
        var chains = SessionChains(s, registry: registry)
        XCTAssertEqual(parses, 2)
        XCTAssertEqual(chains.slot(0).value?.entries.map(\.node), ["tallied:a"])
        XCTAssertEqual(chains.slot(1).value?.text, "hpf:cutoff=80")
        XCTAssertEqual(chains.masterSlot.value?.entries.map(\.node), ["tallied:m"])
        XCTAssertThrowsError(try chains.slot(2).chain.get()) { error in
            XCTAssertTrue("\(error)".contains("banana"), "\(error)")
        }
        XCTAssertEqual(chains.slot(2).text, "lpf:cutoff=banana", "the refused text is kept as written")
        XCTAssertEqual(chains.slot(9).value, Chain(), "no such track: the empty chain")

        // Brought up to the same session, a reordered one, one with a track more: nothing read.
        chains.update(to: s)
        s.tracks.reverse()
        chains.update(to: s)
        s.tracks.append(Track(name: "copy", playbackChain: "tallied:a:level=3"))
        chains.update(to: s)
        XCTAssertEqual(parses, 2, "texts seen before are not read again")
        XCTAssertEqual(chains.slot(0).text, "lpf:cutoff=banana")
        XCTAssertEqual(chains.slot(3).value?.entries.map(\.node), ["tallied:a"])

        // New text is read once.
        s.tracks[0].playbackChain = "tallied:b"
        chains.update(to: s)
        chains.update(to: s)
        XCTAssertEqual(parses, 3)
        XCTAssertTrue(chains.matches(s))
    }

    func testAChainHandedInIsTakenWithoutReadingItsText() throws {
        var s = session(["tallied:a:level=3"])
        var chains = SessionChains(s, registry: registry)
        let read = parses
        var edited = try XCTUnwrap(chains.slot(0).value)
        XCTAssertTrue(edited.set(entry: 0, parameter: "level", to: -6, registry: registry))
        chains.handIn(edited)
        s.tracks[0].playbackChain = edited.text
        chains.update(to: s)
        XCTAssertEqual(parses, read, "the edited chain is taken as made")
        XCTAssertEqual(chains.slot(0).value, edited)
    }

    func testAValueChangeThroughKeptChainsWritesTheTextAndParsesNothing() throws {
        var s = session(["tallied:a:level=3,hpf:80"])
        var chains = SessionChains(s, registry: registry)
        let read = parses
        XCTAssertTrue(s.apply(ChainValueChange(place: .playback(strip: 0), node: 1, value: .parameter("cutoff", .number(120))), chains: &chains))
        XCTAssertTrue(s.apply(ChainValueChange(place: .playback(strip: 0), node: 0, value: .bypass(true)), chains: &chains))
        XCTAssertEqual(s.tracks[0].playbackChain, "!tallied:<a>:level=3,hpf:cutoff=120")
        chains.update(to: s)
        XCTAssertEqual(chains.slot(0).value?.entries.first?.bypassed, true)
        XCTAssertEqual(parses, read)
        XCTAssertFalse(s.apply(ChainValueChange(place: .playback(strip: 4), node: 0, value: .bypass(true)), chains: &chains),
                       "no such strip: nothing changes")
    }

    func testAllSlotsListEachTracksInputThenPlaybackChainThenTheMastersReadOnce() throws {
        var s = session(["tallied:a", "lpf:cutoff=banana"], master: "tallied:m")
        s.tracks[0].inputChain = "tallied:in"
        let chains = SessionChains(s, registry: registry)
        let read = parses
        XCTAssertEqual(chains.allSlots.map(\.text), ["tallied:in", "tallied:a", "", "lpf:cutoff=banana", "tallied:m"])
        XCTAssertEqual(chains.allSlots.map { $0.value?.entries.map(\.node) },
                       [["tallied:in"], ["tallied:a"], [], nil, ["tallied:m"]], "the refused chain is there as its error")
        XCTAssertEqual(parses, read, "listing the slots reads nothing")
    }
}
