import XCTest
import TapedeckCore
@testable import TapedeckUI

/// The master chain on the screen (issue 28): with the mixer's master strip selected, the
/// chain key types it, the chain panel shows and edits it like any chain, undo takes it back.
final class MasterChainKeyTests: XCTestCase {
    private func type(_ text: String, into model: ScreenModel) { for c in text { model.handle(.char(c)) } }

    func testTheMasterStripsChainIsTypedShownBypassedAndUndone() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("v"))
        for _ in 0..<model.session.tracks.count { model.handle(.named(.right)) }
        XCTAssertTrue(model.actsOnMaster, "the master strip is selected")
        model.handle(.char("c"))
        guard case .text(let input) = model.overlay else { return XCTFail("the chain key opens the chain's text") }
        XCTAssertTrue(input.prompt.hasPrefix("master chain"), input.prompt)
        type("comp:-12,limiter:-1", into: model)
        model.handle(.named(.enter))
        XCTAssertNil(model.overlay)
        XCTAssertEqual(model.session.masterChain, "comp:threshold=-12,limiter:ceiling=-1", "stored canonical")
        XCTAssertEqual(model.message?.text, "the master chain: comp:threshold=-12,limiter:ceiling=-1", "said, as stored")
        XCTAssertEqual(link.session.masterChain, model.session.masterChain, "the engine hears it")
        XCTAssertTrue(model.session.tracks.allSatisfy { $0.playbackChain.isEmpty }, "no track's chain was touched")

        // The chain panel edits the master's chain: its title, a node bypassed.
        while model.focus != .chain { model.handle(.named(.tab)) }
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        XCTAssertTrue(canvas.text.contains("Chain of master"), canvas.text)
        model.handle(.named(.down))
        model.handle(.char("b"))
        XCTAssertEqual(model.session.masterChain, "comp:threshold=-12,!limiter:ceiling=-1")
        // The master has no input chain to switch to: said, nothing changed.
        model.handle(.char("/"))
        XCTAssertEqual(model.message?.isError, true)
        model.handle(.char("u"))
        model.handle(.char("u"))
        XCTAssertEqual(model.session.masterChain, "", "undone step by step")
    }

    func testATypedChainIsSaidOnTheMessageLine() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("c"))
        type("hpf:80", into: model)
        model.handle(.named(.enter))
        let name = model.session.tracks[model.selectedTrack].name
        XCTAssertEqual(model.message?.text, "\(name)'s chain: hpf:cutoff=80")
        model.handle(.char("c"))
        for _ in 0..<20 { model.handle(.named(.backspace)) }
        model.handle(.named(.enter))
        XCTAssertEqual(model.session.tracks[model.selectedTrack].playbackChain, "")
        XCTAssertEqual(model.message?.text, "\(name)'s chain: none (the sound passes as it is)")
    }
}
