import XCTest
import Synchronization
import TapedeckCore
import TapedeckDSP
@testable import TapedeckUI

/// A node type provider that counts how often chain text naming one of its types is parsed:
/// the parser resolves each such reference once per parse.
private final class CountingProvider: NodeTypeProvider {
    let prefix = "counted"
    let resolves = Atomic<Int>(0)

    func resolve(_ reference: String, isURI: Bool) -> NodeResolution {
        resolves.add(1, ordering: .relaxed)
        return .found(identifier: reference)
    }

    func descriptor(identifier: String) -> NodeDescriptor? {
        NodeDescriptor(name: "counted:" + identifier, displayName: identifier, kind: .effect, subtype: "cnt1", tags: [],
                       summary: "counts parses",
                       parameters: [ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -24, maximum: 24, defaultValue: 0)])
    }

    func resolvePreset(_ name: String, identifier: String) throws(NodeTypeError) -> String { throw NodeTypeError("no presets") }
    func makeNode(identifier: String, entry: Chain.Entry, stateFolder: String?) -> (any Node)? { nil }
    func detailText(identifier: String) -> String { identifier }
}

/// Chains are parsed once, when their text changes (issue 42, item 3): drawing the screen,
/// the chain panel, automation lanes and stepping a value read the parsed value the screen
/// keeps, never the session's text again.
final class ChainParseOnceTests: XCTestCase {
    private static let provider = CountingProvider()

    private func makeModel(link: FakeLink) -> ScreenModel {
        // Installed for this test only: it claims every name it is asked for.
        NodeRegistry.install(Self.provider)
        addTeardownBlock { NodeRegistry.uninstall(prefix: Self.provider.prefix) }
        var session = Session()
        var lead = Track(name: "Lead", playbackChain: "counted:amp:level=3,hpf:80")
        lead.automation = [AutomationLane(parameter: .node("counted:amp", "level"), points: [AutomationPoint(frame: 0, value: 3)])]
        session.tracks = [lead, Track(name: "Broken", playbackChain: "hpf:nope")]
        session.masterChain = "counted:bus"
        return ScreenModel(document: SessionDocument(session: session), folder: nil, link: link)
    }

    private var parses: Int { Self.provider.resolves.load(ordering: .relaxed) }

    func testDrawingAndSteppingNeverParseTheStoredChainAgain() throws {
        let link = FakeLink()
        let model = makeModel(link: link)
        let before = parses
        var screen = ScreenRenderer.render(model, height: 30, width: 120, glyphs: .unicode).text
        XCTAssertEqual(parses - before, 2, "the first frame reads each chain naming the provider once (Lead's, the master's)")
        XCTAssertEqual(TrackListView.chainSummary(model.chain(0)), "counted:amp>hpf", "the list's summary of the kept chain")
        XCTAssertTrue(screen.contains("hpf:nope"), "a chain the parser refused is shown as written:\n\(screen)")

        // The fake transport reads its session's chains once, as the transport does.
        link.chains.update(to: link.session)
        // Frames, the chain panel and an automation lane's range: nothing is read again.
        let read = parses
        model.perform(.automationLanes)  // the selected track's lanes shown
        for _ in 0..<10 { screen = ScreenRenderer.render(model, height: 30, width: 120, glyphs: .unicode).text }
        XCTAssertEqual(try model.parsedChain(0).entries.map(\.node), ["counted:amp", "hpf"])
        XCTAssertEqual(model.parameterRange(0, node: "counted:amp", id: "level"), -24...24)
        XCTAssertThrowsError(try model.parsedChain(1), "the refused chain keeps its error")
        XCTAssertEqual(parses, read, "drawing and reading the kept chains parses nothing")

        // A stepped value is one edit; the changed chain is kept as it was made, not read back.
        XCTAssertTrue(model.applyChainValue(.parameter("level", .number(-6)), node: 0, track: 0, name: "change parameter"))
        XCTAssertEqual(model.session.tracks[0].playbackChain, "counted:<amp>:level=-6,hpf:cutoff=80")
        screen = ScreenRenderer.render(model, height: 30, width: 120, glyphs: .unicode).text
        XCTAssertEqual(try model.parsedChain(0).entries.first?.settings.first?.value, .number(-6))
        XCTAssertEqual(parses, read, "the stepped chain is handed in, never parsed from its new text")

        // A whole chain put in place (the panel's reorder): named by what was done, neither
        // the chain it replaces nor its own new text read again.
        var reordered = try model.parsedChain(0)
        XCTAssertTrue(reordered.move(0, by: 1))
        XCTAssertNotNil(model.applyChain(reordered, track: 0, kind: .reorder))
        XCTAssertEqual(model.document.undoName, "reorder chain on \(model.session.tracks[0].name)")
        _ = ScreenRenderer.render(model, height: 30, width: 120, glyphs: .unicode)
        XCTAssertEqual(try model.parsedChain(0).entries.map(\.node), ["hpf", "counted:amp"])
        XCTAssertEqual(parses, read, "a chain put in place parses nothing")
        model.perform(.undo)

        // Undo brings back the old text: read once when it comes back, then kept.
        model.perform(.undo)
        XCTAssertEqual(model.session.tracks[0].playbackChain, "counted:amp:level=3,hpf:80")
        for _ in 0..<5 { screen = ScreenRenderer.render(model, height: 30, width: 120, glyphs: .unicode).text }
        XCTAssertEqual(try model.parsedChain(0).entries.first?.settings.first?.value, .number(3))
        XCTAssertEqual(parses, read + 1, "the text undo brought back is read once, not once a frame")
    }
}
