import XCTest
import TapedeckDSP
import TapedeckLV2

/// `lv2:` entries in chain text: where a URI ends, short names, presets, canonical text, and
/// what happens to a plugin that is not installed.
final class LV2ChainTests: XCTestCase {
    private func parse(_ text: String) throws(ChainError) -> Chain { try Chain(parsing: text, registry: LV2Test.registry) }

    private func error(_ text: String) -> ChainError? {
        do { _ = try parse(text); return nil } catch { return error }
    }

    func testAPlainURIEndsAtTheFirstNamedSetting() throws {
        let chain = try parse("hpf:80,lv2:\(LV2Test.amp):gain=-6,gain:3")
        XCTAssertEqual(chain.entries.map(\.node), ["hpf", "lv2:\(LV2Test.amp)", "gain"])
        XCTAssertEqual(chain.entries[1].settings.map(\.parameter), ["gain"])
        XCTAssertEqual(chain.entries[1].settings.map(\.value), [.number(-6)])
        XCTAssertEqual(chain.text, "hpf:cutoff=80,lv2:\(LV2Test.amp):gain=-6,gain:gain=3")
        XCTAssertEqual(try parse(chain.text), chain, "canonical text reads back as the same chain")
    }

    func testAShortNameTakesABareValueAndPrintsAsTheURI() throws {
        let chain = try parse("lv2:amp:6db")
        XCTAssertEqual(chain.entries[0].node, "lv2:\(LV2Test.amp)")
        XCTAssertEqual(chain.text, "lv2:\(LV2Test.amp):gain=6")
        XCTAssertEqual(try parse("LV2:AMP:6").entries, chain.entries, "prefix and short name ignore case")
    }

    func testAnyURIMayBeWrittenInAngleBrackets() throws {
        XCTAssertEqual(try parse("lv2:<\(LV2Test.amp)>:gain=2").entries, try parse("lv2:\(LV2Test.amp):gain=2").entries)
        // A URI holding ',' or '=' only reads in brackets, and canonical text writes it so.
        let odd = try parse("lv2:<urn:example:a,b=c>:x=1,gain:-1")
        XCTAssertEqual(odd.entries.map(\.node), ["lv2:urn:example:a,b=c", "gain"])
        XCTAssertEqual(odd.text, "lv2:<urn:example:a,b=c>:x=1,gain:gain=-1")
        XCTAssertEqual(try parse(odd.text), odd)
    }

    func testAPluginThatIsNotInstalledIsKeptVerbatimAndPassedThrough() throws {
        let text = "gain:-6,lv2:urn:tapedeck-test:gone:drive=11:@state=x-1.lv2,gain:-6"
        let chain = try parse(text)
        XCTAssertTrue(chain.entries[1].isMissing)
        XCTAssertEqual(chain.text, "gain:gain=-6,lv2:urn:tapedeck-test:gone:drive=11:@state=x-1.lv2,gain:gain=-6")
        XCTAssertEqual(chain.stateReferences, ["x-1.lv2"])
        let x = LV2Test.sine(500)
        let (y, instance) = try LV2Test.render(text, input: [x])
        XCTAssertEqual(instance.nodes.count, 3, "the missing node keeps its place")
        XCTAssertEqual(instance.problems, ["node 2 (lv2:urn:tapedeck-test:gone): not installed; passed through"])
        // The nodes either side still work: -6 dB twice.
        XCTAssertEqual(LV2Test.decibels(LV2Test.rms(y[0], 4800..<48000) / LV2Test.rms(x, 4800..<48000)), -12, accuracy: 0.01)
    }

