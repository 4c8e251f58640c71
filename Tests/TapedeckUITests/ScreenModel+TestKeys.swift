import XCTest
@testable import TapedeckUI

/// Typing into the screen's dialogs as a person does, for the key tests.
extension ScreenModel {
    /// Each character of `text` as a key.
    func typeKeys(_ text: String) { for c in text { handle(.char(c)) } }

    /// Backspace over the open text dialog's whole text.
    func clearTyped() {
        guard case .text(let input) = overlay else { return }
        for _ in input.text { handle(.named(.backspace)) }
    }

    /// Picks `item` in the open choice with the arrows and Enter.
    func pickChoice(_ item: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .choice(let choice) = overlay, let i = choice.items.firstIndex(of: item) else {
            return XCTFail("no choice offering \(item): \(String(describing: overlay))", file: file, line: line)
        }
        for _ in 0..<choice.selected { handle(.named(.up)) }
        for _ in 0..<i { handle(.named(.down)) }
        handle(.named(.enter))
    }
}
