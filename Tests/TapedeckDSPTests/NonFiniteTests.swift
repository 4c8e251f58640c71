import XCTest
@testable import TapedeckDSP

/// One NaN sample used to turn every later frame of a mix into NaN through `hpf` or
/// `reverb` (issue 13): a chain now replaces non-finite samples at each node's output with
/// silence, resets the node that made them, and counts them.
final class NonFiniteTests: XCTestCase {
    func testOneNaNSampleCostsSilenceForAMomentNotTheRestOfTheMix() throws {
        // Bypassed nodes pass audio on as it came, and that is checked too (make fuzz found a
        // chain of one bypassed node handing a NaN on).
        for text in ["hpf:100", "reverb", "hpf:100,reverb,limiter", "delay:time=50ms:feedback=0.7", "comp:-20:ratio=4,eq:midFreq=1000:midGain=6",
                     "!delay:time=10.5", "!hpf:100,!reverb"] {
            let chain = try Chain(parsing: text).instantiate()
            chain.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: 512)
            defer { chain.release() }
            let buffers = ChannelBuffers(channelCount: 1, capacityFrames: 512)
            var lastBlockRMS = 0.0
            for block in 0..<200 {
                for i in 0..<512 { buffers[0][i] = Float(sin(Double(block * 512 + i) * 2 * .pi * 440 / 48000)) * 0.5 }
                if block == 3 { buffers[0][17] = .nan; buffers[0][18] = .infinity }
                var context = RenderContext(inPlace: buffers.channels, frameCount: 512,
                                            transport: TransportInfo(sampleRate: 48000, isPlaying: true))
                chain.process(&context)
                XCTAssertFalse(buffers[0].contains { !$0.isFinite }, "\(text): block \(block) holds NaN or infinity")
                lastBlockRMS = (buffers[0].reduce(0.0) { $0 + Double($1 * $1) } / 512).squareRoot()
            }
            XCTAssertGreaterThan(chain.nonFiniteSampleCount, 0, "\(text): the bad samples are counted")
            XCTAssertGreaterThan(lastBlockRMS, 0.05, "\(text): the signal is back after the bad samples")
        }
    }

    /// A chain whose host promises clean input (the engine's track and bus chains: their
    /// files are scanned as they are read) does not scan after its built-in nodes: a NaN put
    /// into such a chain on purpose passes a gain untouched (nothing scanned it). A built-in
    /// node whose state goes bad is still caught by its last frame, reset, and the chain
    /// plays on.
    func testBuiltInNodesOfACleanChainSkipTheScanButAreResetWhenTheirStateGoesBad() throws {
        let gain = try Chain(parsing: "gain:-6").instantiate()
        gain.inputIsClean = true
        gain.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: 256)
        defer { gain.release() }
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: 256)
        for i in 0..<256 { buffers[0][i] = 0.5 }
        buffers[0][17] = .nan
        var context = RenderContext(inPlace: buffers.channels, frameCount: 256, transport: TransportInfo(sampleRate: 48000, isPlaying: true))
        gain.process(&context)
        XCTAssertTrue(buffers[0][17].isNaN, "no scan after a built-in node of a clean chain")
        XCTAssertEqual(gain.nonFiniteSampleCount, 0)

        let filter = try Chain(parsing: "hpf:100,gain:0").instantiate()
        filter.inputIsClean = true
        filter.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: 256)
        defer { filter.release() }
        for block in 0..<40 {
            for i in 0..<256 { buffers[0][i] = Float(sin(Double(block * 256 + i) * 0.05)) * 0.5 }
            if block == 2 { buffers[0][17] = .nan }
            var context = RenderContext(inPlace: buffers.channels, frameCount: 256, transport: TransportInfo(sampleRate: 48000, isPlaying: true))
            filter.process(&context)
            if block == 2 { XCTAssertFalse(buffers[0].contains { !$0.isFinite }, "the filter's bad state is caught at its last frame") }
        }
        XCTAssertGreaterThan(filter.nonFiniteSampleCount, 0, "and counted")
        XCTAssertGreaterThan(buffers[0].map(abs).max() ?? 0, 0.1, "the filter plays on after its reset")
    }

    func testACleanSignalCountsNothing() throws {
        let chain = try Chain(parsing: "hpf:80,reverb").instantiate()
        chain.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 2), maxFrames: 256)
        defer { chain.release() }
        let buffers = ChannelBuffers(channelCount: 2, capacityFrames: 256)
        for _ in 0..<20 {
            for c in 0..<2 { for i in 0..<256 { buffers[c][i] = Float(i % 13) / 13 - 0.5 } }
            var context = RenderContext(inPlace: buffers.channels, frameCount: 256, transport: TransportInfo(sampleRate: 48000, isPlaying: true))
            chain.process(&context)
        }
        XCTAssertEqual(chain.nonFiniteSampleCount, 0)
    }
}
