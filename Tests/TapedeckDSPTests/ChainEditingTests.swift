import XCTest
@testable import TapedeckDSP

/// Bypass and the chain panel's edits, all through the one chain parser.
final class ChainEditingTests: XCTestCase {
    func testABypassedNodeParsesPrintsCanonicallyAndPassesAudioUntouched() throws {
        let chain = try Chain(parsing: "hpf:100, ! gain:-20")
        XCTAssertEqual(chain.entries.map(\.bypassed), [false, true])
        XCTAssertEqual(chain.text, "hpf:cutoff=100,!gain:gain=-20")
        XCTAssertEqual(try Chain(parsing: chain.text), chain)
        let instance = chain.instantiate()
        XCTAssertTrue(instance.isBypassed(1))
        // The gain node alone, bypassed: a block comes out as it went in.
        let gainOnly = try Chain(parsing: "!gain:-20").instantiate()
        gainOnly.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: 64)
        defer { gainOnly.release() }
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: 64)
        for i in 0..<64 { buffers[0][i] = 0.5 }
        var context = RenderContext(inPlace: buffers.channels, frameCount: 64, transport: TransportInfo(sampleRate: 48000, isPlaying: true))
        gainOnly.process(&context)
        XCTAssertEqual(buffers[0][63], 0.5)
        XCTAssertThrowsError(try Chain(parsing: "!")) { XCTAssertTrue("\($0)".contains("node name"), "\($0)") }
    }

    func testAChainTypedWithABareValueShowsEveryParameterWithItsValue() throws {
        let chain = try Chain(parsing: "hpf:100,comp:-20:ratio=3")
        let hpf = chain.parameters(of: 0)
        XCTAssertEqual(hpf.first?.definition.id, "cutoff")
        XCTAssertEqual(hpf.first?.value, .number(100))
        XCTAssertTrue(hpf.first?.isSet ?? false)
        let comp = chain.parameters(of: 1)
        XCTAssertEqual(comp.first { $0.definition.id == "threshold" }?.value, .number(-20))
        XCTAssertEqual(comp.first { $0.definition.id == "ratio" }?.value, .number(3))
        XCTAssertTrue(comp.contains { !$0.isSet }, "unset parameters show their defaults")
    }

    func testSteppingAParameterStaysInRangeAndPrintsCanonically() throws {
        var chain = try Chain(parsing: "hpf:100,comp:-20:ratio=3")
        XCTAssertTrue(chain.step(entry: 0, parameter: 0, steps: 1, coarse: false))
        XCTAssertEqual(chain.text, "hpf:cutoff=110,comp:threshold=-20:ratio=3")
        XCTAssertTrue(chain.step(entry: 0, parameter: 0, steps: -1, coarse: true))
        XCTAssertEqual(chain.entries[0].settings[0].value, .number(10), "110 - 10 × 10")
        for _ in 0..<50 { _ = chain.step(entry: 0, parameter: 0, steps: -1, coarse: true) }
        let minimum = chain.parameters(of: 0)[0].definition.minimum
        XCTAssertEqual(chain.entries[0].settings[0].value, .number(minimum), "clamped to the range")
        let ratio = chain.parameters(of: 1).firstIndex { $0.definition.id == "ratio" }!
        XCTAssertTrue(chain.step(entry: 1, parameter: ratio, steps: 1, coarse: false))
        XCTAssertEqual(try Chain(parsing: chain.text), chain, "what the panel stores parses back the same")
        XCTAssertTrue(chain.text.contains("ratio=3.1"), chain.text)
    }

    func testEntriesMoveAndGo() throws {
        var chain = try Chain(parsing: "hpf:80,comp,gain:-3")
        XCTAssertTrue(chain.move(2, by: -2))
        XCTAssertFalse(chain.move(0, by: -1))
        chain.remove(at: 1)
        chain.setBypassed(0, true)
        XCTAssertEqual(chain.text, "!gain:gain=-3,comp")
    }
}