    func testMistakesAreRefusedWithACaretUnderThem() throws {
        let unknownShort = try XCTUnwrap(error("lv2:ampp:6"))
        XCTAssertTrue(unknownShort.message.contains("no installed LV2 plugin has this short name"), unknownShort.message)
        XCTAssertTrue(unknownShort.message.contains("'amp'"), unknownShort.message)
        XCTAssertEqual(unknownShort.offset, 4)
        // Two plugins are called xfade (swh and x42): the short name is not enough.
        let ambiguous = try XCTUnwrap(error("lv2:xfade"))
        XCTAssertTrue(ambiguous.message.contains("several installed plugins"), ambiguous.message)
        let badParameter = try XCTUnwrap(error("lv2:\(LV2Test.amp):gian=3"))
        XCTAssertTrue(badParameter.message.contains("has no parameter 'gian', did you mean 'gain'?"), badParameter.message)
        let range = try XCTUnwrap(error("lv2:amp:gain=100"))
        XCTAssertTrue(range.message.contains("out of range -70…70 dB"), range.message)
        // After a plain URI a bare value is part of the URI: that URI is not installed, so it
        // is kept as missing — but never silently applied as the gain.
        XCTAssertTrue(try parse("lv2:\(LV2Test.amp):6").entries[0].isMissing)
        XCTAssertNotNil(error("lv2:"))
        XCTAssertNotNil(error("lv2:<\(LV2Test.amp)"))
        XCTAssertNotNil(error("lv2:amp:@preset=nothing"))
        XCTAssertNotNil(error("lv2:amp:@colour=red"))
        XCTAssertNotNil(error("lv2:amp:@state=../../etc"))
    }

    func testTogglesAndEnumerationsAreChoices() throws {
        let balance = try XCTUnwrap(LV2Test.registry.descriptor(named: "lv2:http://gareus.org/oss/lv2/balance"))
        let mode = try XCTUnwrap(balance.parameters.first { $0.id == "unitygain" })
        XCTAssertEqual(mode.unit, .choice)
        XCTAssertTrue(mode.choices.contains("seesaw-equal-power"), "\(mode.choices)")
        let chain = try parse("lv2:balance:unitygain=seesaw-equal-power")
        XCTAssertEqual(chain.text, "lv2:http://gareus.org/oss/lv2/balance:unitygain=seesaw-equal-power")
        let fil4 = try XCTUnwrap(LV2Test.registry.descriptor(named: "lv2:http://gareus.org/oss/lv2/fil4#mono"))
        XCTAssertEqual(fil4.parameters.first { $0.id == "HighPass" }?.choices, ["off", "on"])
    }

    func testPresetsAreFoundByLabelOrURIAndWrittenAsTheirURI() throws {
        let byLabel = try parse("lv2:jx10:@preset=fretless bass")
        let uri = try XCTUnwrap(byLabel.entries[0].preset)
        XCTAssertTrue(uri.hasPrefix("http"), uri)
        XCTAssertEqual(byLabel.text, "lv2:http://drobilla.net/plugins/mda/JX10:@preset=<\(uri)>")
        XCTAssertEqual(try parse(byLabel.text), byLabel)
    }

    func testThePluginDetailShowsPortsParametersAndPresets() throws {
        let text = try LV2Test.registry.detailText(name: "lv2:jx10")
        XCTAssertTrue(text.hasPrefix("lv2:http://drobilla.net/plugins/mda/JX10 — MDA JX10 (instrument"), text)
        XCTAssertTrue(text.contains("MIDI in"), text)
        XCTAssertTrue(text.contains("Fretless Bass"), text)
        let amp = try LV2Test.registry.detailText(name: LV2Test.amp)
        XCTAssertTrue(amp.contains("gain") && amp.contains("-70 … 70") && amp.contains("dB"), amp)
        XCTAssertTrue(amp.contains("runs once per channel"), amp)
        XCTAssertThrowsError(try LV2Test.registry.detailText(name: "lv2:nonesuch"))
        // A bare short name is not a node name (as in chains), but the error points at it.
        XCTAssertThrowsError(try LV2Test.registry.detailText(name: "jx10")) { error in
            XCTAssertTrue("\(error)".contains("lv2:jx10"), "\(error)")
        }
    }
}
