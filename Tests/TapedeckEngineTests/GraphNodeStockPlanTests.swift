import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// The worker foresees, from two specs alone, which nodes a graph build will make new
/// (``GraphNodeStockPlan``), by the build's own rules: a node the build keeps is not made
/// again, one it would make is made once.
final class GraphNodeStockPlanTests: XCTestCase {
    private var folder: SessionFolder!
    private let plan = GraphNodeStockPlan(sampleRate: 48000, periodFrames: 256, isRealtime: true)

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    private var base: Session {
        var s = Session()
        s.tracks = [Track(name: "A", playbackChain: "gain:gain=-3,hpf:cutoff=80"), Track(name: "B", playbackChain: "comp")]
        s.tracks[0].armed = true
        s.tracks[0].inputChannels = [1]
        s.tracks[0].inputChain = "gate"
        s.masterChain = "limiter"
        return s
    }

    /// How many nodes the plan makes for `edit` of the base session, and which.
    private func made(_ edit: (inout Session) -> Void) throws -> Int {
        var next = base
        edit(&next)
        let stock = plan.stock(for: try GraphSpec(session: next, folder: folder), after: try GraphSpec(session: base, folder: folder))
        defer { stock.discard() }
        return stock.count
    }

    func testWhatTheBuildKeepsIsNotMadeAndWhatItWouldMakeIsMadeOnce() throws {
        XCTAssertEqual(try made { _ in }, 0, "nothing changed")
        XCTAssertEqual(try made { $0.tracks[0].playbackChain = "gain:gain=-9,hpf:cutoff=120" }, 0, "values are set in place")
        XCTAssertEqual(try made { $0.tracks[0].playbackChain = "gain:gain=-3,eq,hpf:cutoff=80" }, 1, "a node put between two")
        XCTAssertEqual(try made { $0.tracks[0].playbackChain = "hpf:cutoff=80" }, 0, "a node taken out")
        XCTAssertEqual(try made { $0.tracks.append(Track(name: "C", playbackChain: "gain,reverb")) }, 2, "a new track's chain")
        XCTAssertEqual(try made { $0.tracks[1].name = "B2" }, 0, "a renamed track keeps its strip (by material)")
        XCTAssertEqual(try made { $0.masterChain = "eq,limiter" }, 1, "the master's new node")
        XCTAssertEqual(try made { $0.masterChain = "limiter:ceiling=-2" }, 0, "the master retuned")
        XCTAssertEqual(try made { $0.tracks[0].inputChain = "gate:threshold=-50" }, 0, "the input retuned")
        XCTAssertEqual(try made { $0.tracks[0].inputChain = "gate,comp" }, 2, "a changed input is built whole")
        XCTAssertEqual(try made { $0.tracks[1].armed = true; $0.tracks[1].inputChannels = [2]; $0.tracks[1].inputChain = "hpf" }, 1,
                       "a new input's chain")
    }

    func testTheChainTakesTheStockedNodeWithItsValuesAndReleasesWhatIsLeft() throws {
        let format = NodeFormat(sampleRate: 48000, channelCount: 1)
        let entry = try Chain(parsing: "gain:gain=-6").entries[0]
        let stock = NodeStock()
        stock.make(entry, format: format, maxFrames: 256)
        stock.make(try Chain(parsing: "hpf").entries[0], format: format, maxFrames: 256)
        XCTAssertEqual(stock.count, 2)
        // Another format does not take it; the same entry with another value does.
        let stereo = try Chain(parsing: "gain:gain=-3").instantiate(reusing: nil, format: NodeFormat(sampleRate: 48000, channelCount: 2),
                                                                     maxFrames: 256, stock: stock).instance
        XCTAssertEqual(stock.count, 2, "a stereo chain took a mono node")
        stereo.release()
        let mono = try Chain(parsing: "gain:gain=-3").instantiate(reusing: nil, format: format, maxFrames: 256, stock: stock).instance
        XCTAssertEqual(stock.count, 1)
        XCTAssertEqual(mono.nodes[0].parameters.value(0), -3, "the chain's value, not the stocked one")
        // It plays: -3 dB on a constant signal once the ramp is done.
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: 256)
        var last: Float = 0
        for _ in 0..<10 {
            for i in 0..<256 { buffers.channels[0][i] = 1 }
            var context = RenderContext(inPlace: buffers.channels, frameCount: 256, midiEvents: UnsafeBufferPointer(start: nil, count: 0),
                                        transport: TransportInfo(sampleRate: 48000, isPlaying: true))
            mono.process(&context)
            last = buffers.channels[0][255]
        }
        XCTAssertEqual(Double(last), pow(10, -3.0 / 20), accuracy: 1e-4)
        mono.release()
        stock.discard()
        XCTAssertEqual(stock.count, 0)
    }
}
