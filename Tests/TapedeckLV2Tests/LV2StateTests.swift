import Foundation
import XCTest
import TapedeckDSP
import TapedeckLV2

/// Presets, saved state and latency, through x42's convolver (state: its impulse response,
/// loaded by the worker) and x42's digital peak limiter (latency).
final class LV2StateTests: XCTestCase {
    private let convolver = "http://gareus.org/oss/lv2/zeroconvolv#Mono"

    private func impulse(at frame: Int, count: Int = 24000) -> [Float] {
        var x = [Float](repeating: 0, count: count)
        x[frame] = 0.5
        return x
    }

    private func peakFrame(_ y: [Float]) -> Int { y.indices.max { abs(y[$0]) < abs(y[$1]) }! }

    func testAPresetLoadsAConvolverImpulseResponseThroughTheWorker() throws {
        let (wet, chain) = try LV2Test.render("lv2:\(convolver):@preset=No-OP Mono", input: [impulse(at: 1000)])
        XCTAssertEqual(chain.problems, [])
        // The preset's impulse response is a single spike: the click comes out unchanged, as
        // late as the latency the plugin reports.
        XCTAssertEqual(peakFrame(wet[0]), 1000 + chain.latencyFrames)
        XCTAssertEqual(wet[0][peakFrame(wet[0])], 0.5, accuracy: 0.01)
        // Without the preset the convolver has no impulse response and stays silent.
        let (dry, _) = try LV2Test.render("lv2:\(convolver)", input: [impulse(at: 1000)])
        XCTAssertLessThan(dry[0].map(abs).max()!, 1e-4)
    }

    func testSavedStateRestoresTheImpulseResponseWithoutThePreset() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lv2-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }

        let (original, live) = try LV2Test.render("lv2:\(convolver):@preset=No-OP Mono", input: [impulse(at: 500)])
        let saved = try live.capturingState(in: folder)
        XCTAssertNil(saved.entries[0].preset, "the state replaces the preset")
        let name = try XCTUnwrap(saved.entries[0].state)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(folder)/\(name)/state.ttl"))
        XCTAssertTrue(saved.text.hasSuffix(":@state=\(name)"), saved.text)

        // Reopened from the saved text, as a session is: the impulse response is back.
        let (restored, chain) = try LV2Test.render(saved.text, input: [impulse(at: 500)], stateFolder: folder)
        XCTAssertEqual(chain.problems, [])
        XCTAssertEqual(restored[0].count, original[0].count)
        let difference = zip(restored[0], original[0]).map { abs($0 - $1) }.max()!
        XCTAssertLessThan(difference, 1e-6)
        XCTAssertEqual(peakFrame(restored[0]), 500 + chain.latencyFrames)

        // A state folder that is gone is reported, and the node still runs (from defaults).
        let (_, orphan) = try LV2Test.render(saved.text, input: [impulse(at: 500)], stateFolder: folder + "/nowhere")
        XCTAssertEqual(orphan.problems.count, 1)
        XCTAssertTrue(orphan.problems[0].contains("missing or unreadable"), orphan.problems[0])
    }

    func testUnreferencedStateFoldersAreRemovedAndReferencedOnesKept() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lv2-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        let (_, live) = try LV2Test.render("lv2:\(convolver):@preset=No-OP Mono", input: [impulse(at: 10)])
        let first = try live.capturingState(in: folder), second = try live.capturingState(in: folder)
        XCTAssertNotEqual(first.entries[0].state, second.entries[0].state, "each save makes a new folder")
        // A missing plugin's state is kept too: its text still names it.
        let missing = try Chain(parsing: "lv2:urn:tapedeck-test:gone:@state=\(first.entries[0].state!)", registry: LV2Test.registry)
        XCTAssertEqual(PluginStateFolder.removeUnreferenced(in: folder, keeping: [second]), [first.entries[0].state!])
        let kept = try live.capturingState(in: folder)
        XCTAssertEqual(PluginStateFolder.removeUnreferenced(in: folder, keeping: [kept, missing]), [second.entries[0].state!])
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: folder)), [kept.entries[0].state!])
    }

    func testAPluginsReportedLatencyIsTheChainsLatency() throws {
        let (y, chain) = try LV2Test.render("lv2:dpl-mono,gain:-6", input: [impulse(at: 2000)])
        XCTAssertEqual(chain.problems, [])
        XCTAssertGreaterThan(chain.latencyFrames, 0)
        XCTAssertEqual(peakFrame(y[0]), 2000 + chain.latencyFrames, "the click is delayed by exactly what the plugin reports")
    }

    func testTheWorkerThreadDeliversInRealTimeToo() throws {
        // Realtime rendering hands the load to the worker thread and the answer comes back
        // after a later block. Blocks are paced a little, like a device would, and a click
        // every 100 ms shows when the impulse response arrived: the last one comes through.
        let chain = try Chain(parsing: "lv2:\(convolver):@preset=No-OP Mono", registry: LV2Test.registry)
            .instantiate(registry: LV2Test.registry)
        chain.prepare(format: NodeFormat(sampleRate: LV2Test.sampleRate, channelCount: 1, isRealtime: true), maxFrames: 480)
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: 480)
        var output: [Float] = []
        for block in 0..<200 {
            buffers.clear(frameCount: 480)
            if block % 10 == 0 { buffers[0][0] = 0.5 }
            var context = RenderContext(inPlace: buffers.channels, frameCount: 480)
            chain.process(&context)
            output.append(contentsOf: buffers[0].prefix(480))
            usleep(1000)
        }
        XCTAssertEqual(chain.problems, [])
        let last = 190 * 480 + chain.latencyFrames
        XCTAssertEqual(output[last], 0.5, accuracy: 0.01)
        XCTAssertLessThan(output[(last + 1)...].map(abs).max()!, 1e-4)
    }
}
