import Foundation
import XCTest
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// A node that notes the thread it was prepared on, the blocks it ran and its release.
private final class ProbeNode: Node, @unchecked Sendable {
    let descriptor: NodeDescriptor
    let parameters: NodeParameters
    let preparedOn = Mutex<pthread_t?>(nil)
    let blocks = Atomic<Int>(0)
    let released = Atomic<Bool>(false)

    init(descriptor: NodeDescriptor) {
        self.descriptor = descriptor
        parameters = NodeParameters(descriptor.parameters)
    }

    func prepare(format: NodeFormat, maxFrames: Int) {
        // Slow, as a SoundFont's load is: a build that makes it on the UI thread freezes it.
        usleep(50_000)
        preparedOn.withLock { $0 = pthread_self() }
    }
    func process(_ context: inout RenderContext) { blocks.add(1, ordering: .relaxed) }
    func reset() {}
    func release() { released.store(true, ordering: .relaxed) }
}

/// Makes ``ProbeNode``s for every `probe:` name, and keeps them.
private final class ProbeProvider: NodeTypeProvider, Sendable {
    let prefix = "probe"
    let made = Mutex<[ProbeNode]>([])

    func resolve(_ reference: String, isURI: Bool) -> NodeResolution { .found(identifier: reference) }
    func descriptor(identifier: String) -> NodeDescriptor? {
        NodeDescriptor(name: "probe:" + identifier, displayName: identifier, kind: .effect, subtype: "prb1", tags: [], summary: "notes",
                       parameters: [ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -24, maximum: 24, defaultValue: 0)])
    }
    func resolvePreset(_ name: String, identifier: String) throws(NodeTypeError) -> String { throw NodeTypeError("no presets") }
    func makeNode(identifier: String, entry: Chain.Entry, stateFolder: String?) -> (any Node)? {
        guard let d = descriptor(identifier: identifier) else { return nil }
        let node = ProbeNode(descriptor: d)
        made.withLock { $0.append(node) }
        return node
    }
    func detailText(identifier: String) -> String { identifier }
}

/// A screen edit's new nodes are made on the build worker, not on the control (UI) thread
/// (issue 42 item 4): a new General MIDI track loads its SoundFont there, and the screen's
/// clock ran on. The graph then plays the very nodes the worker made.
final class NodeStockBuildTests: XCTestCase {
    private static let provider = ProbeProvider()

    /// A transport on a paced offline clock over one 4 s track, with the probe nodes
    /// installed (and none made yet) until the test ends.
    private func openTransport() throws -> (Transport, Session) {
        NodeRegistry.install(Self.provider)
        addTeardownBlock { NodeRegistry.uninstall(prefix: Self.provider.prefix) }
        Self.provider.made.withLock { $0 = [] }
        let dir = try TransportFixture.temporaryFolder()
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try TransportFixture.session(in: dir, signals: [TransportFixture.noise(48000 * 4)])
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0, paced: true)
        return (try Transport(session: session, folder: folder, device: device, isOffline: true), session)
    }

    func testAnEditsNewNodesAreMadeOnTheWorkerAndPlayed() throws {
        let (t, session) = try openTransport()
        defer { t.close() }
        t.play(from: 0)

        // A new track with an instrument and an effect; a node put after t1's material (its
        // strip succeeds the old one); a new master chain. Every one of them is new.
        var edited = session
        edited.tracks[0].playbackChain = "probe:a:level=-6"
        edited.tracks.append(Track(name: "Synth", playbackChain: "probe:b,probe:c:level=3"))
        edited.masterChain = "probe:d"
        let control = pthread_self()
        t.followInBackground(session: edited)
        let deadline = Date().addingTimeInterval(60)
        while t.snapshot().graphPending && Date() < deadline { usleep(5000) }
        XCTAssertFalse(t.snapshot().graphPending, "the graph was never swapped in")

        let made = Self.provider.made.withLock { $0 }
        XCTAssertEqual(made.map(\.descriptor.displayName).sorted(), ["a", "b", "c", "d"],
                       "each new node made once: the worker foresaw all of them, the build made none again")
        for node in made {
            let thread = node.preparedOn.withLock { $0 }
            XCTAssertNotNil(thread, "\(node.descriptor.name) was never prepared")
            if let thread { XCTAssertEqual(pthread_equal(thread, control), 0, "\(node.descriptor.name) was prepared on the control thread") }
            XCTAssertFalse(node.released.load(ordering: .relaxed), "\(node.descriptor.name) was released: the build did not take it")
        }
        XCTAssertEqual(made.first { $0.descriptor.displayName == "a" }?.parameters.value(0), -6, "its value set")
        // The graph plays the worker's nodes.
        let playing = Date().addingTimeInterval(20)
        while made.contains(where: { $0.blocks.load(ordering: .relaxed) < 4 }) && Date() < playing { usleep(5000) }
        for node in made { XCTAssertGreaterThanOrEqual(node.blocks.load(ordering: .relaxed), 4, "\(node.descriptor.name) never played") }
    }

    func testNodesMadeForAGraphThatWasNeverBuiltAreReleased() throws {
        let (t, session) = try openTransport()
        defer { t.close() }

        // Built on the worker, then overtaken by a build on the control thread of another
        // session: the worker's node is for nothing, and goes.
        var stale = session
        stale.tracks.append(Track(name: "Stale", playbackChain: "probe:stale"))
        t.followInBackground(session: stale)
        var other = session
        other.tracks.append(Track(name: "Other"))
        XCTAssertNil(t.follow(session: other))
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            _ = t.snapshot()
            if Self.provider.made.withLock({ $0.first?.released.load(ordering: .relaxed) ?? false }) { break }
            usleep(5000)
        }
        let made = Self.provider.made.withLock { $0 }
        XCTAssertEqual(made.map(\.descriptor.displayName), ["stale"])
        XCTAssertEqual(made.first?.released.load(ordering: .relaxed), true, "the node made for nothing was never released")
        XCTAssertEqual(t.spec.tracks.map(\.name), ["t1", "Other"])
    }
}
