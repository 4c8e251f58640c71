import XCTest
import TapedeckCore
@testable import TapedeckUI

/// The monitoring words (issue 44): what an armed track plays in off, input and auto, stopped
/// and rolling — auto hears the input while stopped and while recording, as Ardour's
/// auto-input does (RenderCore's monitoredInput) — the same on the message line and in the help.
final class MonitoringWordsTests: XCTestCase {
    func testTheHelpFitsEverySizeAndSaysWhatMonitoringDoes() {
        for (h, w) in ScreenLayoutTests.sizes {
            let model = ScreenLayoutTests.model()
            model.handle(.char("?"))
            let canvas = ScreenRenderer.render(model, height: h, width: w, glyphs: .unicode)
            XCTAssertTrue(canvas.text.contains("Keys (the keys file"), "\(w)x\(h):\n\(canvas.text)")
        }
        let help = HelpOverlay.panelLines.joined(separator: " ")
        XCTAssertTrue(help.contains("off: its disk only, the input never heard"), help)
        XCTAssertTrue(help.contains("input: the input, stopped and rolling, never its disk"), help)
        XCTAssertTrue(help.contains("auto: the input while stopped or recording"), help)
        XCTAssertTrue(HelpOverlay.panelLines.allSatisfy { $0.count <= HelpOverlay.columnWidth }, "no help line is cut at 80 columns")
    }

    func testTheMonitoringKeySaysWhatEachModeDoesStoppedAndRolling() {
        let model = ScreenLayoutTests.model()
        model.handle(.named(.down)); model.handle(.named(.down))
        var said: [String] = []
        for _ in 0..<3 {
            model.handle(.char("o"))
            said.append(model.message?.text ?? "")
        }
        XCTAssertEqual(said, ["\(ScreenLayoutTests.longName): monitoring auto: the input while stopped or recording, the disk while playing",
                              "\(ScreenLayoutTests.longName): monitoring off: the disk only, the input never heard",
                              "\(ScreenLayoutTests.longName): monitoring input: the input always (stopped and rolling), never the disk"])
    }
}
