import XCTest
import TapedeckCore
@testable import TapedeckUI

/// A dialog's offered value (a new bus's name, a send's level) goes at the first character
/// typed, as a selected field's does; an editing key keeps it; a chain is offered to extend.
final class OfferedTextTests: XCTestCase {
    private func text(_ model: ScreenModel) -> TextInput? {
        if case .text(let input) = model.overlay { return input }
        return nil
    }

    func testTypingReplacesTheOfferedNameAndBackspaceKeepsItToEdit() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("B"))
        XCTAssertEqual(text(model)?.text, "Bus 1")
        XCTAssertEqual(text(model)?.offered, true)
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        XCTAssertTrue(canvas.rows.joined().contains { $0.role == .selected && $0.character == "B" }, "shown selected")
        model.typeKeys("Verb")
        XCTAssertEqual(text(model)?.text, "Verb", "not Bus 1Verb")
        model.handle(.named(.enter))
        model.handle(.char("s"))
        XCTAssertEqual(model.session.tracks.last?.name, "Verb")

        model.handle(.char("B"))
        model.handle(.named(.backspace))
        model.typeKeys("0")
        XCTAssertEqual(text(model)?.text, "Bus 0", "an edit keeps the rest")
        model.handle(.named(.esc))
    }

    func testAChainIsOfferedToExtend() {
        let model = ScreenModelTests.makeModel()
        var s = model.session
        s.tracks[0].playbackChain = "gain:gain=-3"
        model.owner.edit("setup") { $0 = s }
        model.handle(.char("c"))
        guard let input = text(model) else { return XCTFail("the chain dialog") }
        XCTAssertFalse(input.offered)
        model.typeKeys(",comp")
        XCTAssertEqual(text(model)?.text.hasSuffix("gain=-3,comp"), true, text(model)?.text ?? "")
    }
}
