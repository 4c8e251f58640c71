import XCTest
@testable import TapedeckDSP

final class ChainTests: XCTestCase {
    private func parse(_ text: String) throws -> Chain { try Chain(parsing: text) }

    private func error(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ChainError? {
        do {
            _ = try Chain(parsing: text)
            XCTFail("'\(text)' should not parse", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testTheDesignDocumentsExampleParsesIntoThreeNodes() throws {
        let chain = try parse("hpf:cutoff=80,comp:threshold=-18:ratio=4,delay:time=1/8:feedback=0.3")
        XCTAssertEqual(chain.entries.map(\.node), ["hpf", "comp", "delay"])
        XCTAssertEqual(chain.entries[1].settings, [.init(parameter: "threshold", value: .number(-18)),
                                                   .init(parameter: "ratio", value: .number(4))])
        XCTAssertEqual(chain.entries[2].settings[0].value, .note(NoteValue(denominator: 8)))
        XCTAssertEqual(chain.entries[2].settings[1].value, .number(0.3))
    }

    func testFileSettingsReadAsTextAndPrintBackQuotedWhenNeeded() throws {
        let chain = try Chain(parsing: "sampler:file=samples/kick.wav:root=36,gain:-3")
        XCTAssertEqual(chain.entries[0].texts, [TextSetting(parameter: "file", value: "samples/kick.wav")])
        XCTAssertEqual(chain.text, "sampler:root=36:file=samples/kick.wav,gain:gain=-3")
        let odd = try Chain(parsing: "sampler:file=<a:b, c.wav>")
        XCTAssertEqual(odd.entries[0].texts[0].value, "a:b, c.wav")
        XCTAssertEqual(try Chain(parsing: odd.text), odd, "canonical text reads back")
        XCTAssertThrowsError(try Chain(parsing: "sampler:file=")) { XCTAssertTrue("\($0)".contains("missing value")) }
        XCTAssertThrowsError(try Chain(parsing: "sampler:file=a.wav:file=b.wav")) { XCTAssertTrue("\($0)".contains("set twice")) }
        XCTAssertThrowsError(try Chain(parsing: "sampler:fiel=a.wav")) { XCTAssertTrue("\($0)".contains("file"), "\($0)") }
    }

    func testABareValueSetsTheFirstParameter() throws {
        XCTAssertEqual(try parse("gain:-6").text, "gain:gain=-6")
        XCTAssertEqual(try parse("hpf:80").text, "hpf:cutoff=80")
        XCTAssertEqual(try parse("delay:250:feedback=0.5").text, "delay:time=250:feedback=0.5")
    }

    func testUnitsAreConvertedIntoTheParametersUnit() throws {
        XCTAssertEqual(try parse("hpf:80hz").text, "hpf:cutoff=80")
        XCTAssertEqual(try parse("lpf:2.5kHz").text, "lpf:cutoff=2500")
        XCTAssertEqual(try parse("gain:-6db").text, "gain:gain=-6")
        XCTAssertEqual(try parse("delay:250ms").text, "delay:time=250")
        XCTAssertEqual(try parse("delay:time=1.5s").text, "delay:time=1500")
        XCTAssertEqual(try parse("delay:feedback=30%").text, "delay:feedback=0.3")
        XCTAssertEqual(try parse("sampler:tune=-12st").text, "sampler:tune=-12")
    }

    func testNoteValuesParseAsPlainDottedAndTriplet() throws {
        let chain = try parse("delay:1/4.,tremolo:rate=1/8t,delay:time=3/16")
        XCTAssertEqual(chain.entries[0].settings[0].value, .note(NoteValue(denominator: 4, modifier: .dotted)))
        XCTAssertEqual(chain.entries[1].settings[0].value, .note(NoteValue(denominator: 8, modifier: .triplet)))
        XCTAssertEqual(NoteValue(denominator: 4, modifier: .dotted).wholeNotes, 0.375)
        XCTAssertEqual(chain.text, "delay:time=1/4.,tremolo:rate=1/8t,delay:time=3/16")
    }

    func testCanonicalTextRoundTrips() throws {
        for text in ["hpf:cutoff=80,comp:threshold=-18:ratio=4,delay:time=1/8:feedback=0.3",
                     " eq : lowGain = 3 : midQ=2 , tone:wave=saw:440 ".replacingOccurrences(of: ":440", with: ""),
                     "tone:440:wave=square:level=-20,noise:color=pink", "", "reverb"] {
            let chain = try parse(text)
            XCTAssertEqual(try parse(chain.text), chain, text)
            XCTAssertEqual(try parse(chain.text).text, chain.text)
        }
        XCTAssertEqual(try parse("tone:wave=saw:frequency=220").text, "tone:frequency=220:wave=saw")
    }

    func testInstantiatedNodesCarryTheParsedSettings() throws {
        let instance = try parse("comp:threshold=-30:ratio=8,delay:1/8").instantiate()
        XCTAssertEqual(instance.nodes[0].parameters.value(0), -30)
        XCTAssertEqual(instance.nodes[0].parameters.value(1), 8)
        XCTAssertEqual(instance.nodes[1].parameters.syncedWholeNotes(0), 0.125)
    }

    func testAnUnknownNodeIsReportedAtItsOffset() {
        let e = error("hpf:80,compressor:ratio=4")
        XCTAssertEqual(e?.offset, 7)
        XCTAssertEqual(e?.length, 10)
        XCTAssertTrue(e?.description.contains("unknown node 'compressor', did you mean 'comp'?") ?? false, e?.description ?? "")
        XCTAssertTrue(error("lfp:200")?.description.contains("did you mean 'lpf'?") ?? false)
        XCTAssertTrue(e?.description.hasSuffix("\n  hpf:80,compressor:ratio=4\n         ^^^^^^^^^^") ?? false, e?.description ?? "")
    }

    func testAnUnknownParameterIsReportedAtItsOffset() {
        let e = error("hpf:80,comp:thresh=-18")
        XCTAssertEqual(e?.offset, 12)
        XCTAssertEqual(e?.reason, .unknownParameter(node: "comp", parameter: "thresh",
                                                    known: ["threshold", "ratio", "attack", "release", "knee", "makeup"]))
        XCTAssertTrue(e?.description.contains("column 13") ?? false)
    }

    func testAnOutOfRangeValueIsReportedAtTheValue() {
        let e = error("gain:-6,hpf:cutoff=50000")
        XCTAssertEqual(e?.offset, 19)
        XCTAssertTrue(e?.description.contains("out of range 10…20000 Hz") ?? false, e?.description ?? "")
        XCTAssertEqual(error("delay:feedback=1.5")?.offset, 15)
        XCTAssertEqual(error("tone:wave=triangle")?.offset, 10)
    }

    func testAUnitThatDoesNotFitIsReportedAtTheUnit() {
        let e = error("hpf:cutoff=80db")
        XCTAssertEqual(e?.offset, 13)
        XCTAssertEqual(error("gain:1/8")?.offset, 5, "gain does not follow the tempo")
    }

    func testMalformedTextIsReportedWhereItBreaks() {
        XCTAssertEqual(error("hpf:80,,comp")?.offset, 7, "empty node between commas")
        XCTAssertEqual(error("hpf:80,")?.offset, 6, "trailing comma")
        XCTAssertEqual(error("hpf:")?.offset, 3, "empty setting")
        XCTAssertEqual(error("hpf:cutoff=")?.offset, 10, "missing value")
        XCTAssertEqual(error("hpf:cutoff=abc")?.offset, 11, "not a number")
        XCTAssertEqual(error("delay:feedback=0.3:250")?.offset, 19, "bare value after a named one")
        XCTAssertEqual(error("hpf:80:cutoff=90")?.offset, 7, "set twice")
        XCTAssertEqual(error("h*f:80")?.offset, 1, "bad character in a name")
        XCTAssertEqual(error("delay:1/0")?.offset, 6, "zero denominator")
    }

    func testTheListingNamesEveryNodeWithItsKindAndTheDetailShowsParameters() throws {
        let registry = NodeRegistry.builtIn
        let listing = registry.listingText()
        for d in registry.descriptors {
            XCTAssertTrue(listing.contains(d.name) && listing.contains(d.summary), d.name)
        }
        XCTAssertTrue(listing.contains("music effect") && listing.contains("instrument") && listing.contains("generator"))
        let detail = try registry.detailText(name: "comp")
        XCTAssertTrue(detail.contains("threshold") && detail.contains("-60 … 0") && detail.contains("-18.0 dB"), detail)
        XCTAssertTrue(try registry.detailText(name: "delay").contains("note (1/8, 1/4., 1/8t)"))
        XCTAssertThrowsError(try registry.detailText(name: "nope"))
    }

    func testEveryNodeTypeHasAUniqueNameAndSubtype() {
        let d = NodeRegistry.builtIn.descriptors
        XCTAssertEqual(Set(d.map(\.name)).count, d.count)
        XCTAssertEqual(Set(d.map(\.subtype)).count, d.count)
        XCTAssertEqual(Set(d.map(\.kind)), Set(NodeKind.allCases))
        XCTAssertEqual(FourCharCode("comp").description, "comp")
    }

    func testABypassedNodeIsSkippedAndTheChainReportsLatency() throws {
        let instance = try parse("gain:-20,limiter").instantiate()
        instance.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: 64)
        XCTAssertEqual(instance.latencyFrames, 240)
        instance.setBypassed(0, true)
        instance.setBypassed(1, true)
        XCTAssertEqual(instance.latencyFrames, 0)
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: 64)
        for i in 0..<64 { buffers[0][i] = 0.25 }
        var context = RenderContext(inPlace: buffers.channels, frameCount: 64)
        instance.process(&context)
        XCTAssertEqual(buffers[0][10], 0.25)
        instance.release()
    }
}
